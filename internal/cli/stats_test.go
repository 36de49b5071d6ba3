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
	"go.uber.org/zap/zaptest"
)

// `engram stats` reads a running engram's figures with the config engram
// serve used: the address and an operator token come from it, no flag.
func TestStatsCommand(t *testing.T) {
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
		a.Close(ctx)
	})
	base := "http://" + a.HTTPAddr()
	req, _ := http.NewRequest("POST", base+"/v1/memories?wait=true", strings.NewReader(
		`{"user":"ana","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"The user likes tea","importance":0.6}`))
	req.Header.Set("Authorization", "Bearer tok-ops-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
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
	for _, want := range []string{"namespace default", "users     1", "memories  1", "active      1",
		"confirmation rate", "wrong-write rate      0.0%  (0 of 1 written", "retrieval hit rate", "memory-token share"} {
		if !strings.Contains(out, want) {
			t.Errorf("output has no %q:\n%s", want, out)
		}
	}
	// A namespace's own token is picked for it; a wrong token is refused.
	if _, errOut, code := run(t, "stats", "-config", conf, "-namespace", "acme"); code != 0 {
		t.Errorf("acme: exit %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, "stats", "-config", conf, "-namespace", "other", "-token", "tok-acme-0123456789"); code != 1 || !strings.Contains(errOut, "forbidden") {
		t.Errorf("wrong token: exit %d: %s", code, errOut)
	}
	if tok := tokenFor(cfg.HTTP.Tokens, "acme"); tok != "tok-acme-0123456789" {
		t.Errorf("token for acme = %q", tok)
	}
}
