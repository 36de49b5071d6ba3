package app

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/llm/llmtest"
)

// langchainDeps are what clients/langchain's tests and example need from
// npm, at the versions its package.json names.
var langchainDeps = map[string]string{"@langchain/core": "1.4.0", "@langchain/openai": "1.6.0"}

// The LangChain.js integration (clients/langchain) against a real engram
// and a scripted OpenAI-compatible model: its tests (the history records
// turns and engram learns from them at once; the retriever's Documents in
// a chain whose model sees them), then the example agent loop. Skipped,
// saying why, without node and npm or the npm registry.
func TestLangChainAdapter(t *testing.T) {
	node, dir := nodeModules(t, langchainDeps, map[string]string{
		"@engramhq/engram":    "../../clients/typescript",
		"@engramhq/langchain": "../../clients/langchain",
	})
	srv := llmtest.New(t)
	const answer = "You like green tea."
	srv.Reply(func(llmtest.ChatRequest) string { return answer })
	const token = "langchain-token-0123456789"
	cfg := testConfig(t, t.TempDir())
	cfg.HTTP.Tokens = map[string]string{token: "*"}
	a := startApp(t, cfg, RoleAll)
	env := []string{"ENGRAM_URL=http://" + a.HTTPAddr(), "ENGRAM_TOKEN=" + token, "LLM_BASE_URL=" + srv.Config().BaseURL,
		"LLM_MODEL=" + srv.Config().Model, "LLM_ANSWER=" + answer}

	copyInto(t, dir, "../../clients/langchain/index.test.mjs")
	nodeTest(t, node, dir, "index.test.mjs", 4, env...)
	var chained bool
	for _, r := range srv.Requests() {
		if strings.Contains(r.LastUser(), "(langchain-chain)") {
			chained = true
			if !strings.Contains(r.System(), "green tea") {
				t.Errorf("the chain's model did not get engram's memory:\n%s", r.Prompt())
			}
		}
	}
	if !chained {
		t.Fatalf("the chain never asked the model: %d requests", len(srv.Requests()))
	}

	// The example, as README shows it: the loop remembers across messages.
	before := len(srv.Requests())
	cmd := exec.CommandContext(t.Context(), node, "node_modules/@engramhq/langchain/example.mjs", "--user", "lc-example",
		"I moved to Porto last spring and I drink green tea", "where do I live?")
	cmd.Dir, cmd.Env = dir, append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ended after 4 messages") || !strings.Contains(string(out), answer) {
		t.Fatalf("example.mjs: %v\n%s", err, out)
	}
	reqs := srv.Requests()[before:]
	if len(reqs) != 2 || !strings.Contains(reqs[1].System(), "Porto") {
		t.Fatalf("the example's second answer was asked without engram's memory of the first message (%d requests):\n%s",
			len(reqs), reqs[len(reqs)-1].Prompt())
	}
}
