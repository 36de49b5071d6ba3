package app

import (
	"net/http"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// When nats-server turns JetStream off (as it does on a full disk),
// /healthz says so with 503, and once there is room JetStream comes back
// by itself: ingest accepts and projects again, without a restart.
func TestJetStreamOffThenHealed(t *testing.T) {
	a := New(testConfig(t, t.TempDir()), RoleAll, zaptest.NewLogger(t))
	a.healEvery = time.Hour // the test turns the crank itself
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	base := "http://" + a.HTTPAddr()
	mustAccept(t, postEvent(t, a, turnEvent("h-0", "hu", "s1", 0, "user", "before the disk filled")))

	if err := a.embedded.StopJetStream(); err != nil {
		t.Fatal(err)
	}
	if r := do(t, "GET", base+"/healthz", "", nil, nil); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("/healthz with JetStream off: %d %s, want 503", r.Status, r.Raw)
	}
	if r := postEvent(t, a, turnEvent("h-1", "hu", "s1", 1, "user", "while it is off")); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("ingest with JetStream off: %d %s, want 503", r.Status, r.Raw)
	}

	a.healOnce(a.Log)
	wait.For(t, "/healthz 200 again", func() error { return wait.Equal(do(t, "GET", base+"/healthz", "", nil, nil).Status, http.StatusOK) })
	r := postEvent(t, a, turnEvent("h-2", "hu", "s1", 2, "user", "after space came back"))
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
	if hits := searchHTTP(t, a, "default", "hu", "space came back"); len(hits) == 0 {
		t.Fatal("the event sent after the heal is not searchable")
	}
}
