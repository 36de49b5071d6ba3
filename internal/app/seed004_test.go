package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// Seed 004 as its user meets it (issue 24): the first context asks who
// the agent and the user are, once; the agent sends what the user
// confirmed and is never asked again, and the agent's card is in every
// context after; up to three memories waiting for confirmation come with
// the context for the agent to ask about; the L1 cards (the agent's
// identity card with the persona traits promoted to it, Project.md,
// Insights.md with the ten hottest) are written beside MEMORY.md and
// USER.md and served; and the nightly report says what the night did. A
// rebuild agrees.
func TestSeed004OnboardingPendingCardsAndReport(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()

	// Not asked unless the request (or its preset, or the config) asks:
	// an agent that knows nothing of identity.confirmed is not told to
	// send it in every block.
	resp := contextHTTP(t, a, map[string]any{"user": "yang", "query": "你好"})
	if resp.Onboarding != nil || strings.Contains(resp.Rendered, "首次见面") {
		t.Fatalf("onboarding in a plain request: %+v", resp.Onboarding)
	}
	if resp = contextHTTP(t, a, map[string]any{"user": "yang", "query": "你好", "preset": "seed004"}); resp.Onboarding == nil {
		t.Fatal("seed004's preset does not ask the first meeting's questions")
	}
	// First meeting: asked.
	resp = contextHTTP(t, a, map[string]any{"user": "yang", "query": "你好", "onboarding": true})
	if resp.Onboarding == nil || len(resp.Onboarding.Ask) != 3 || !strings.Contains(resp.Rendered, "首次见面") {
		t.Fatalf("first context: onboarding %+v, rendered %q", resp.Onboarding, resp.Rendered)
	}
	mustAccept(t, postEvent(t, a, map[string]any{
		"specversion": "1.0", "id": "onboard-1", "source": "test/agent", "type": "identity.confirmed", "user": "yang",
		"data": map[string]any{
			"agent":   map[string]any{"name": "十一", "tone": "直接、简洁", "boundaries": []string{"不替用户做决定"}},
			"user":    map[string]any{"name": "阿杨", "background": "全栈工程师", "tech": []string{"Go", "TypeScript"}},
			"summary": "你是十一，我是阿杨。",
		},
	}))
	waitSettled(t, a)
	resp = contextHTTP(t, a, map[string]any{"user": "yang", "query": "你好", "onboarding": true})
	if resp.Onboarding != nil || strings.Contains(resp.Rendered, "首次见面") {
		t.Fatalf("asked again after the confirmation: %+v", resp.Onboarding)
	}
	if len(resp.Blocks.Profile) == 0 || resp.Blocks.Profile[0].Kind != "agent" || !strings.Contains(resp.Blocks.Profile[0].Content, "十一") {
		t.Fatalf("the agent's card is not in the profile: %+v", resp.Blocks.Profile)
	}
	if !hasContent(listMemories(t, a, "yang", ""), "阿杨") {
		t.Fatal("the user's confirmed name is not a memory")
	}

	// Four memories wait for confirmation: three are asked about.
	for i := range 4 {
		postMemory(t, a, fmt.Sprintf(`{"user":"yang","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"阿杨可能喜欢第%d种茶","importance":0.5,"confidence":0.7}`, i))
	}
	waitSettled(t, a)
	resp = contextHTTP(t, a, map[string]any{"user": "yang", "query": "你好"})
	if len(resp.Blocks.Pending) != 3 || !strings.Contains(resp.Rendered, "待确认的记忆") ||
		!strings.Contains(resp.Rendered, "/v1/pending/"+resp.Blocks.Pending[0].ID+"/confirm") {
		t.Fatalf("pending asked: %+v\n%s", resp.Blocks.Pending, resp.Rendered)
	}

	// A rule held with confidence is a persona trait; twelve lessons, two
	// used, are insights; an episode is the projects' log.
	postMemory(t, a, `{"user":"yang","kind":"rule","category":"config","subject":"user","predicate":"rule","content":"规则：回答一律用中文","importance":0.9,"confidence":0.95}`)
	for i := range 12 {
		postMemory(t, a, fmt.Sprintf(`{"user":"yang","kind":"skill","category":"solution","subject":"skill%d","predicate":"skill","content":"经验%d：先写测试再改代码","importance":0.6}`, i, i))
	}
	evs := conversation("y", "yang", "s1")
	mustAccept(t, postBatch(t, a, append(evs, endEvent("y-end", "yang", "s1", 4))...))
	waitSettled(t, a)
	now := time.Now()
	if _, err := a.RunJob(t.Context(), "daily_cards", now); err != nil {
		t.Fatal(err)
	}
	dir := consolidation.CardsPath(a.Config.CardsPath(), memory.Scope{Namespace: "default", User: "yang"})
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	wait.Until(t, "the L1 cards", func() bool {
		return strings.Contains(read(consolidation.AgentCard), "十一") && read(consolidation.ProjectCard) != "" &&
			read(consolidation.InsightsCard) != ""
	})
	if s := read(consolidation.AgentCard); !strings.Contains(s, "不替用户做决定") || !strings.Contains(s, "回答一律用中文") {
		t.Fatalf("AGENT.md lacks the boundary or the promoted trait:\n%s", s)
	}
	if s := read(consolidation.ProjectCard); !strings.Contains(s, "billing") {
		t.Fatalf("PROJECT.md lacks the session:\n%s", s)
	}
	if n := strings.Count(read(consolidation.InsightsCard), "\n- "); n != 10 {
		t.Fatalf("INSIGHTS.md has %d entries, want the 10 hottest:\n%s", n, read(consolidation.InsightsCard))
	}
	var prof struct {
		AgentMD           string         `json:"agent_md"`
		ProjectMD         string         `json:"project_md"`
		InsightsMD        string         `json:"insights_md"`
		IdentityConfirmed bool           `json:"identity_confirmed"`
		Report            *memory.Report `json:"report"`
	}
	getJSON(t, base, "/v1/profile?user=yang", &prof)
	if !prof.IdentityConfirmed || prof.AgentMD != read(consolidation.AgentCard) || prof.InsightsMD == "" || prof.ProjectMD == "" {
		t.Fatalf("profile = %+v", prof)
	}

	// The night's report.
	c := a.consolidator()
	ran, published, err := c.RunJobCounted(t.Context(), "daily_report", now.Add(time.Minute))
	if err != nil || len(ran) != 1 || published["consolidation.reported"] != 1 {
		t.Fatalf("daily_report ran %v, published %v: %v", ran, published, err)
	}
	waitSettled(t, a)
	getJSON(t, base, "/v1/profile?user=yang", &prof)
	if r := prof.Report; r == nil || r.Learned < 17 || r.Episodes != 1 || r.Pending != 4 || len(r.Traits) != 1 ||
		!strings.Contains(r.Text, "回答一律用中文") {
		t.Fatalf("report = %+v", prof.Report)
	}

	seq := waitSettled(t, a)
	stopApp(t, a)
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq {
		t.Fatalf("rebuild: diff %v, target %d want %d", rep.Diff, rep.Target, seq)
	}
}
