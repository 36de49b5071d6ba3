package cards

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// Project.md rolls up past ProjectMDLines (seed 004 §6): two years of
// sessions fit in a hundred lines, the newest told one by one, the
// oldest one line a month.
func TestProjectMDRollsUp(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var eps []memory.Episode
	for i := range 400 {
		eps = append(eps, memory.Episode{ID: fmt.Sprintf("ep%03d", i), Summary: fmt.Sprintf("session %d", i),
			Outcome: memory.OutcomeCompleted, Ended: now.Add(-time.Duration(i) * 42 * time.Hour), Entities: []string{"project:engram"}})
	}
	pad := &memory.Scratchpad{CurrentFocus: "the migration", NextSteps: []string{"write tests"}}
	md := ProjectMD(nil, pad, eps, now)
	lines := strings.Count(md, "\n")
	if lines > ProjectMDLines {
		t.Fatalf("%d lines, want at most %d:\n%s", lines, ProjectMDLines, md)
	}
	for _, want := range []string{"Current focus: the migration", "- write tests", "session 0\n", "## Earlier", "sessions (engram)"} {
		if !strings.Contains(md, want) {
			t.Errorf("lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "session 399\n") {
		t.Errorf("the oldest session is told one by one:\n%s", md)
	}
	short := ProjectMD(nil, nil, eps[:3], now)
	if strings.Contains(short, "Earlier") || strings.Count(short, "session ") != 3 {
		t.Errorf("three sessions rolled up:\n%s", short)
	}
}

// The agent's card holds the confirmed identity and the traits of high
// confidence about how it should behave; Insights.md the ten lessons
// used most.
func TestAgentAndInsights(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	m := func(id string, kind memory.Kind, cat memory.Category, content string, conf float64) memory.Memory {
		return memory.Memory{ID: id, Kind: kind, Category: cat, Subject: "user", Predicate: "note", Content: content,
			Importance: 0.7, Confidence: conf, Status: memory.StatusActive, Created: now, Updated: now}
	}
	mems := []memory.Memory{
		m("r1", memory.KindRule, memory.CategoryConfig, "Rule: answer in English", 0.95),
		m("p1", memory.KindPreference, memory.CategoryConfig, "User prefers concise replies", 0.9),
		m("p2", memory.KindPreference, memory.CategoryConfig, "User likes green tea", 0.95),
		m("p3", memory.KindPreference, memory.CategoryConfig, "User prefers a formal tone", 0.7),
	}
	for i := range 12 {
		s := m(fmt.Sprintf("s%02d", i), memory.KindSkill, memory.CategorySolution, fmt.Sprintf("lesson %d", i), 0.9)
		s.AccessCount = i
		mems = append(mems, s)
	}
	traits := PersonaTraits(mems, now)
	if len(traits) != 2 {
		t.Fatalf("traits = %+v, want the rule and the concise replies (not tea, not the unsure tone)", traits)
	}
	id := &memory.Identity{Agent: memory.AgentIdentity{Name: "Eleven", Boundaries: []string{"never decide for the user"}}}
	card := AgentMD(id, mems, now)
	for _, want := range []string{"# Agent", "- Name: Eleven", "## Boundaries\n- never decide for the user", "## Learned traits",
		"answer in English", "concise replies"} {
		if !strings.Contains(card, want) {
			t.Errorf("AGENT.md lacks %q:\n%s", want, card)
		}
	}
	if AgentMD(nil, nil, now) != "" {
		t.Error("an empty agent card is written")
	}
	ins := InsightsMD(mems, now)
	if n := strings.Count(ins, "\n- "); n != InsightsMDEntries || !strings.HasPrefix(ins, "# Insights\n- lesson 11\n") ||
		strings.Contains(ins, "lesson 1\n") {
		t.Fatalf("INSIGHTS.md, want the %d most used lessons, most used first:\n%s", InsightsMDEntries, ins)
	}
}
