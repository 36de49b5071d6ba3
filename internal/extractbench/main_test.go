package extractbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/llm/llmtest"
)

// With ENGRAM_LLM_BASE_URL set, Main measures the model through the real
// prompt and client next to the rules, on both splits.
func TestMainMeasuresTheLLMWhenConfigured(t *testing.T) {
	dir := t.TempDir()
	row := `{"id":"en-1","lang":"en","role":"user","content":"My name is Ana.","gold":[{"kind":"identity","subject":"user","predicate":"name","value":"Ana"}]}` + "\n"
	for _, split := range Splits {
		if err := os.WriteFile(filepath.Join(dir, split+".jsonl"), []byte(row), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string {
		if !strings.Contains(req.Prompt(), "My name is Ana.") {
			return `{"facts":[]}`
		}
		return `{"facts":[{"subject":"user","predicate":"name","content":"User's name is Ana","kind":"identity","category":"identity","importance":1,"confidence":0.95}]}`
	})
	cfg := srv.Config()
	t.Setenv("ENGRAM_LLM_BASE_URL", cfg.BaseURL)
	t.Setenv("ENGRAM_LLM_MODEL", cfg.Model)
	var out strings.Builder
	if code := Main([]string{"-dir", dir}, &out); code != 0 {
		t.Fatalf("Main=%d:\n%s", code, out.String())
	}
	got := out.String()
	for _, want := range []string{"extraction, rules, dev split", "extraction, rules, test split", "extraction, llm " + cfg.Model + ", test split"} {
		if !strings.Contains(got, want) {
			t.Fatalf("output lacks %q:\n%s", want, got)
		}
	}
	llmPart := got[strings.Index(got, "extraction, llm"):]
	if want := "en   all             1     1     1      1.00   1.00"; !strings.Contains(llmPart, want) {
		t.Fatalf("the model's table lacks %q:\n%s", want, llmPart)
	}
	if srv.Calls() != 2 {
		t.Fatalf("model called %d times, want 2 (one turn per split)", srv.Calls())
	}
}
