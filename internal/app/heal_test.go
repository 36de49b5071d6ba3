package app

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

// When nats-server turns JetStream off (as it does on a full disk),
// /healthz says so with 503, and once there is room JetStream comes back
// by itself: ingest accepts and projects again, without a restart.
func TestJetStreamOffThenHealed(t *testing.T) {
	t.Parallel()
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

	(&healer{a: a, log: a.Log}).once()
	wait.For(t, "/healthz 200 again", func() error { return wait.Equal(do(t, "GET", base+"/healthz", "", nil, nil).Status, http.StatusOK) })
	r := postEvent(t, a, turnEvent("h-2", "hu", "s1", 2, "user", "after space came back"))
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
	if hits := searchHTTP(t, a, "default", "hu", "space came back"); len(hits) == 0 {
		t.Fatal("the event sent after the heal is not searchable")
	}
}

// mountTmpfs mounts a tmpfs of size on dir until the test ends, or skips
// the test where mounting is not allowed.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): this test needs root", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// freeBytes is the space left on dir's file system.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// fillFile writes n bytes to path (a sparse file would take no room).
func fillFile(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	chunk := make([]byte, 1<<20)
	for n > 0 {
		w := min(n, int64(len(chunk)))
		if _, err := f.Write(chunk[:w]); err != nil {
			t.Fatalf("fill %s: %v", path, err)
		}
		n -= w
	}
}

// A full disk: ingest answers 503 and loses nothing it acknowledged;
// /healthz and /readyz answer 503 naming the disk while nothing can be
// stored; once space returns, ingest accepts again within seconds, by
// itself; every acknowledged event is in the stream and the read model.
func TestDiskFullHeals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mountTmpfs(t, dir, "48m")
	cfg := testConfig(t, filepath.Join(dir, "data"))
	// Ingest and the read model's projector, a consumer that must resume
	// too; the extractor would spend seconds on the big turns, after.
	a := startApp(t, cfg, RoleIngest|RoleRetriever)
	base := "http://" + a.HTTPAddr()
	du := memory.Scope{Namespace: "default", User: "du"}

	// A file beside the data dir takes all but a MB; ingest fills the rest.
	filler := filepath.Join(dir, "filler")
	fillFile(t, filler, freeBytes(t, dir)-1<<20)
	text := strings.Repeat("the disk fills up slowly and then all at once ", 1000)
	var acked []int
	for i := 0; ; i++ {
		if i == 1000 {
			t.Fatal("the disk never filled")
		}
		r := postEvent(t, a, turnEvent(fmt.Sprint("full-", i), du.User, "s1", i, "user", fmt.Sprint(i, " ", text)))
		if r.Status == http.StatusAccepted {
			acked = append(acked, i)
			continue
		}
		if r.Status != http.StatusServiceUnavailable {
			t.Fatalf("ingest on a full disk: %d %s, want 503", r.Status, r.Raw)
		}
		break
	}
	if len(acked) == 0 {
		t.Fatal("nothing was accepted before the disk filled")
	}
	var health, ready httpResult
	wait.Until(t, "/healthz and /readyz to say 503 and name the disk", func() bool {
		health, ready = do(t, "GET", base+"/healthz", "", nil, nil), do(t, "GET", base+"/readyz", "", nil, nil)
		return health.Status == http.StatusServiceUnavailable && ready.Status == http.StatusServiceUnavailable &&
			strings.Contains(health.Raw, "no space left") && strings.Contains(ready.Raw, "no space left")
	})
	t.Logf("while full: /healthz %s", health.Raw)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	for i := len(acked) + 1; ; i++ {
		r := postEvent(t, a, turnEvent(fmt.Sprint("full-", i), du.User, "s1", i, "user", "after space came back"))
		if r.Status == http.StatusAccepted {
			acked = append(acked, i)
			break
		}
		if took := time.Since(freed); took > 10*time.Second {
			t.Fatalf("ingest still answers %d %s %v after space came back", r.Status, r.Raw, took)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("ingest accepted again %v after space came back", time.Since(freed).Round(time.Millisecond))
	wait.For(t, "/healthz and /readyz 200 again", func() error {
		return errors.Join(wait.Equal(do(t, "GET", base+"/healthz", "", nil, nil).Status, http.StatusOK),
			wait.Equal(do(t, "GET", base+"/readyz", "", nil, nil).Status, http.StatusOK))
	})

	waitSettled(t, a)
	turns, err := a.Store().RecentTurns(t.Context(), du, time.Unix(0, 0), 10000)
	if err != nil {
		t.Fatal(err)
	}
	have := map[int]bool{}
	for _, h := range turns {
		have[h.TurnIndex] = true
	}
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(stream.Subject(du.Namespace, du.User, events.TypeTurnRecorded)))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.State.Msgs; got < uint64(len(acked)) {
		t.Errorf("MEMORY holds %d of the user's events, want at least the %d acknowledged", got, len(acked))
	}
	for _, i := range acked {
		if !have[i] {
			t.Errorf("acknowledged turn %d is not in the read model (%d acknowledged, %d there)", i, len(acked), len(have))
		}
	}
}

// engram started on a read-only data dir says so, not that the dir is in
// use by another engram.
func TestReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mountTmpfs(t, dir, "4m")
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	var stderr bytes.Buffer
	code := serve("engram", RoleAll, []string{"--data-dir", dir, "--http-addr", "127.0.0.1:0", "--nats-listen", ""}, config.Default(), &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "is read-only") || strings.Contains(stderr.String(), "in use") {
		t.Fatalf("exit %d, said:\n%s\nwant a failure that says the data dir is read-only", code, stderr.String())
	}
}
