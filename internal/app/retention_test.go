package app

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

// rawTurnEvents counts the raw turn events MEMORY still holds.
func rawTurnEvents(t *testing.T, a *App) uint64 {
	t.Helper()
	return eventsOfTypes(t, a, stream.RawTurnTypes...)
}

// eventsOfTypes counts MEMORY's events of the given types, every user's.
func eventsOfTypes(t *testing.T, a *App, types ...string) uint64 {
	t.Helper()
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, typ := range types {
		info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(stream.SubjectPrefix+".*.*."+typ))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range info.State.Subjects {
			n += c
		}
	}
	return n
}

// A session nobody extracts (the quiet gap is minutes away, no session
// end) ages past the retention: it is extracted first, then its turns
// leave the stream and the read model, and the memory drawn from them
// stays and is recalled.
func TestRetentionExtractsThenExpires(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.Retention.RawTurns = 2 * time.Second
	a := startApp(t, cfg, RoleAll)
	ann := memory.Scope{Namespace: events.DefaultNamespace, User: "ann"}
	sent := postBatch(t, a,
		turnEvent("r-1", "ann", "s1", 0, "user", "我叫安娜，我喜欢喝绿茶"),
		turnEvent("r-2", "ann", "s1", 1, "assistant", "好的，记住了：绿茶。"))
	mustAccept(t, sent)
	waitProjected(t, a, lastSeqOf(sent))
	if got := countTurns(t, a, ann); got != 2 {
		t.Fatalf("turns=%d before they aged, want 2", got)
	}

	wait.For(t, "ann's turns to age out of the read model", func() error { return wait.Equal(countTurns(t, a, ann), 0) })
	// The receipt is applied after the extraction's result (stream order):
	// the memory is there the moment the turns are gone.
	mems, err := a.Store().Memories(t.Context(), memory.MemoryQuery{Scope: ann})
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) == 0 {
		t.Fatal("the turns aged out before anything was extracted from them")
	}
	wait.For(t, "raw turn events to leave the stream", func() error { return wait.Equal(rawTurnEvents(t, a), 0) })

	found := false
	for _, h := range searchHTTP(t, a, ann.Namespace, ann.User, "绿茶") {
		if h.Kind == "turn" {
			t.Fatalf("an expired turn is still found: %+v", h)
		}
		found = found || strings.Contains(h.Content, "绿茶")
	}
	if !found {
		t.Fatalf("the memory drawn from the expired turns is not recalled; memories: %+v", mems)
	}
	// No worker stumbled on the receipt.
	waitSettled(t, a)
	dlq, err := jsOf(a).Stream(t.Context(), stream.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := dlq.Info(t.Context()); err != nil || info.State.Msgs != 0 {
		t.Fatalf("dead letters: %+v (%v), want none", info.State, err)
	}
}

// After turns age out, a read model rebuilt from the stream equals the
// live one, with re-recorded turns, a compression snapshot, a session end
// and a malformed event among them, users in two partitions, and turns
// sent after the expiry.
func TestRetentionRebuildEqualsLive(t *testing.T) {
	// Not parallel: with a 1 s retention, a turn sent after the expiry
	// ages before the stop when other tests slow this one, and a stop
	// between retention deleting its events and publishing the receipt
	// leaves the live read model holding a turn the stream no longer has
	// (the next start's retention run heals it; the rebuild here differs).
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Retention.RawTurns = time.Second
	// Two partitions: each user's retention is run by the holder of theirs.
	cfg.Partitions = 2
	a := startApp(t, cfg, RoleAll)
	waitProjected(t, a, mixedWorkload(t, a))
	wait.Until(t, "every turn to age out", func() bool {
		st, err := sqlite.ReadStats(t.Context(), cfg.ReadModelPath(), "", "")
		return err == nil && st.Turns == 0
	})
	mustAccept(t, postEvent(t, a, turnEvent("late-1", "ann", "s0", 600, "user", "a turn after the expiry")))
	// It ages out too, within seconds: stop only once its expiry has run
	// to the end, not between. The turn leaves first; the extraction
	// request that carried it leaves a run later, with its own receipt.
	wait.Until(t, "the late turn and its extraction request to age out", func() bool {
		st, err := sqlite.ReadStats(t.Context(), cfg.ReadModelPath(), "", "")
		return err == nil && st.Turns == 0 &&
			rawTurnEvents(t, a)+eventsOfTypes(t, a, events.TypeExtractionRequested) == 0
	})
	waitSettled(t, a)
	stopApp(t, a)

	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 {
		t.Fatalf("rebuilt read model differs from live in %v\nlive:  %v\nbuilt: %v", rep.Diff, rep.Live, rep.Built)
	}
	if rep.Built["memories"] == "0:"+emptySum {
		t.Fatal("nothing was extracted before the turns aged out")
	}
}

// Retention 0 (the default) keeps every turn; with an age, a turn
// younger than it stays.
func TestRetentionKeepsWhatIsYoung(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	if cfg.Retention.RawTurns != 0 {
		t.Fatalf("default retention.raw_turns=%s, want 0 (off)", cfg.Retention.RawTurns)
	}
	a := startApp(t, cfg, RoleAll)
	ann := memory.Scope{Namespace: events.DefaultNamespace, User: "ann"}
	mustAccept(t, postEvent(t, a, turnEvent("k-1", "ann", "s1", 0, "user", "keep me")))
	wait.For(t, "the turn", func() error { return wait.Equal(countTurns(t, a, ann), 1) })
	waitSettled(t, a)

	// A run with an hour's age finds nothing stored before its cutoff.
	a.Config.Retention.RawTurns = time.Hour
	r := &retainer{a: a, log: a.Log, requested: map[string]time.Time{}}
	run, err := r.run(t.Context(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if run.Turns != 0 || run.Events != 0 {
		t.Fatalf("run with an hour's age: %+v, want nothing expired", run)
	}
	waitSettled(t, a)
	if got := countTurns(t, a, ann); got != 1 {
		t.Fatalf("turns=%d, want 1", got)
	}
	if got := rawTurnEvents(t, a); got != 1 {
		t.Fatalf("raw turn events=%d, want 1", got)
	}
}

// An export of a stream retention has worked on, imported into a fresh
// engram, gives the same read model: a receipt's bound is a sequence of
// the old stream, and means nothing to expire in the new one, where the
// turns it kept have other sequences.
func TestRetentionExportImport(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.Retention.RawTurns = time.Hour
	a := startApp(t, cfg, RoleAll)
	mustAccept(t, postBatch(t, a, conversation("a", "ana", "s1")...))
	waitSettled(t, a)
	mid := time.Now()
	mustAccept(t, postEvent(t, a, turnEvent("young", "ana", "s2", 0, "user", "a young turn")))
	waitSettled(t, a)
	// Runs an hour on: the conversation is older than the age, the young
	// turn is not.
	r := &retainer{a: a, log: a.Log, requested: map[string]time.Time{}}
	ana := memory.Scope{Namespace: events.DefaultNamespace, User: "ana"}
	wait.Until(t, "the conversation to age out", func() bool {
		if _, err := r.run(t.Context(), mid.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		waitSettled(t, a)
		return countTurns(t, a, ana) == 1
	})
	var buf bytes.Buffer
	if _, err := Export(t.Context(), jsOf(a), &buf, ExportFilter{}, 1<<20); err != nil {
		t.Fatal(err)
	}
	want, err := a.Store().ContentChecksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b := startApp(t, testConfig(t, t.TempDir()), RoleRetriever)
	if _, err := Import(t.Context(), jsOf(b), &buf, 1<<20); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, b)
	got, err := b.Store().ContentChecksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := want.Diff(got); len(d) != 0 {
		t.Fatalf("imported read model differs in %v\nwant %v\ngot  %v", d, want, got)
	}
}

// Once turns age out, their text is nowhere under the data dir: not in
// the raw turn events, not in the extraction requests that carried it to
// the extractor, not in the dead letters a malformed turn left, not in
// the read model. What was drawn from them stays.
func TestRetentionLeavesNoTurnText(t *testing.T) {
	t.Parallel()
	const canary = "Quorvexi"
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Retention.RawTurns = 2 * time.Second
	a := startApp(t, cfg, RoleAll)
	ann := memory.Scope{Namespace: events.DefaultNamespace, User: "ann"}
	sent := postBatch(t, a,
		turnEvent("r-1", "ann", "s1", 0, "user", "I prefer green tea over coffee."),
		turnEvent("r-2", "ann", "s1", 1, "assistant", "Noted: green tea. The "+canary+" kettle is on."))
	mustAccept(t, sent)
	// A turn only a client with worker rights could send: malformed, so
	// every consumer that reads turns dead-letters it.
	bad := `{"specversion":"1.0","type":"turn.recorded","source":"test/agent","id":"bad-1","subject":"ann",` +
		`"time":"` + time.Now().UTC().Format(time.RFC3339Nano) + `","datacontenttype":"application/json",` +
		`"namespace":"default","data":{"session_id":"s1","turn_index":-1,"role":"user","content":"the ` + canary + ` again"}}`
	if _, err := jsOf(a).Publish(t.Context(), stream.Subject("default", "ann", events.TypeTurnRecorded), []byte(bad)); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the malformed turn's dead letters", func() bool {
		dls, err := stream.ListDeadLetters(t.Context(), jsOf(a), stream.DLQFilter{})
		return err == nil && len(dls) > 0
	})
	wait.For(t, "ann's turns to age out", func() error { return wait.Equal(countTurns(t, a, ann), 0) })
	wait.For(t, "every message holding the canary to leave the streams", func() error { return wait.Equal(streamHolds(t, a, canary), 0) })
	mems, err := a.Store().Memories(t.Context(), memory.MemoryQuery{Scope: ann})
	if err != nil || len(mems) == 0 {
		t.Fatalf("nothing drawn from the expired turns stayed: %v", err)
	}
	waitSettled(t, a)
	stopApp(t, a)
	if n, where := canaryFiles(t, dir, canary); n != 0 {
		t.Fatalf("after retention the turns' text is still in %d places: %s", n, describe(where))
	}
}

// streamHolds counts the MEMORY and DEADLETTER messages whose body holds s.
func streamHolds(t *testing.T, a *App, s string) int {
	t.Helper()
	n := 0
	for _, name := range []string{stream.MemoryStream, stream.DeadLetterStream} {
		st, err := jsOf(a).Stream(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq; seq++ {
			m, err := st.GetMsg(t.Context(), seq)
			if err != nil {
				continue // deleted
			}
			if bytes.Contains(m.Data, []byte(s)) {
				n++
			}
		}
	}
	return n
}
