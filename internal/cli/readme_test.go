package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"go.uber.org/zap/zaptest"
)

// Every `engram rules run NAME` in README.md and docs/ runs on a running
// engram, in a code block or in prose.
func TestREADMERulesRun(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	for _, p := range append(pages, "../../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text = append(text, b...)
	}
	names := regexp.MustCompile("engram rules run ([^\\s`]+)").FindAllStringSubmatch(string(text), -1)
	if len(names) == 0 {
		t.Fatal("neither README.md nor docs/ has an `engram rules run` example")
	}
	a := runningEngram(t)
	for _, m := range names {
		if out, errOut, code := run(t, "rules", "run", m[1], "--nats-url", a.NATSURL(), "--data-dir", a.Config.DataDir); code != 0 {
			t.Errorf("the docs' `engram rules run %s`: exit %d, %q %q", m[1], code, out, errOut)
		}
	}
}

// runningEngram is an engram whose NATS listens on a free port, closed
// when the test ends.
func runningEngram(t *testing.T) *app.App {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = ""
	cfg.NATS.Listen = "127.0.0.1:0"
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
	return a
}
