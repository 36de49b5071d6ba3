package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap/zaptest"
)

func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRulesValidate(t *testing.T) {
	t.Parallel()
	t.Run("the shipped rules", func(t *testing.T) {
		out, errOut, code := run(t, "rules", "validate", "../../rules")
		if code != 0 || !strings.Contains(out, "ok,") {
			t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
		}
	})
	t.Run("every problem, each with its line", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "bad.yaml"), `rules:
  - name: first
    on: session.endd
    do: [build_episode]
  - name: second
    schedule: "0 3 * * *"
    do:
      - buld_episode
`)
		out, errOut, code := run(t, "rules", "validate", dir)
		if code != 1 {
			t.Fatalf("exit %d, want 1; out %q", code, out)
		}
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`bad\.yaml:3:\d+: .*session\.endd`),
			regexp.MustCompile(`bad\.yaml:8:\d+: .*buld_episode.*did you mean build_episode`),
		} {
			if !want.MatchString(errOut) {
				t.Errorf("stderr %q does not match %s", errOut, want)
			}
		}
	})
	t.Run("broken YAML", func(t *testing.T) {
		path := writeFile(t, filepath.Join(t.TempDir(), "x.yaml"), "rules:\n  - name: a\n    on: [session.ended\n")
		_, errOut, code := run(t, "rules", "validate", path)
		if code != 1 || !regexp.MustCompile(`x\.yaml:\d+:`).MatchString(errOut) {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("usage", func(t *testing.T) {
		if _, _, code := run(t, "rules", "validate"); code != 2 {
			t.Fatalf("exit %d, want 2", code)
		}
	})
}

func TestRulesTest(t *testing.T) {
	t.Parallel()
	ev := writeFile(t, filepath.Join(t.TempDir(), "ended.json"), `{"specversion":"1.0","id":"e1","source":"agent",
		"type":"session.ended","user":"ana","data":{"session_id":"s1","message_count":5,"reason":"done"}}`)
	out, errOut, code := run(t, "rules", "test", "../../rules", "--event", ev)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"✓ consolidate_on_session_end",
		`do build_episode source="session_end"`,
		"data.message_count = 5, gte 3",
		"- episode_on_compression",
		"✓ extract_on_session_end",
		"2 of ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	short := writeFile(t, filepath.Join(t.TempDir(), "short.json"), `{"specversion":"1.0","id":"e2","source":"agent",
		"type":"session.ended","user":"ana","data":{"session_id":"s1","message_count":2}}`)
	out, _, _ = run(t, "rules", "test", "../../rules", "--event", short)
	// A short session gets no episode; its turns are still extracted.
	if !strings.Contains(out, "- consolidate_on_session_end") || !strings.Contains(out, "✓ extract_on_session_end") ||
		!strings.Contains(out, "1 of ") {
		t.Fatalf("a 2-message session fires:\n%s", out)
	}
	out, _, code = run(t, "rules", "test", "../../rules")
	if code != 0 || !strings.Contains(out, "weekly_dedupe") || !strings.Contains(out, "next: Mon ") {
		t.Fatalf("schedule listing (exit %d):\n%s", code, out)
	}
}

// A job runs now on a running engram, asked over NATS.
func TestRulesRun(t *testing.T) {
	t.Parallel()
	a := runningEngram(t)
	out, errOut, code := run(t, "rules", "run", "weekly", "--nats-url", a.NATSURL(), "--data-dir", a.Config.DataDir)
	if code != 0 || !strings.Contains(out, "ran weekly_dedupe, weekly_profile, maintenance_cap") ||
		!strings.Contains(out, "published nothing") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
	if _, errOut, code := run(t, "rules", "run", "nope", "--nats-url", a.NATSURL(), "--data-dir", a.Config.DataDir); code != 1 || !strings.Contains(errOut, "nope") {
		t.Fatalf("unknown job: exit %d, %q", code, errOut)
	}
}

// The fixtures of internal/migrate go in as events; a second run adds
// nothing; engram then serves what was migrated.
func TestMigrate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, errOut, code := run(t, "migrate", "myclaw", "../migrate/testdata/myclaw", "--user", "yang", "--data-dir", dir, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	m := regexp.MustCompile(`(\d+) events \((\d+) new, (\d+) already there\)`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" || m[1] != m[2] || m[3] != "0" {
		t.Fatalf("first run: %q", out)
	}
	out, _, code = run(t, "migrate", "myclaw", "--data-dir", dir, "../migrate/testdata/myclaw", "--user", "yang")
	again := regexp.MustCompile(`(\d+) events \((\d+) new, (\d+) already there\)`).FindStringSubmatch(out)
	if code != 0 || again == nil || again[2] != "0" || again[3] != m[1] {
		t.Fatalf("second run: %q", out)
	}
	out, _, code = run(t, "migrate", "openakita", "../migrate/testdata/openakita", "--user", "yang", "--data-dir", dir, "--quiet")
	if code != 0 || !strings.Contains(out, "skipped") {
		t.Fatalf("openakita: exit %d %q", code, out)
	}
	if _, _, code := run(t, "migrate", "myclaw", "../migrate/testdata/myclaw", "--data-dir", dir); code != 2 {
		t.Fatalf("no --user: exit %d, want 2", code)
	}

	cfg := config.Default()
	cfg.DataDir, cfg.HTTP.Addr, cfg.NATS.Listen = dir, "", ""
	a := app.New(cfg, app.RoleRetriever, zaptest.NewLogger(t))
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	scope := memory.Scope{Namespace: "default", User: "yang"}
	deadline := time.Now().Add(20 * time.Second)
	for {
		core, err := a.Store().CoreMemories(t.Context(), scope)
		days, _ := a.Store().DailySummaries(t.Context(), scope, "2025-06-01")
		turns, _ := a.Store().CountTurns(t.Context(), scope)
		if err == nil && len(core) > 3 && len(days) == 1 && turns > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("migrated state not served: core %d, daily %d, turns %d, %v", len(core), len(days), turns, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
