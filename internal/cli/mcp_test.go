package cli

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zaptest"
)

// TestMain lets a test run this binary as the engram command (for `engram
// mcp` on real stdin and stdout).
func TestMain(m *testing.M) {
	if os.Getenv("ENGRAM_TEST_RUN_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// `engram mcp`, started by an MCP host as a subprocess, serves the tools on
// its stdin and stdout against a running engram, with a token and a
// default user.
func TestMCPCommand(t *testing.T) {
	t.Parallel()
	const token = "cli-mcp-token-0123456789"
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.HTTP.Tokens = map[string]string{token: "*"}
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

	cmd := exec.Command(os.Args[0], "mcp", "--addr", a.HTTPAddr())
	cmd.Env = append(os.Environ(), "ENGRAM_TEST_RUN_MAIN=1", "ENGRAM_TOKEN="+token, "ENGRAM_USER=kai")
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("initialize engram mcp: %v", err)
	}
	defer quiet.Close(cs)
	if got := cs.InitializeResult().ServerInfo.Name; got != "engram" {
		t.Fatalf("server %q", got)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remember",
		Arguments: map[string]any{"kind": "fact", "category": "event", "content": "moves to Kyoto in April"}})
	if err != nil || res.IsError {
		t.Fatalf("remember: %v %+v", err, res)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "recall",
		Arguments: map[string]any{"query": "where am I moving?", "force": true}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Kyoto") {
		t.Fatalf("recall: %v %+v", err, res)
	}
}
