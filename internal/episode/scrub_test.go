package episode

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

// What engram wrote word for word from expiring turns loses those words,
// in both languages; what it said of its own stays.
func TestScrub(t *testing.T) {
	c := NewCorpus([]string{
		"Please deploy the billing service to Kubernetes for the Atlas project.",
		"我平时用 Python 3.10 写脚本，今天想整理一下爬虫项目的目录结构。",
		`{"command":"kubectl apply -f billing.yaml"}`,
		"deployment.apps/billing configured",
	})
	got, changed := c.Scrub("Please deploy the billing service to Kubernetes for the Atlas project. The model says: billing shipped.")
	if !changed || strings.Contains(got, "Please deploy") || !strings.Contains(got, "billing shipped") {
		t.Fatalf("Scrub = %q, %v", got, changed)
	}
	if got, changed := c.Scrub("今天想整理一下爬虫项目的目录结构。"); !changed || got != "" {
		t.Fatalf("a Chinese sentence: %q, %v", got, changed)
	}
	if _, changed := c.Scrub("Done. Billing is live."); changed {
		t.Fatal("a sentence the turns do not hold was scrubbed")
	}
	ep := memory.Episode{Summary: "Please deploy the billing service to Kubernetes for the Atlas project.", Outcome: "completed",
		Goal: "Please deploy the billing service to Kubernetes for the Atlas project.", Tools: []string{"shell"}, Turns: []int{0, 1, 2},
		Actions: []memory.ActionNode{{Tool: "shell", Params: "command=kubectl apply -f billing.yaml", Result: "deployment.apps/billing configured", Success: true},
			{Decision: "Please deploy the billing service to Kubernetes for the Atlas project.", Success: true}}}
	got2, changed := c.ScrubEpisode(ep)
	if !changed || got2.Summary != "(3 turns, completed; tools: shell)" || got2.Goal != "" || len(got2.Actions) != 1 ||
		got2.Actions[0].Params != "" || got2.Actions[0].Result != "" || got2.Actions[0].Tool != "shell" {
		t.Fatalf("ScrubEpisode = %+v", got2)
	}
	pad := memory.Scratchpad{Content: "## Recent progress\n- [2026-01-02 completed] Please deploy the billing service to Kubernetes for the Atlas project.\n- kept line",
		CurrentFocus: "Please deploy the billing service to Kubernetes for the Atlas project.", NextSteps: []string{"add alerts"}}
	p, changed := c.ScrubScratchpad(pad)
	if !changed || strings.Contains(p.Content, "Please deploy") || !strings.Contains(p.Content, "kept line") || p.CurrentFocus != "" ||
		len(p.NextSteps) != 1 {
		t.Fatalf("ScrubScratchpad = %+v", p)
	}
}
