package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap/zaptest"
)

// With engram stopped, forget opens the data dir itself: the user's
// events (here, a dead-lettered one) are erased and the store holds no
// byte of them.
func TestForgetServerStopped(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	deadLetterOne(t, dir) // user ann, content "x", id bad-1; erased with the first receipt
	out, errOut, code := run(t, "forget", "--data-dir", dir, "--http-addr", "127.0.0.1:1", "--user", "ann", "--reason", "request 42")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"events_erased": 2`) || !strings.Contains(out, `"dead_letters_erased": 1`) {
		t.Fatalf("report: %s", out)
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte("bad-1")) {
			t.Errorf("%s still holds the event", path)
		}
		return nil
	})
	if _, errOut, code := run(t, "forget", "--data-dir", dir); code != 2 || !strings.Contains(errOut, "--user") {
		t.Fatalf("without --user: exit %d: %s", code, errOut)
	}
}

// export then import through the command line, into a fresh data dir:
// the event comes across, and a second import stores nothing.
func TestExportImportCommands(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	src, dst := t.TempDir(), t.TempDir()
	deadLetterOne(t, src) // one undecodable event: skipped by export
	js, closeFn, err := app.OpenOperator(t.Context(), config.Config{DataDir: src, ShutdownTimeout: 5 * time.Second}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": "good-1", "source": "test", "type": "turn.recorded",
		"namespace": "default", "user": "ann", "data": map[string]any{"session_id": "s", "turn_index": 0, "role": "user", "content": "hello there"}})
	if _, err := js.Publish(t.Context(), stream.Subject("default", "ann", "turn.recorded"), good); err != nil {
		t.Fatal(err)
	}
	closeFn()
	file := filepath.Join(t.TempDir(), "export.jsonl")
	if _, errOut, code := run(t, "export", "--data-dir", src, "--out", file); code != 0 || !strings.Contains(errOut, `"skipped":1`) {
		t.Fatalf("export: exit %d: %s", code, errOut)
	}
	if out, errOut, code := run(t, "import", "--data-dir", dst, file); code != 0 || !strings.Contains(out, `"events":1`) {
		t.Fatalf("import: exit %d: %s %s", code, out, errOut)
	}
	if out, errOut, code := run(t, "import", "--data-dir", dst, file); code != 0 || !strings.Contains(out, `"duplicates":1`) {
		t.Fatalf("import again: exit %d: %s %s", code, out, errOut)
	}
	if _, errOut, code := run(t, "import", "--data-dir", dst); code != 2 {
		t.Fatalf("import without a file: exit %d: %s", code, errOut)
	}
}

// With engram running on the data dir (its lock taken), dlq reaches it
// through its NATS listener: no --nats-url, no "locked".
func TestDLQServerRunningWithoutFlags(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	deadLetterOne(t, dir)
	cfg := config.Default()
	cfg.DataDir, cfg.HTTP.Addr, cfg.NATS.Listen, cfg.ShutdownTimeout = dir, "", "127.0.0.1:0", 10*time.Second
	a := app.New(cfg, app.RoleRetriever, zaptest.NewLogger(t))
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := a.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	unlock, err := app.LockDataDir(dir) // what engram serve holds
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	listen := strings.TrimPrefix(a.NATSURL(), "nats://")
	out, errOut, code := run(t, "dlq", "ls", "--data-dir", dir, "--nats-listen", listen)
	if code != 0 || !strings.Contains(out, "bad-1") {
		t.Fatalf("dlq ls against a running engram: exit %d: %s %s", code, out, errOut)
	}
}

// dlq rm erases a dead letter without redriving it.
func TestDLQRemove(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	deadLetterOne(t, dir)
	out, errOut, code := run(t, "dlq", "rm", "--data-dir", dir, "--all")
	if code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("dlq rm --all: exit %d: %s %s", code, out, errOut)
	}
	if out, _, code := run(t, "dlq", "ls", "--data-dir", dir); code != 0 || strings.Contains(out, "bad-1") {
		t.Fatalf("after rm, ls shows %s", out)
	}
	if _, errOut, code := run(t, "dlq", "rm", "--data-dir", dir, "1"); code != 1 || !strings.Contains(errOut, "no such dead letter") {
		t.Fatalf("rm of a removed one: exit %d: %s", code, errOut)
	}
}
