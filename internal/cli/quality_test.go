package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"go.uber.org/zap/zaptest"
)

// `engram stats` prints the quality figures: the read model's, and the
// running engram's context figures, reached with the config engram serve
// used (its address and a token covering the namespace), no flag.
func TestStatsQuality(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.HTTP.Tokens = map[string]string{"tok-acme-0123456789": "acme", "tok-ops-0123456789": "*"}
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
	base := "http://" + a.HTTPAddr()
	req, _ := http.NewRequest("POST", base+"/v1/memories?wait=true", strings.NewReader(
		`{"user":"ana","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"The user likes tea","importance":0.6}`))
	req.Header.Set("Authorization", "Bearer tok-ops-0123456789")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	quiet.Close(resp.Body)
	if resp.StatusCode != 202 {
		t.Fatalf("add memory: %d", resp.StatusCode)
	}

	conf := filepath.Join(t.TempDir(), "engram.yaml")
	if err := os.WriteFile(conf, []byte("data_dir: "+cfg.DataDir+"\nhttp:\n  addr: "+a.HTTPAddr()+
		"\n  tokens:\n    tok-acme-0123456789: acme\n    tok-ops-0123456789: \"*\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ENGRAM_TOKEN", "")
	out, errOut, code := run(t, "stats", "-config", conf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"quality (seed 004 §9):", "confirmation rate     0.0%  (0 confirmed of 0 decided)",
		"wrong-write rate      0.0%  (0 rejected per 0 confirmed)", "superseded soon     0 of 1 written, within 7 days",
		"retrieval hit rate", "context blocks the running engram served since it started", "memory-token share"} {
		if !strings.Contains(out, want) {
			t.Errorf("output has no %q:\n%s", want, out)
		}
	}
	if out, errOut, code := run(t, "stats", "-config", conf, "--json", "--window-days", "3"); code != 0 || !strings.Contains(out, `"window_days":3`) || !strings.Contains(out, `"context_served":`) {
		t.Errorf("json: exit %d: %s %s", code, out, errOut)
	}
	if tok := tokenFor(cfg.HTTP.Tokens, "acme"); tok != "tok-acme-0123456789" {
		t.Errorf("token for acme = %q", tok)
	}
	if tok := tokenFor(cfg.HTTP.Tokens, "other"); tok != "tok-ops-0123456789" {
		t.Errorf("token for other = %q", tok)
	}
}
