package app

import (
	"crypto/rand"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"go.uber.org/zap/zaptest"
)

// Garbage in the middle of engram.db is caught at start, with the way
// out in the error; rebuild --replace builds a fresh read model from the
// stream whatever state the old file is in, and engram starts on it.
func TestCorruptReadModelIsRefusedAndRebuilt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	a := startApp(t, cfg, RoleRetriever|RoleIngest)
	var evs []any
	for i := range 200 {
		evs = append(evs, turnEvent("t-"+itoa(i), "ana", "s1", i, "user", strings.Repeat("kayaks and rivers ", 20)))
	}
	mustAccept(t, postBatch(t, a, evs...))
	seq := waitSettled(t, a)
	stopApp(t, a)

	f, err := os.OpenFile(cfg.ReadModelPath(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := f.Stat()
	if info.Size() < 64<<10 {
		t.Fatalf("read model is only %d bytes", info.Size())
	}
	garbage := make([]byte, 4096)
	_, _ = rand.Read(garbage)
	if _, err := f.WriteAt(garbage, info.Size()/2/4096*4096); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	b := New(cfg, RoleRetriever, zaptest.NewLogger(t))
	err = b.Open(t.Context())
	var ce *sqlite.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "rebuild --replace") {
		t.Fatalf("start on a corrupt read model: %v, want a CorruptError naming the way out", err)
	}

	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{Replace: true}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("rebuild --replace: %v", err)
	}
	if rep.LiveErr == "" || rep.Out != cfg.ReadModelPath() || rep.Target != seq {
		t.Fatalf("rebuild report: %+v", rep)
	}
	c := startApp(t, cfg, RoleRetriever)
	if n := countTurns(t, c, memory.Scope{Namespace: "default", User: "ana"}); n != 200 {
		t.Fatalf("%d turns after the rebuild, want 200", n)
	}
}
