package app

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/wait"
)

// The Python client's tests (clients/python) pass against a real engram,
// with tokens on, and the example agent loop runs; skipped without python3.
func TestPythonClient(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	const token = "python-client-token-0123"
	cfg := testConfig(t, t.TempDir())
	cfg.HTTP.Tokens = map[string]string{token: "*"}
	a := startApp(t, cfg, RoleAll)
	env := []string{"ENGRAM_URL=http://" + a.HTTPAddr(), "ENGRAM_TOKEN=" + token, "PYTHONDONTWRITEBYTECODE=1", "PATH=/usr/bin:/bin"}

	cmd := exec.CommandContext(t.Context(), py, "-m", "unittest", "-v", "test_engram")
	cmd.Dir, cmd.Env = "../../clients/python", env
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "skipped") {
		t.Fatalf("python client tests: %v\n%s", err, out)
	}
	t.Logf("%s", out)

	// With no LLM the example answers nothing, and records only the
	// user's words: a placeholder of its own is not the assistant's.
	cmd = exec.CommandContext(t.Context(), py, "example_agent.py", "--user", "zoe", "--session", "ex-1",
		"I live in Porto and I like green tea", "what do you know about me?")
	cmd.Dir, cmd.Env = "../../clients/python", env
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "session ex-1 ended after 2 messages") ||
		!strings.Contains(string(out), "engram learned: ") {
		t.Fatalf("example agent: %v\n%s", err, out)
	}
	if hits := searchHTTPAuth(t, a, "zoe", "Porto", token); hits == 0 {
		t.Fatal("the example agent's turns are not in engram")
	}
	waitSettled(t, a)
	turns, err := a.Store().SessionTurns(t.Context(), memory.Scope{Namespace: "default", User: "zoe"}, "ex-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range turns {
		if tr.Role != "user" {
			t.Errorf("the example agent recorded a %s turn of its own with no LLM: %q", tr.Role, tr.Content)
		}
	}
	if len(turns) != 2 {
		t.Errorf("%d turns recorded, want the user's 2", len(turns))
	}
}

// The TypeScript client's tests (clients/typescript, node --test) pass
// against a real engram with tokens on; skipped without node.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	const token = "ts-client-token-012345678"
	cfg := testConfig(t, t.TempDir())
	cfg.HTTP.Tokens = map[string]string{token: "*"}
	a := startApp(t, cfg, RoleAll)
	cmd := exec.CommandContext(t.Context(), node, "--test", "engram.test.mjs")
	cmd.Dir = "../../clients/typescript"
	cmd.Env = []string{"ENGRAM_URL=http://" + a.HTTPAddr(), "ENGRAM_TOKEN=" + token, "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "# pass 6") {
		t.Fatalf("typescript client tests: %v\n%s", err, out)
	}
}

func searchHTTPAuth(t *testing.T, a *App, user, q, token string) int {
	t.Helper()
	var n int
	wait.Until(t, "example agent's turns searchable", func() bool {
		r := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/search?user="+user+"&q="+q, "", nil, map[string]string{"Authorization": "Bearer " + token})
		res, _ := r.Body["results"].([]any)
		n = len(res)
		return n > 0
	})
	return n
}
