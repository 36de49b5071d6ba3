package app

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// canaryFiles counts the occurrences of canary in every file under dir.
func canaryFiles(t *testing.T, dir, canary string) (total int, where map[string]int) {
	t.Helper()
	return canaryFormsIn(t, dir, []string{canary})
}

// canaryFormsIn counts the occurrences of each of forms in every file
// under dir, by file and form.
func canaryFormsIn(t *testing.T, dir string, forms []string) (total int, where map[string]int) {
	t.Helper()
	// A running server writes a file aside and renames it over the old
	// one (JetStream's *.blk.tmp): one gone between the listing and its
	// reading may live on under its new name, so the walk starts over.
	for try := 0; ; try++ {
		var vanished bool
		total, where = 0, map[string]int{}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				vanished = true
				return nil
			}
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				vanished = true
				return nil
			}
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			for _, f := range forms {
				if n := bytes.Count(b, []byte(f)); n > 0 {
					where[rel+" "+strconv.Quote(f)] += n
					total += n
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !vanished {
			return total, where
		}
		if try == 10 {
			t.Fatalf("files of %s kept vanishing while they were read, 10 walks in a row", dir)
		}
	}
}

// canaryForms is every spelling of c that a file could hold: as given,
// folded (the full-text index folds case), stemmed (porter rewrites the
// end of a word: the word less its last letter is searched for), and for
// CJK each bigram the index stores and the JSON escape of the word.
func canaryForms(c string) []string {
	lower := []rune(strings.ToLower(c))
	forms := []string{c, string(lower), strings.ToUpper(c), string(lower[:len(lower)-1])}
	if r := []rune(c); r[0] >= 0x2E80 {
		var esc strings.Builder
		for i := range r {
			if i+1 < len(r) {
				forms = append(forms, string(r[i:i+2]))
			}
			fmt.Fprintf(&esc, `\u%04x`, r[i])
		}
		forms = append(forms, esc.String())
	}
	return forms
}

func describe(where map[string]int) string {
	var out []string
	for f, n := range where {
		out = append(out, f+": "+itoa(n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Three canaries — lower case, mixed case, Chinese — planted in every
// kind of record a user has (raw turns with tool calls, tool results and
// attachments, the extraction requests that carry them, extracted and
// added memories and their history, a pending memory, the episode, the
// scratchpad, a daily summary, the cards, a dead letter) are gone from
// every byte under the data dir after forget, in every form a file could
// hold them (the full-text index folds, stems and cuts CJK into bigrams);
// the receipt stays, a rebuild agrees and leaves none either, and another
// user keeps everything. With raw-turn retention on, the turns age out
// first (their index rows are merged away then) and forget erases the rest.
func TestForgetErasesEveryByte(t *testing.T) {
	t.Parallel()
	for _, retention := range []time.Duration{0, 2 * time.Second} {
		t.Run("retention="+retention.String(), func(t *testing.T) { testForgetErasesEveryByte(t, retention) })
	}
}

func testForgetErasesEveryByte(t *testing.T, retention time.Duration) {
	canaries := []string{"zebracanary", "QuokkaCanary", "鸭嘴兽金丝雀"}
	var forms []string
	for _, c := range canaries {
		forms = append(forms, canaryForms(c)...)
	}
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Retention.RawTurns = retention
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	plant := func(user, word string, n int) {
		t.Helper()
		session := "s" + itoa(n)
		id := func(what string) string { return user + "-" + session + "-" + what }
		tools := turnEvent(id("tools"), user, session, 2, "assistant", "Looked it up.")
		tools["data"].(map[string]any)["tool_calls"] = []any{map[string]any{"id": "c1", "name": "search", "input": map[string]any{"q": word + " docs"}}}
		tools["data"].(map[string]any)["tool_results"] = []any{map[string]any{"tool_call_id": "c1", "content": "found " + word + " in the wiki"}}
		tools["data"].(map[string]any)["attachments"] = []any{map[string]any{"name": "plan.pdf", "description": "the " + word + " plan",
			"transcription": "read the " + word + " plan"}}
		mustAccept(t, postBatch(t, a,
			turnEvent(id("0"), user, session, 0, "user", "Please deploy the billing service to Kubernetes for the "+word+" project."),
			turnEvent(id("1"), user, session, 1, "user", "I prefer "+word+" tea over coffee, and my name is "+word+"."),
			tools,
			turnEvent(id("3"), user, session, 3, "assistant", "Deployed "+word+" billing to Kubernetes; next I will add alerts."),
			endEvent(id("end"), user, session, 4)))
		r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(`{"user":"`+user+`","kind":"fact",`+
			`"category":"decision","subject":"project `+itoa(n)+`","predicate":"codename","content":"the codename is `+word+`","importance":0.9}`), nil)
		if r.Status != 202 {
			t.Fatalf("add memory: %d %s", r.Status, r.Raw)
		}
		mid := r.Body["memory_id"].(string)
		if r := do(t, "PATCH", base+"/v1/memories/"+mid+"?user="+user+"&wait=true", "application/json",
			[]byte(`{"content":"the codename is still `+word+`"}`), nil); r.Status != 202 {
			t.Fatalf("patch memory: %d %s", r.Status, r.Raw)
		}
		if r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(`{"user":"`+user+`","kind":"preference",`+
			`"category":"config","subject":"user","predicate":"maybe likes `+itoa(n)+`","content":"maybe likes `+word+`","confidence":0.7}`), nil); r.Status != 202 {
			t.Fatalf("add a pending memory: %d %s", r.Status, r.Raw)
		}
		if r := do(t, "PUT", base+"/v1/scratchpad?user="+user+"&wait=true", "application/json",
			[]byte(`{"content":"- ship `+word+` on friday"}`), nil); r.Status != 202 {
			t.Fatalf("put scratchpad: %d %s", r.Status, r.Raw)
		}
		pub := func(typ, eid string, data any) {
			t.Helper()
			e, err := events.NewDerived("test/agent", typ, eid, "default", user, time.Now().UTC(), data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := stream.NewPublisher(jsOf(a)).Publish(t.Context(), e); err != nil {
				t.Fatal(err)
			}
		}
		pub(events.TypeDailySummarized, id("day"), &events.DailySummary{Date: "2026-01-0" + itoa(n+1), Channel: "chat",
			Summary: "a day of " + word, RawTokens: 10, Source: events.SourceMigration})
		// A dead letter: an update of a memory that does not exist.
		content := "dead " + word
		pub(events.TypeMemoryUpdated, id("bad"), &events.MemoryUpdated{MemoryID: "m_missing", Content: &content})
	}
	for i, c := range canaries {
		plant("zed", c, i)
		plant("kim", "keepsake"+itoa(i), i)
	}
	waitSettled(t, a)
	zed := memory.Scope{Namespace: "default", User: "zed"}
	cards := consolidation.CardsPath(cfg.CardsPath(), zed)
	wait.Until(t, "zed's cards", func() bool {
		b, err := os.ReadFile(filepath.Join(cards, consolidation.UserCard))
		return err == nil && strings.Contains(string(b), canaries[0])
	})
	dls, err := stream.ListDeadLetters(t.Context(), jsOf(a), stream.DLQFilter{Subject: "mem.default.zed.>"})
	if err != nil || len(dls) == 0 {
		t.Fatalf("no dead letter planted for zed: %v", err)
	}
	if p, err := a.Store().Pending(t.Context(), zed, time.Now()); err != nil || len(p) == 0 {
		t.Fatalf("no pending memory planted for zed: %v", err)
	}
	if n, where := canaryFormsIn(t, dir, forms); n == 0 || len(where) < 3 {
		t.Fatalf("the canaries were planted in too few places: %s", describe(where))
	}
	if retention > 0 {
		wait.For(t, "zed's turns to age out", func() error { return wait.Equal(countTurns(t, a, zed), 0) })
	}

	r := do(t, "DELETE", base+"/v1/users/zed?namespace=default&reason=request", "", nil, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("forget: %d %s", r.Status, r.Raw)
	}
	if r.Body["events_erased"].(float64) == 0 || r.Body["dead_letters_erased"].(float64) == 0 || r.Body["read_model_scrubbed"] != true {
		t.Fatalf("forget report: %s", r.Raw)
	}
	for _, c := range canaries {
		if hits := searchHTTP(t, a, "default", "zed", c); len(hits) != 0 {
			t.Fatalf("zed is still found by %q: %+v", c, hits)
		}
	}
	if hits := searchHTTP(t, a, "default", "kim", "keepsake0"); len(hits) == 0 {
		t.Fatal("kim lost her memories")
	}
	seq := waitSettled(t, a)
	stopApp(t, a)

	if n, where := canaryFormsIn(t, dir, forms); n != 0 {
		t.Fatalf("after forget the canaries are still in %d places: %s", n, describe(where))
	}
	if n, _ := canaryFiles(t, dir, "keepsake0"); n == 0 {
		t.Fatal("kim's data is gone from the data dir")
	}
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq {
		t.Fatalf("rebuild after forget differs in %v (target %d, want %d)", rep.Diff, rep.Target, seq)
	}
	if n, where := canaryFormsIn(t, dir, forms); n != 0 {
		t.Fatalf("after rebuild the canaries are in %s", describe(where))
	}
}

// Forgetting takes an operator.
func TestForgetTakesAnOperator(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.HTTP.Tokens = map[string]string{"tenant-token-000000001": "default", "operator-token-0000001": "*"}
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	r := do(t, "DELETE", base+"/v1/users/zed", "", nil, map[string]string{"Authorization": "Bearer tenant-token-000000001"})
	if r.Status != http.StatusForbidden {
		t.Fatalf("a namespace token forgot a user: %d %s", r.Status, r.Raw)
	}
	r = do(t, "DELETE", base+"/v1/users/zed", "", nil, map[string]string{"Authorization": "Bearer operator-token-0000001"})
	if r.Status != http.StatusOK {
		t.Fatalf("the operator token: %d %s", r.Status, r.Raw)
	}
}

// A subject that spells a user otherwise than canonically ("%6Eb" for
// "nb") is refused, so no erasure by subject can miss an event.
func TestNonCanonicalSubjectRefused(t *testing.T) {
	t.Parallel()
	ev := `{"specversion":"1.0","id":"x1","source":"a","type":"turn.recorded","data":{"session_id":"s","turn_index":0,"role":"user","content":"hi"}}`
	if _, _, err := stream.Decode("mem.default.%6Eb.turn.recorded", nil, []byte(ev), 1<<20); err == nil {
		t.Fatal("a non-canonical user token was accepted")
	}
	if _, _, err := stream.Decode("mem.default.nb.turn.recorded", nil, []byte(ev), 1<<20); err != nil {
		t.Fatalf("the canonical subject: %v", err)
	}
}

// Forgotten while the workers are still busy with the user's session
// (its extraction and episode in flight): what they conclude afterwards
// is erased too, and the rebuild agrees.
func TestForgetWhileWorkersAreBusy(t *testing.T) {
	t.Parallel()
	const canary = "Quokkazv"
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	a := startApp(t, cfg, RoleAll)
	mustAccept(t, postBatch(t, a,
		turnEvent("q-0", "zed", "s1", 0, "user", "Please deploy the billing service for the "+canary+" project."),
		turnEvent("q-1", "zed", "s1", 1, "assistant", "Deploying "+canary+" now."),
		turnEvent("q-2", "zed", "s1", 2, "user", "I prefer "+canary+" tea, and my name is "+canary+"."),
		turnEvent("q-3", "zed", "s1", 3, "assistant", "Deployed "+canary+"."),
		endEvent("q-end", "zed", "s1", 4)))
	r := do(t, "DELETE", "http://"+a.HTTPAddr()+"/v1/users/zed", "", nil, nil)
	if r.Status != http.StatusOK || r.Body["workers_settled"] != true {
		t.Fatalf("forget: %d %s", r.Status, r.Raw)
	}
	seq := waitSettled(t, a)
	stopApp(t, a)
	if n, where := canaryFiles(t, dir, canary); n != 0 {
		t.Fatalf("after forget the canary is still in %d places: %s", n, describe(where))
	}
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq {
		t.Fatalf("rebuild after forget differs in %v (target %d, want %d)", rep.Diff, rep.Target, seq)
	}
}
