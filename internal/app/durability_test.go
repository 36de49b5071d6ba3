package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap"
)

// The same event twice, and again after a restart, is one row.
func TestDuplicateEventIsOneRow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	scope := memory.Scope{Namespace: "default", User: "erin"}
	ev := turnEvent("dup-1", "erin", "s1", 0, "user", "remember the blue notebook")

	a := startApp(t, cfg, RoleAll)
	r1 := postEvent(t, a, ev)
	mustAccept(t, r1)
	r2 := postEvent(t, a, ev)
	mustAccept(t, r2)
	if got := r2.Body["duplicates"]; got != float64(1) {
		t.Fatalf("second post: duplicates = %v, want 1 (%s)", got, r2.Raw)
	}
	waitProjected(t, a, lastSeqOf(r1))
	if n := countTurns(t, a, scope); n != 1 {
		t.Fatalf("turns after two posts = %d, want 1", n)
	}
	stopApp(t, a)

	// After a restart the HTTP path still takes it (JetStream may drop it
	// as a duplicate, if its window still holds the id) ...
	b := startApp(t, cfg, RoleAll)
	mustAccept(t, postEvent(t, b, ev))
	// ... and when JetStream's window has passed, the event is stored again:
	// publishing it without a Nats-Msg-Id does the same. Apply must still
	// keep one row.
	raw, _ := json.Marshal(ev)
	if _, err := jsOf(b).Publish(t.Context(), stream.Subject("default", "erin", "turn.recorded"), raw); err != nil {
		t.Fatal(err)
	}
	marker := postEvent(t, b, turnEvent("after-1", "erin", "s1", 1, "user", "marker"))
	mustAccept(t, marker)
	waitProjected(t, b, lastSeqOf(marker))
	if n := countTurns(t, b, scope); n != 2 {
		t.Fatalf("turns after restart and re-post = %d, want 2 (the original and the marker)", n)
	}
	// Search lists a turn's neighbours too (as /v1/context does): the
	// duplicate shows as a second turn that holds the words.
	n := 0
	for _, h := range searchHTTP(t, b, "default", "erin", "blue notebook") {
		if h.Content == "remember the blue notebook" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("search after restart: %d turns hold the words, want 1", n)
	}
}

// A turn the agent records again under a new event id (same session and
// index) replaces the stored one instead of adding a second row.
func TestReRecordedTurnReplaces(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	mustAccept(t, postEvent(t, a, turnEvent("v1", "fay", "s1", 0, "user", "draft about tulips")))
	r := postEvent(t, a, turnEvent("v2", "fay", "s1", 0, "user", "final about roses"))
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
	if n := countTurns(t, a, memory.Scope{Namespace: "default", User: "fay"}); n != 1 {
		t.Fatalf("turns = %d, want 1", n)
	}
	if hits := searchHTTP(t, a, "default", "fay", "tulips"); len(hits) != 0 {
		t.Fatalf("old text still indexed: %+v", hits)
	}
	if hits := searchHTTP(t, a, "default", "fay", "roses"); len(hits) != 1 {
		t.Fatalf("new text not indexed")
	}
}

// The child process of TestKillBetweenAckAndProjection: an engram that
// ingests (and acknowledges) but does not project, so the kill is sure to
// land between the 202 and the projection.
func TestMain(m *testing.M) {
	if dir := os.Getenv("ENGRAM_TEST_CHILD_DIR"); dir != "" {
		cfg := config.Default()
		cfg.DataDir = dir
		cfg.HTTP.Addr = "127.0.0.1:0"
		cfg.NATS.Listen = ""
		roles := RoleIngest
		if os.Getenv("ENGRAM_TEST_CHILD_ROLES") == "all" {
			roles = RoleAll
		}
		a := New(cfg, roles, zap.NewNop())
		if err := a.Open(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		fmt.Println("LISTENING", a.HTTPAddr())
		select {} // until killed
	}
	os.Exit(m.Run())
}

// A SIGKILL after the 202 and before projection loses nothing: after a
// restart the event is searchable.
func TestKillBetweenAckAndProjection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd, addr := startChild(t, dir, "ingest")
	body := fmt.Sprintf(`{"specversion":"1.0","id":"k-1","source":"test","type":"turn.recorded","user":"gus",
		"data":{"session_id":"s1","turn_index":0,"role":"user","content":"%s"}}`, "我把护照放在书房的抽屉里")
	resp, err := http.Post("http://"+addr+"/v1/events", "application/cloudevents+json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	quiet.Close(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "engram.db")); err == nil {
		t.Fatalf("the child wrote a read model; the test no longer kills before projection")
	}

	a := startApp(t, testConfig(t, dir), RoleAll)
	waitProjected(t, a, 1)
	if hits := searchHTTP(t, a, "default", "gus", "护照"); len(hits) != 1 {
		t.Fatalf("after SIGKILL and restart: %d hits, want 1", len(hits))
	}
}

// startChild runs engram in a child process on dir with roles ("ingest"
// or "all"), to be killed, and returns it and its HTTP address.
func startChild(t *testing.T, dir, roles string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ENGRAM_TEST_CHILD_DIR="+dir, "ENGRAM_TEST_CHILD_ROLES="+roles)
	var stdout syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var addr string
	wait.Until(t, "child to listen", func() bool {
		line, ok := strings.CutPrefix(stdout.String(), "LISTENING ")
		addr = strings.TrimSpace(line)
		return ok && strings.HasSuffix(line, "\n")
	})
	return cmd, addr
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
