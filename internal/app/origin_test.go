package app

import (
	"context"
	"net/http"
	"strings"
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

// A MEMORY deleted and made again while engram was stopped is reported at
// the next start. The read model keeps the old stream's rows and applies
// nothing of the new one (whose sequences start over: applied from the
// old position, they would be skipped) until an operator accepts it;
// then it starts over from the new stream.
func TestRecreatedStreamWhileStopped(t *testing.T) {
	t.Parallel()
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
	if code, reason := probe(t, a, "/healthz"); code != http.StatusServiceUnavailable ||
		!strings.Contains(reason, "not the stream the read model was built from") {
		t.Fatalf("/healthz on a recreated stream: %d %q", code, reason)
	}
	if got := driftMetric(t, a, driftRecreated); got != "1" {
		t.Fatalf("engram_stream_drift{kind=recreated} %s, want 1", got)
	}
	if !searchable(t, a, "alpha") {
		t.Fatal("the read model dropped the old stream's turns by itself")
	}
	r := postEvent(t, a, turnEvent("new-beta", "ana", "s2", 0, "user", "beta 新的"))
	mustAccept(t, r)
	if got := lastSeqOf(r); got != 1 {
		t.Fatalf("new event at seq %d, want 1 (a new stream)", got)
	}
	if got, err := a.Store().LastSeq(t.Context()); err != nil || got != 3 {
		t.Fatalf("read model at seq %d (%v), want the old stream's 3", got, err)
	}

	stopApp(t, a)
	if _, err := AcceptStreams(t.Context(), cfg, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	a = startApp(t, cfg, RoleIngest|RoleRetriever)
	wait.Until(t, "the new stream's event in the read model", func() bool { return searchable(t, a, "beta") })
	if searchable(t, a, "alpha") {
		t.Fatal("the old stream's turns are still in the read model after the operator accepted the new one")
	}
	if code, reason := probe(t, a, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz once accepted: %d %q", code, reason)
	}
	assertRebuildEqualsLive(t, a)
}

// While engram runs, a recreated MEMORY is noticed and reported, the read
// model kept; once an operator accepts the new stream, the read model is
// rebuilt from it without a restart.
func TestRecreatedStreamWhileRunning(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a, _ := startWatched(t, cfg, RoleIngest|RoleRetriever, reportGrace)
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
	wait.Until(t, "the recreated stream reported", func() bool {
		code, reason := probe(t, a, "/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(reason, "not the stream the read model was built from")
	})
	r = postEvent(t, a, turnEvent("new-beta", "ana", "s2", 0, "user", "beta 新的"))
	mustAccept(t, r)
	if !searchable(t, a, "alpha") {
		t.Fatal("the read model dropped the old stream's turns by itself")
	}

	if _, err := stream.AcceptMemory(t.Context(), js); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the new stream's event in the read model", func() bool { return searchable(t, a, "beta") })
	if searchable(t, a, "alpha") {
		t.Fatal("the old stream's turns are still in the read model")
	}
	if got, err := a.Store().LastSeq(t.Context()); err != nil || got != 1 {
		t.Fatalf("read model at seq %d (%v), want 1", got, err)
	}
	wait.Until(t, "the report ended", func() bool { code, _ := probe(t, a, "/healthz"); return code == http.StatusOK })
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
