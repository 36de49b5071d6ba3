package app

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/llm/llmtest"
	defaultrules "github.com/engramhq/engram/rules"
	"go.uber.org/zap/zaptest"
)

// shippedRulesWith writes the shipped rules to a directory with some of
// their text replaced, and returns it.
func shippedRulesWith(t *testing.T, replace ...string) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(defaultrules.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(defaultrules.FS, path)
		if err != nil {
			return err
		}
		s := strings.NewReplacer(replace...).Replace(string(b))
		return os.WriteFile(filepath.Join(dir, path), []byte(s), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// A session compacts itself (seed 002 §4.2, issue 24): past max_messages
// unsummarized turns (20 here, 200 shipped) its older half is told as a
// compression episode, by the model when one is configured, without the
// agent sending context.compressing; the session window then shows that
// summary and the newer turns. A rebuild reproduces it without the model.
func TestSessionCompactsItself(t *testing.T) {
	for _, withModel := range []bool{false, true} {
		t.Run(fmt.Sprintf("model=%v", withModel), func(t *testing.T) {
			cfg := testConfig(t, t.TempDir())
			cfg.Consolidate.RulesDir = shippedRulesWith(t, "max_messages: 200", "max_messages: 20", "token_cap: 6000", "token_cap: 300")
			var srv *llmtest.Server
			if withModel {
				srv = llmtest.New(t)
				srv.Reply(func(req llmtest.ChatRequest) string {
					if strings.Contains(req.System(), "Summarise an agent's work session") {
						return `{"summary":"MODEL: the first half tuned the retry policy.","goal":"tune retries","outcome":"ongoing"}`
					}
					return `{"facts":[]}`
				})
				cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
			}
			a := startApp(t, cfg, RoleAll)
			var evs []any
			for i := range 30 {
				role := []string{"user", "assistant"}[i%2]
				evs = append(evs, turnEvent(fmt.Sprintf("k%d", i), "kai", "long", i, role,
					fmt.Sprintf("Turn %d: we keep tuning the payment service retry policy; the timeout is now %d seconds and backoff doubles.", i, i+10)))
			}
			mustAccept(t, postBatch(t, a, evs...))
			waitSettled(t, a)
			resp := contextHTTP(t, a, map[string]any{"user": "kai", "query": "what next?", "session_id": "long", "force": true})
			w := resp.Blocks.Window
			if len(w) < 2 || w[0].Kind != "summary" {
				t.Fatalf("window = %+v, want a summary of the older half first", w)
			}
			if withModel && !strings.Contains(w[0].Content, "MODEL:") {
				t.Fatalf("summary %q, want the model's", w[0].Content)
			}
			first := *w[1].TurnIndex
			if first < 10 || *w[len(w)-1].TurnIndex != 29 || len(w)-1 > 20 {
				t.Fatalf("window turns %d..%d (%d), want the newer turns only", first, *w[len(w)-1].TurnIndex, len(w)-1)
			}
			var calls int
			if srv != nil {
				calls = srv.Calls()
			}
			seq := waitSettled(t, a)
			stopApp(t, a)
			rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Diff) != 0 || rep.Target != seq || srv != nil && srv.Calls() != calls {
				t.Fatalf("rebuild: diff %v, target %d want %d", rep.Diff, rep.Target, seq)
			}
		})
	}
}
