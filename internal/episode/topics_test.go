package episode

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// An extractive episode is about the work, not what the user said of
// themselves on the way (issue 24: a scratchpad's current focus became a
// tea preference), and its summary covers the requests in the middle of
// a session, not only its first and last turns.
func TestExtractiveGoalAndTopics(t *testing.T) {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name              string
		turns             []string // user, assistant, user, …
		goal, middle      string
		notGoal, notFocus string
	}{
		{
			name: "en",
			turns: []string{
				"I switched to drinking green tea in the afternoons instead of coffee.",
				"Noted.",
				"Can you help me refactor the payment retry module?",
				"Sure, I split the retry policy into its own package.",
				"Also add jitter to the backoff so retries do not stampede.",
				"Added full jitter to the backoff.",
				"Now write a changelog entry for the release.",
				"Done: the changelog entry is written.",
			},
			goal: "refactor the payment retry module", middle: "jitter", notGoal: "green tea",
		},
		{
			name: "zh",
			turns: []string{
				"我现在改喝绿茶了，不喝咖啡。",
				"好的，记住了。",
				"帮我重构一下支付重试模块。",
				"好的，已经把重试策略拆成独立的包。",
				"再给退避加上随机抖动，避免重试同时打过来。",
				"已经加上了完全随机抖动。",
				"最后写一条发布说明。",
				"完成：发布说明已经写好。",
			},
			goal: "重构一下支付重试模块", middle: "随机抖动", notGoal: "绿茶",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := Input{SessionID: "s1", Source: SourceSessionEnd}
			for i, text := range c.turns {
				in.Turns = append(in.Turns, Turn{Index: i, Role: []string{"user", "assistant"}[i%2], Content: text, Time: at.Add(time.Duration(i) * time.Minute)})
			}
			ep := Extractive(in)
			if !strings.Contains(ep.Goal, c.goal) || strings.Contains(ep.Goal, c.notGoal) {
				t.Errorf("goal %q, want the request %q, not the user's habit", ep.Goal, c.goal)
			}
			if !strings.Contains(ep.Summary, c.middle) {
				t.Errorf("summary %q lacks the request in the middle (%q)", ep.Summary, c.middle)
			}
			pad := UpdateScratchpad(memory.Scratchpad{}, ep, at.Add(time.Hour))
			if strings.Contains(pad.CurrentFocus, c.notGoal) || !strings.Contains(pad.CurrentFocus, c.goal) {
				t.Errorf("current focus %q, want the work", pad.CurrentFocus)
			}
		})
	}
}
