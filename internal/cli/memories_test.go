package cli

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"go.uber.org/zap/zaptest"
)

// engram memories lists what is current, what was current at a time (by
// when each version was said) and a memory's history with both its
// times.
func TestMemoriesAsOfAndHistory(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DataDir, cfg.HTTP.Addr, cfg.NATS.Listen = t.TempDir(), "127.0.0.1:0", ""
	a := app.New(cfg, app.RoleAll, zaptest.NewLogger(t))
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	for _, body := range []string{
		`{"user":"mia","kind":"identity","category":"identity","subject":"user","predicate":"location","content":"User moved to Porto","importance":0.8,"said_at":"2025-11-02T09:00:00Z"}`,
		`{"user":"mia","kind":"identity","category":"identity","subject":"user","predicate":"location","content":"User lives in Lisbon","importance":0.8,"said_at":"2025-11-01T09:00:00Z"}`,
	} {
		resp, err := http.Post("http://"+a.HTTPAddr()+"/v1/memories", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		quiet.Close(resp.Body)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("add: %d", resp.StatusCode)
		}
	}
	addr := a.HTTPAddr()
	var out string
	for deadline := time.Now().Add(20 * time.Second); ; {
		out, _, _ = run(t, "memories", "-addr", addr, "-user", "mia", "-status", "all")
		if strings.Count(out, "\n") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("two memories never listed: %q", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	current, _, code := run(t, "memories", "-addr", addr, "-user", "mia")
	if code != 0 || !strings.Contains(current, "Porto") || strings.Contains(current, "Lisbon") || !strings.Contains(current, "said 2025-11-02 09:00") {
		t.Fatalf("current: exit %d, %q", code, current)
	}
	then, _, code := run(t, "memories", "-addr", addr, "-user", "mia", "-as-of", "2025-11-01T21:00:00Z")
	if code != 0 || !strings.Contains(then, "Lisbon") || strings.Contains(then, "Porto") {
		t.Fatalf("as of: exit %d, %q", code, then)
	}
	id := strings.Fields(then)[0]
	history, _, code := run(t, "memories", "-addr", addr, "-user", "mia", "-history", id)
	if code != 0 || !strings.Contains(history, "created    said 2025-11-01 09:00") || !strings.Contains(history, "superseded said 2025-11-02 09:00") {
		t.Fatalf("history: exit %d, %q", code, history)
	}
	if _, errOut, code := run(t, "memories", "-addr", addr); code != 2 || !strings.Contains(errOut, "usage") {
		t.Fatalf("without a user: exit %d, %q", code, errOut)
	}
}
