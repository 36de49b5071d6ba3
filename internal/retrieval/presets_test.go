package retrieval

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/contextblock"
	"github.com/engramhq/engram/internal/memory"
)

// personaFixture holds one memory of each kind, all about deploying.
func personaFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	for _, k := range memory.Kinds {
		if k == memory.KindIdentity {
			continue // the profile card's
		}
		f.memory(user, "m_"+string(k), string(k), "deploy "+string(k)+" note: the deploy script and the deploy server", time.Hour)
	}
	return f
}

// Seed 000 §5.5: persona tech_expert weighs SKILL and ERROR memories
// ×1.2; jarvis (named by §6.4, weighted by engram) its own kinds; a
// persona engram does not know weighs nothing but a kind of its name.
func TestPersonaBoosts(t *testing.T) {
	f := personaFixture(t)
	for _, c := range []struct {
		persona string
		boosted []memory.Kind
	}{
		{"tech_expert", []memory.Kind{memory.KindSkill, memory.KindError}},
		{"Tech_Expert", []memory.Kind{memory.KindSkill, memory.KindError}},
		{"jarvis", []memory.Kind{memory.KindRule, memory.KindPreference, memory.KindContext}},
		{"rule", []memory.Kind{memory.KindRule}},
		{"pirate", nil},
	} {
		t.Run(c.persona, func(t *testing.T) {
			resp := f.ask(Request{Query: "how do I deploy", Persona: c.persona, Explain: true})
			if got, want := len(resp.Blocks.Memories), len(memory.Kinds)-1; got != want {
				t.Fatalf("memories %d, want %d", got, want)
			}
			for _, it := range resp.Blocks.Memories {
				want := 1.0
				for _, k := range c.boosted {
					if it.ID == "m_"+string(k) {
						want = 1.2
					}
				}
				if got := it.Signals["persona"]; got != want {
					t.Errorf("%s: persona %v, want %v", it.ID, got, want)
				}
				if got := it.Signals["boost"]; math.Abs(got-want) > 1e-9 {
					t.Errorf("%s: boost %v, want %v", it.ID, got, want)
				}
			}
		})
	}
}

// Seed 002 §5.2 as a preset: similarity × 0.6 + importance × 0.25 + time
// decay × 0.15, the decay halving every 30 days, at most 5 memories
// (§5.1's limit); seed 002's budget.
func TestPresetSeed002(t *testing.T) {
	f := newFixture(t)
	for i, age := range []int{0, 30, 60, 90, 120, 150, 180} {
		f.apply(user, events.TypeMemoryAdded, f.now.Add(-time.Duration(age)*24*time.Hour), &events.MemoryAdded{
			MemoryID: fmt.Sprintf("m%d", i), Kind: "fact", Category: "event", Subject: "user", Predicate: fmt.Sprintf("note %d", i),
			Content: fmt.Sprintf("the garden fence needs paint, side %d", i), Importance: 0.2 + 0.1*float64(i), Confidence: 1})
	}
	resp := f.ask(Request{Query: "garden fence paint", Preset: PresetSeed002, Explain: true})
	if got, want := len(resp.Blocks.Memories), 5; got != want {
		t.Fatalf("memories %d, want %d (seed 002's limit)", got, want)
	}
	for _, it := range resp.Blocks.Memories {
		var i, age int
		if _, err := fmt.Sscanf(it.ID, "m%d", &i); err != nil {
			t.Fatalf("memory id %q: %v", it.ID, err)
		}
		age = []int{0, 30, 60, 90, 120, 150, 180}[i]
		want := 0.6*it.Signals["relevance"] + 0.25*(0.2+0.1*float64(i)) + 0.15*math.Pow(0.5, float64(age)/30)
		if math.Abs(it.Score-want) > 1e-9 {
			t.Errorf("%s (%d days): score %v, want %v", it.ID, age, it.Score, want)
		}
	}
	if got, want := resp.Budget, contextblock.Seed002Budget(0); got != want {
		t.Errorf("budget %+v, want %+v", got, want)
	}
	// The request's own fields override the preset's.
	resp = f.ask(Request{Query: "garden fence paint", Preset: PresetSeed002, MaxEvidence: 2, Budget: PresetSeed004})
	if got := len(resp.Blocks.Memories); got != 2 {
		t.Errorf("max_evidence 2: memories %d", got)
	}
	if got, want := resp.Budget, contextblock.DefaultBudget(); got != want {
		t.Errorf("budget seed004 over preset seed002: %+v, want %+v", got, want)
	}
}

// Seed 000 §8.1's layout and seed 004 §5's 3–5 pieces of evidence.
func TestPresetsSeed000AndSeed004(t *testing.T) {
	f := newFixture(t)
	for i := range 8 {
		f.memory(user, fmt.Sprintf("m%d", i), "fact", fmt.Sprintf("the garden fence needs paint, part %d", i), time.Hour)
	}
	resp := f.ask(Request{Query: "garden fence paint", Preset: PresetSeed000})
	want := contextblock.Budget{Total: 3000, Profile: 900, Recent: 0, LongTerm: 300, Reserve: 1800}
	if got := resp.Budget; got != want {
		t.Errorf("seed000 budget %+v, want %+v", got, want)
	}
	if got := len(resp.Blocks.Memories); got != 8 {
		t.Errorf("seed000: memories %d, want all 8 (bounded by tokens)", got)
	}
	resp = f.ask(Request{Query: "garden fence paint", Preset: PresetSeed004, Explain: true})
	if got := len(resp.Blocks.Memories); got != 5 {
		t.Errorf("seed004: memories %d, want 5", got)
	}
	// Seed 004 §5's sum, without vectors: 0.30 keyword + 0.15 freshness.
	for _, it := range resp.Blocks.Memories {
		want := (0.30*it.Signals["relevance"] + 0.15*it.Signals["recency"]) * it.Signals["boost"]
		if math.Abs(it.Score-want) > 1e-9 {
			t.Errorf("seed004: %s scores %v, want %v", it.ID, it.Score, want)
		}
	}
	if got := len(f.ask(Request{Query: "garden fence paint"}).Blocks.Memories); got != 8 {
		t.Errorf("no preset: memories %d, want all 8", got)
	}
	// An engine's preset answers a request that names none.
	e := NewEngine(f.st)
	e.Now = func() time.Time { return f.now }
	e.Preset = PresetSeed004
	r, err := e.Context(t.Context(), Request{User: "u", Query: "garden fence paint", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.Blocks.Memories); got != 5 {
		t.Errorf("engine preset seed004: memories %d, want 5", got)
	}
}

func TestPresetValidation(t *testing.T) {
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{User: "u", Preset: "seed003"}, "preset"},
		{Request{User: "u", Scoring: "bm25"}, "scoring"},
		{Request{User: "u", Budget: "seed001"}, "budget"},
		{Request{User: "u", MaxEvidence: 51}, "max_evidence"},
	} {
		err := c.req.Validate()
		if memory.ErrorCode(err) != memory.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an invalid %s", c.req, err, c.want)
		}
	}
}
