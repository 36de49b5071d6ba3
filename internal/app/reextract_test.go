package app

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap/zaptest"
)

// Re-extraction with another model: its result supersedes the old one,
// which stays in the history; a rebuild reaches the same read model from
// the recorded results, without the model.
func TestReextractSupersedes(t *testing.T) {
	t.Parallel()
	var city atomic.Value
	city.Store("Paris")
	srv := llmtest.New(t)
	srv.Reply(func(llmtest.ChatRequest) string {
		return fmt.Sprintf(`{"facts":[{"subject":"user","predicate":"location","content":"lives in %s","kind":"identity","category":"identity","importance":0.8,"confidence":0.95}]}`, city.Load())
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	a := startApp(t, cfg, RoleAll)
	mustAccept(t, postBatch(t, a, turnEvent("l-0", "lu", "s1", 0, "user", "I moved recently."), endEvent("l-e", "lu", "s1", 1)))
	waitSettled(t, a)
	if m := listMemories(t, a, "lu", ""); len(m) != 1 || !strings.Contains(m[0].Content, "Paris") {
		t.Fatalf("before: %+v", m)
	}
	old := listMemories(t, a, "lu", "")[0]

	city.Store("Berlin") // the new model reads the same turns otherwise
	rep, err := Reextract(t.Context(), jsOf(a), cfg.ReadModelPath(), ReextractOptions{
		Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Namespace: "default", User: "lu"})
	if err != nil || rep.Turns != 1 || rep.Requests != 1 {
		t.Fatalf("reextract: %+v, %v", rep, err)
	}
	seq := waitSettled(t, a)
	now := listMemories(t, a, "lu", "")
	if len(now) != 1 || !strings.Contains(now[0].Content, "Berlin") {
		t.Fatalf("after: %+v", now)
	}
	m, err := a.Store().Memory(t.Context(), memory.Scope{Namespace: "default", User: "lu"}, old.ID)
	if err != nil || m.Status != memory.StatusSuperseded || m.SupersededBy != now[0].ID {
		t.Fatalf("the old memory: %+v, %v", m, err)
	}
	calls := srv.Calls()
	stopApp(t, a)
	rebuilt, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil || len(rebuilt.Diff) != 0 || rebuilt.Target != seq {
		t.Fatalf("rebuild: %+v, %v", rebuilt, err)
	}
	if srv.Calls() != calls {
		t.Fatal("the rebuild called the model")
	}
}
