package app

import (
	"bytes"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
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
	where = map[string]int{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(b, []byte(canary)); n > 0 {
			rel, _ := filepath.Rel(dir, path)
			where[rel] = n
			total += n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total, where
}

func describe(where map[string]int) string {
	var out []string
	for f, n := range where {
		out = append(out, f+": "+itoa(n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// A canary planted in every kind of record a user has — raw turns, an
// episode, memories and their history, the scratchpad, the cards, a dead
// letter — is gone from every byte under the data dir after forget; the
// receipt stays, a rebuild agrees, and another user keeps everything.
func TestForgetErasesEveryByte(t *testing.T) {
	const canary, kept = "Zorblaxqv", "Keepmeqv"
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	plant := func(user, word string) {
		t.Helper()
		evs := []any{
			turnEvent(user+"-0", user, "s1", 0, "user", "Please deploy the billing service to Kubernetes for the "+word+" project."),
			turnEvent(user+"-1", user, "s1", 1, "assistant", "Running the deploy of "+word+" now."),
			turnEvent(user+"-2", user, "s1", 2, "user", "I prefer "+word+" tea over coffee, and my name is "+word+"."),
			turnEvent(user+"-3", user, "s1", 3, "assistant", "Deployed "+word+" billing to Kubernetes; next I will add alerts."),
			endEvent(user+"-end", user, "s1", 4),
		}
		mustAccept(t, postBatch(t, a, evs...))
		r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(`{"user":"`+user+`","kind":"fact",`+
			`"category":"decision","subject":"project","predicate":"codename","content":"the codename is `+word+`","importance":0.9}`), nil)
		if r.Status != 202 {
			t.Fatalf("add memory: %d %s", r.Status, r.Raw)
		}
		id := r.Body["memory_id"].(string)
		if r := do(t, "PATCH", base+"/v1/memories/"+id+"?user="+user+"&wait=true", "application/json",
			[]byte(`{"content":"the codename is still `+word+`"}`), nil); r.Status != 202 {
			t.Fatalf("patch memory: %d %s", r.Status, r.Raw)
		}
		if r := do(t, "PUT", base+"/v1/scratchpad?user="+user+"&wait=true", "application/json",
			[]byte(`{"content":"- ship `+word+` on friday"}`), nil); r.Status != 202 {
			t.Fatalf("put scratchpad: %d %s", r.Status, r.Raw)
		}
		// A dead letter: an update of a memory that does not exist.
		content := "dead " + word
		e, err := events.NewDerived("test/agent", events.TypeMemoryUpdated, user+"-bad", "default", user, time.Now().UTC(),
			&events.MemoryUpdated{MemoryID: "m_missing", Content: &content})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.NewPublisher(a.JetStream()).Publish(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	plant("zed", canary)
	plant("kim", kept)
	waitSettled(t, a)
	cards := consolidation.CardsPath(cfg.CardsPath(), memory.Scope{Namespace: "default", User: "zed"})
	wait.Until(t, "zed's cards", func() bool {
		b, err := os.ReadFile(filepath.Join(cards, consolidation.UserCard))
		return err == nil && strings.Contains(string(b), canary)
	})
	dls, err := stream.ListDeadLetters(t.Context(), a.JetStream(), stream.DLQFilter{Subject: "mem.default.zed.>"})
	if err != nil || len(dls) == 0 {
		t.Fatalf("no dead letter planted for zed: %v", err)
	}
	if n, where := canaryFiles(t, dir, canary); n == 0 || len(where) < 3 {
		t.Fatalf("the canary was planted in too few places: %s", describe(where))
	}

	// Only an operator may forget: a namespace token may not.
	r := do(t, "DELETE", base+"/v1/users/zed?namespace=default&reason=request", "", nil, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("forget: %d %s", r.Status, r.Raw)
	}
	if r.Body["events_erased"].(float64) == 0 || r.Body["dead_letters_erased"].(float64) == 0 || r.Body["read_model_scrubbed"] != true {
		t.Fatalf("forget report: %s", r.Raw)
	}
	if hits := searchHTTP(t, a, "default", "zed", canary); len(hits) != 0 {
		t.Fatalf("zed is still found: %+v", hits)
	}
	if hits := searchHTTP(t, a, "default", "kim", kept); len(hits) == 0 {
		t.Fatal("kim lost her turns")
	}
	seq := waitSettled(t, a)
	stopApp(t, a)

	if n, where := canaryFiles(t, dir, canary); n != 0 {
		t.Fatalf("after forget the canary is still in %d places: %s", n, describe(where))
	}
	if n, _ := canaryFiles(t, dir, kept); n == 0 {
		t.Fatal("kim's data is gone from the data dir")
	}
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq {
		t.Fatalf("rebuild after forget differs in %v (target %d, want %d)", rep.Diff, rep.Target, seq)
	}
	if n, where := canaryFiles(t, dir, canary); n != 0 {
		t.Fatalf("after rebuild the canary is in %s", describe(where))
	}
}

// Forgetting takes an operator.
func TestForgetTakesAnOperator(t *testing.T) {
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
