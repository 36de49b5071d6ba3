package app

import (
	"context"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

// recreateMemory deletes MEMORY and creates it again, empty, as an
// operator would by mistake or on purpose.
func recreateMemory(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	if err := js.DeleteStream(t.Context(), stream.MemoryStream); err != nil {
		t.Fatalf("delete MEMORY: %v", err)
	}
	if err := stream.EnsureStreams(t.Context(), js, stream.StreamsConfig{}); err != nil {
		t.Fatal(err)
	}
}

// searchable reports whether user ana finds q.
func searchable(t *testing.T, a *App, q string) bool {
	t.Helper()
	return len(searchHTTP(t, a, "default", "ana", q)) > 0
}

// The read model follows the stream it has now: after MEMORY is deleted
// and recreated while engram is stopped, the new events are applied (not
// skipped because their sequences are below the old position) and the
// old stream's are gone from the read model as from the stream.
func TestRecreatedStreamWhileStopped(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleIngest|RoleRetriever)
	for i, word := range []string{"alpha", "gamma", "delta"} {
		r := postEvent(t, a, turnEvent("old-"+word, "ana", "s1", i, "user", word+" 旧的"))
		mustAccept(t, r)
		waitProjected(t, a, lastSeqOf(r))
	}
	stopApp(t, a)

	js, closeNATS, err := OpenOperator(t.Context(), cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	recreateMemory(t, js)
	closeNATS()

	a = startApp(t, cfg, RoleIngest|RoleRetriever)
	r := postEvent(t, a, turnEvent("new-beta", "ana", "s2", 0, "user", "beta 新的"))
	mustAccept(t, r)
	if got := lastSeqOf(r); got != 1 {
		t.Fatalf("new event at seq %d, want 1 (a new stream)", got)
	}
	wait.Until(t, "the new stream's event in the read model", func() bool { return searchable(t, a, "beta") })
	if searchable(t, a, "alpha") {
		t.Fatal("the old stream's turns are still in the read model")
	}
	assertRebuildEqualsLive(t, a)
}

// While engram runs, a recreated MEMORY is noticed and the read model is
// rebuilt from it.
func TestRecreatedStreamWhileRunning(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	a := New(cfg, RoleIngest|RoleRetriever, zaptest.NewLogger(t))
	a.originEvery = 10 * time.Millisecond
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	r := postEvent(t, a, turnEvent("old-alpha", "ana", "s1", 0, "user", "alpha 旧的"))
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
	r = postEvent(t, a, turnEvent("old-gamma", "ana", "s1", 1, "user", "gamma 旧的"))
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))

	op, err := stream.Connect(stream.ConnConfig{Name: "operator",
		NKey: (&stream.Auth{Dir: AuthDir(cfg)}).SeedFile(stream.RoleOperator, "")}, a.embedded.ConnectOption())
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	js, err := jetstream.New(op)
	if err != nil {
		t.Fatal(err)
	}
	recreateMemory(t, js)

	r = postEvent(t, a, turnEvent("new-beta", "ana", "s2", 0, "user", "beta 新的"))
	mustAccept(t, r)
	wait.Until(t, "the new stream's event in the read model", func() bool { return searchable(t, a, "beta") })
	if searchable(t, a, "alpha") {
		t.Fatal("the old stream's turns are still in the read model")
	}
	if got, err := a.Store().LastSeq(t.Context()); err != nil || got != 1 {
		t.Fatalf("read model at seq %d (%v), want 1", got, err)
	}
}

// assertRebuildEqualsLive stops a and checks that `engram rebuild` finds
// the live read model equal to the stream's replay.
func assertRebuildEqualsLive(t *testing.T, a *App) {
	t.Helper()
	waitSettled(t, a)
	stopApp(t, a)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rep, err := Rebuild(ctx, a.Config, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) > 0 {
		t.Fatalf("rebuild differs from live in %v", rep.Diff)
	}
}
