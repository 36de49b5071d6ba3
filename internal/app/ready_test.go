package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/wait"
)

// /readyz stays 503 while the projector replays the stream into an empty
// read model, and says 200 only once it has caught up; /healthz says the
// process is alive all along.
func TestReadyz(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := startApp(t, testConfig(t, dir), RoleAll)
	var evs []any
	for i := range 300 {
		evs = append(evs, turnEvent(fmt.Sprint("r-", i), "ana", "s1", i, "user", fmt.Sprint("turn number ", i)))
	}
	r := postBatch(t, a, evs...)
	mustAccept(t, r)
	target := lastSeqOf(r)
	waitProjected(t, a, target)
	stopApp(t, a)
	for _, f := range []string{"engram.db", "engram.db-wal", "engram.db-shm"} {
		if err := os.Remove(dir + "/" + f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}

	b := startApp(t, testConfig(t, dir), RoleAll)
	base := "http://" + b.HTTPAddr()
	if r := do(t, "GET", base+"/healthz", "", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("/healthz during replay: %d %s", r.Status, r.Raw)
	}
	wait.Until(t, "/readyz 200", func() bool {
		r := do(t, "GET", base+"/readyz", "", nil, nil)
		if r.Status == http.StatusServiceUnavailable {
			if !strings.Contains(r.Raw, "catching up") {
				t.Fatalf("/readyz 503 reason: %s", r.Raw)
			}
			return false
		}
		if r.Status != http.StatusOK {
			t.Fatalf("/readyz: %d %s", r.Status, r.Raw)
		}
		last, err := b.Store().LastSeq(t.Context())
		if err != nil || last < target {
			t.Fatalf("/readyz said ready with %d of %d events applied (%v)", last, target, err)
		}
		return true
	})

	// A read model behind the stream's start position is not ready. (The
	// stream holds the rules' readings of the turns too.)
	applied := waitSettled(t, b)
	b.catchUp.done.Store(false)
	b.catchUp.target = applied + 1000
	r = do(t, "GET", base+"/readyz", "", nil, nil)
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Raw, fmt.Sprintf("%d of %d events applied", applied, applied+1000)) {
		t.Fatalf("/readyz behind: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "GET", base+"/healthz", "", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("/healthz: %d %s", r.Status, r.Raw)
	}
}

// A worker loop that ends while the process runs — by a panic, or by
// returning — turns /readyz red, naming it and saying why; the process
// goes on, and /healthz stays green (it is alive, one part of it is not
// working).
func TestStoppedWorkerTurnsReadinessRed(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	base := "http://" + a.HTTPAddr()
	wait.For(t, "/readyz 200", func() error { return wait.Equal(do(t, "GET", base+"/readyz", "", nil, nil).Status, http.StatusOK) })

	a.goWorker(t.Context(), "tester", func(context.Context) error {
		var m map[string]int
		m["x"]++ //nolint:staticcheck // the panic is the test
		return nil
	})
	a.goWorker(t.Context(), "quitter", func(context.Context) error { return errors.New("lost its consumer") })
	var last httpResult
	wait.Until(t, "/readyz to name both stopped workers", func() bool {
		last = do(t, "GET", base+"/readyz", "", nil, nil)
		return last.Status == http.StatusServiceUnavailable && strings.Contains(last.Raw, "quitter") && strings.Contains(last.Raw, "tester")
	})
	for _, want := range []string{"worker tester stopped: panic: assignment to entry in nil map", "worker quitter stopped: lost its consumer"} {
		if !strings.Contains(last.Raw, want) {
			t.Errorf("/readyz = %s, want it to say %q", last.Raw, want)
		}
	}
	if r := do(t, "GET", base+"/healthz", "", nil, nil); r.Status != http.StatusOK {
		t.Errorf("/healthz = %d %s, want 200", r.Status, r.Raw)
	}
	mustAccept(t, postEvent(t, a, turnEvent("w-0", "wu", "s1", 0, "user", "still taking events")))
}
