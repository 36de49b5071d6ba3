package app

import (
	"fmt"
	"testing"

	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Issue 10: an important memory is announced once, whatever the restarts.
// Each run extracts the same fact again under a new request (a new session
// saying it, as a crashed batcher's recovery or a compression would); the
// announcement's id is derived from the fact and the read model is asked
// first, so the stream holds one memory.write.important for it.
func TestImportantAnnouncedOnceAcrossRestarts(t *testing.T) {
	t.Parallel()
	// Five restarts find an announcement repeated by a restart; the soak
	// (go test -tags soak) does fifty, a minute or two on two cores.
	restarts := 5
	if soakTag {
		restarts = 50
	}
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	subject := stream.Subject("default", "lu", "memory.write.important")
	count := func(a *App) uint64 {
		t.Helper()
		s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(subject))
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Subjects[subject]
	}
	for i := range restarts + 1 {
		a := New(cfg, RoleAll, zap.NewNop())
		if err := a.Open(t.Context()); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		session := fmt.Sprintf("s%d", i)
		mustAccept(t, postBatch(t, a, turnEvent("t-"+session, "lu", session, 0, "user", "我叫陆明"),
			endEvent("e-"+session, "lu", session, 1)))
		waitSettled(t, a)
		got := count(a)
		stopApp(t, a)
		if got != 1 {
			t.Fatalf("after run %d: %d memory.write.important for one memory, want 1", i, got)
		}
	}
}
