package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With engram stopped, forget opens the data dir itself: the user's
// events (here, a dead-lettered one) are erased and the store holds no
// byte of them.
func TestForgetServerStopped(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	deadLetterOne(t, dir) // user ann, content "x", id bad-1
	out, errOut, code := run(t, "forget", "--data-dir", dir, "--http-addr", "127.0.0.1:1", "--user", "ann", "--reason", "request 42")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `"events_erased": 1`) || !strings.Contains(out, `"dead_letters_erased": 1`) {
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
