package cli

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"go.uber.org/zap/zaptest"
)

// engram health, the image's healthcheck, passes against a running
// engram and fails, saying where it asked, against nothing.
func TestHealth(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.Listen = ""
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
	for _, probe := range []struct{ flag, want string }{{"", "is live"}, {"--ready", "is ready"}} {
		args := []string{"health", "--addr", a.HTTPAddr()}
		if probe.flag != "" {
			args = append(args, probe.flag)
		}
		out, errOut, code := run(t, args...)
		if code != 0 || !strings.Contains(out, probe.want) {
			t.Errorf("engram %s: exit %d, %q %q; want 0 and %q", strings.Join(args, " "), code, out, errOut, probe.want)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	quiet.Close(ln) // only its port is wanted, free
	if _, errOut, code := run(t, "health", "--addr", closed, "--timeout", "2s"); code != 1 || !strings.Contains(errOut, closed) {
		t.Errorf("engram health against nothing: exit %d, %q; want 1 naming %s", code, errOut, closed)
	}
}
