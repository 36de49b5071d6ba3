package app

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/secrets/corpus"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap/zaptest"
)

// turnCounts is how many rows the read model holds per turn content.
func turnCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	rows, err := db.QueryContext(t.Context(), `SELECT content, count(*) FROM turns GROUP BY content`)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(rows)
	out := map[string]int{}
	for rows.Next() {
		var c string
		var n int
		if err := rows.Scan(&c, &n); err != nil {
			t.Fatal(err)
		}
		out[c] = n
	}
	return out
}

// An event that fails in the read model in the middle of a batch the
// ingest feed applies early loses and duplicates nothing: the feed's run
// is rolled back whole, the projector's consumer applies the others in
// their turn and dead-letters the failing one, once.
func TestFeedFailureMidBatch(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	if a.feed == nil {
		t.Fatal("the single binary has no ingest feed")
	}
	// A fault inside the database for one row only (a corrupt page under
	// one insert, say).
	db, err := sql.Open("sqlite", cfg.ReadModelPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TRIGGER fault BEFORE INSERT ON turns WHEN NEW.content = 'boom'
		BEGIN SELECT RAISE(ABORT, 'injected fault'); END`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	contents := []string{"one", "two", "boom", "four", "five"}
	var evs []any
	for i, c := range contents {
		evs = append(evs, turnEvent(fmt.Sprintf("f-%d", i), "fay", "s1", i, "user", c))
	}
	mustAccept(t, postBatch(t, a, evs...))
	r := postBatch(t, a, turnEvent("f-5", "fay", "s1", 5, "user", "six"), turnEvent("f-6", "fay", "s1", 6, "user", "seven"))
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
	waitSettled(t, a)

	got := turnCounts(t, cfg.ReadModelPath())
	for _, c := range []string{"one", "two", "four", "five", "six", "seven"} {
		if got[c] != 1 {
			t.Errorf("turn %q applied %d times, want once", c, got[c])
		}
	}
	if got["boom"] != 0 || len(got) != 6 {
		t.Errorf("turns = %v, want the six others once each", got)
	}
	dlq, err := jsOf(a).Stream(t.Context(), stream.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := dlq.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("%d dead letters, want the failing event's one", info.State.Msgs)
	}
	m, err := dlq.GetLastMsgForSubject(t.Context(), "dlq.projector-local."+stream.Subject("default", "fay", "turn.recorded"))
	if err != nil {
		t.Fatalf("the failing event is not dead-lettered by the projector: %v", err)
	}
	if reason := m.Header.Get(stream.HeaderDLQReason); !strings.Contains(reason, "injected fault") {
		t.Fatalf("dead letter reason %q does not name the fault", reason)
	}
}

// A SIGKILL while the feed is applying a stream of acknowledged batches
// loses and duplicates nothing: after a restart each event is in the read
// model once.
func TestFeedKillMidBatch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd, addr := startChild(t, dir, "all")
	const batches, per = 4, 250
	for b := range batches {
		var sb strings.Builder
		sb.WriteString("[")
		for i := range per {
			if i > 0 {
				sb.WriteString(",")
			}
			n := b*per + i
			fmt.Fprintf(&sb, `{"specversion":"1.0","id":"k-%d","source":"test","type":"turn.recorded","user":"kim",
				"data":{"session_id":"s%d","turn_index":%d,"role":"user","content":"turn number %d"}}`, n, n/20, n%20, n)
		}
		sb.WriteString("]")
		resp, err := http.Post("http://"+addr+"/v1/events", "application/cloudevents-batch+json", strings.NewReader(sb.String()))
		if err != nil {
			t.Fatal(err)
		}
		quiet.Close(resp.Body)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("batch %d: status %d", b, resp.StatusCode)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	cfg := testConfig(t, dir)
	a := startApp(t, cfg, RoleAll)
	// The stream holds the rules' readings of the turns too: wait for all
	// of it, not for the turns' count of sequences.
	waitSettled(t, a)
	if n := countTurns(t, a, memory.Scope{Namespace: "default", User: "kim"}); n != batches*per {
		t.Fatalf("%d turns after SIGKILL and restart, want %d", n, batches*per)
	}
	got := turnCounts(t, cfg.ReadModelPath())
	for n := range batches * per {
		if c := got[fmt.Sprintf("turn number %d", n)]; c != 1 {
			t.Fatalf("turn %d applied %d times, want once", n, c)
		}
	}
}

// The feed applies the events this process validated without decoding
// them again (stream.Stored's Data): what it applies is what the stream
// holds, secrets masked at ingest included, so that a rebuild from the
// stream equals it; and an invalid event is still refused, by every
// entry, before it is stored.
func TestFeedAppliesWhatTheStreamHolds(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	cases := corpus.Secrets()
	var evs []any
	for i, c := range cases[:4] {
		evs = append(evs, turnEvent(fmt.Sprintf("s-%d", i), "sue", "s1", i, "user", c.Text))
	}
	evs = append(evs, turnEvent("s-zh", "sue", "s1", 10, "assistant", "我们决定用 Postgres 16 做主库"))
	mustAccept(t, postBatch(t, a, evs...))
	mustAccept(t, postEvent(t, a, turnEvent("s-one", "sue", "s2", 0, "user", "my token is "+cases[0].Secret)))
	r := do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events", "text/plain", []byte("the deploy key is "+cases[1].Secret),
		map[string]string{"Ce-Specversion": "1.0", "Ce-Id": "s-bin", "Ce-Source": "test/agent", "Ce-Type": "turn.recorded",
			"Ce-User": "sue", "Content-Type": "application/json"})
	if r.Status != 400 {
		t.Fatalf("binary-mode event with a text body: %d %s, want 400", r.Status, r.Raw)
	}
	bin, _ := json.Marshal(map[string]any{"session_id": "s3", "turn_index": 0, "role": "user",
		"content": "the deploy key is " + cases[1].Secret})
	r = do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events", "application/json", bin,
		map[string]string{"Ce-Specversion": "1.0", "Ce-Id": "s-bin", "Ce-Source": "test/agent", "Ce-Type": "turn.recorded",
			"Ce-User": "sue"})
	mustAccept(t, r)
	seq := lastSeqOf(r)

	// Invalid, by each HTTP entry: refused with a named error, not stored.
	bad := turnEvent("s-bad", "sue", "s1", -1, "user", "x")
	for name, r := range map[string]httpResult{"structured": postEvent(t, a, bad), "batch": postBatch(t, a, evs[0], bad)} {
		if r.Status != 400 || !strings.Contains(r.Raw, "turn_index") {
			t.Errorf("%s: invalid event answered %d %s, want 400 naming turn_index", name, r.Status, r.Raw)
		}
	}
	badBin, _ := json.Marshal(map[string]any{"session_id": "s3", "turn_index": -1, "role": "user", "content": "x"})
	r = do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events", "application/json", badBin,
		map[string]string{"Ce-Specversion": "1.0", "Ce-Id": "s-bad-bin", "Ce-Source": "test/agent", "Ce-Type": "turn.recorded",
			"Ce-User": "sue"})
	if r.Status != 400 || !strings.Contains(r.Raw, "turn_index") {
		t.Errorf("binary: invalid event answered %d %s, want 400 naming turn_index", r.Status, r.Raw)
	}

	waitProjected(t, a, seq)
	// The feed and the projector's consumer race for each event: the
	// message can reach the consumer before its publisher has offered it
	// to the feed. Whichever applies it, the feed must have applied some;
	// on a loaded machine the consumer can win a few events' every race,
	// so more are sent until the feed has had its share.
	for i := 0; a.feed.applied.Load() == 0 && i < 5; i++ {
		var more []any
		for j := range 50 {
			more = append(more, turnEvent(fmt.Sprintf("s-more-%d-%d", i, j), "sue", fmt.Sprintf("m%d", i), j, "assistant", "more"))
		}
		r := postBatch(t, a, more...)
		mustAccept(t, r)
		waitProjected(t, a, lastSeqOf(r))
	}
	if a.feed.applied.Load() == 0 {
		t.Fatalf("the feed applied nothing: the test did not exercise it")
	}
	waitSettled(t, a)
	// After the last accepted event come only engram's own conclusions
	// (the rules' readings of the turns), never a refused event.
	for _, m := range readStream(t, jsOf(a), "mem.>") {
		if m.Event.ID() == "s-bad" || m.Event.ID() == "s-bad-bin" {
			t.Fatalf("a refused event was stored: %s %s", m.Event.ID(), m.Subject)
		}
	}
	stopApp(t, a)
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 {
		t.Fatalf("the read model the feed built differs from the stream's in %v\nlive:  %v\nbuilt: %v", rep.Diff, rep.Live, rep.Built)
	}
	db, err := sql.Open("sqlite", cfg.ReadModelPath())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM turns WHERE content LIKE '%[secret:%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("%d turns hold a masked secret, want the masked ones (the feed applied data from before masking?)", n)
	}
}
