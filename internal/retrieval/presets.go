package retrieval

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/vector"
)

// Presets reproduce one seed's retrieval as it is written, for an agent
// built to that seed; with none, engram's defaults answer (seed 004's
// budget, seed 000's rerank weights with the better of text relevance and
// cosine as relevance, and evidence bounded by tokens). A request's own
// budget, scoring and max_evidence override its preset's.
//
//	preset   budget                                        scoring            evidence
//	seed000  §8.1: scratchpad 500 + core 400, dynamic 300  engram's (§5.5)    by tokens
//	         of a ~3,000-token prompt
//	seed002  §4.3: 15/15/50/20% of the model's window      §5.2: 0.6 / 0.25 /  5 (§5.1 limit)
//	                                                       0.15, half-life 30d
//	seed004  §5: 600 / 2,000 / 900 / 500 of 4,000          §5: 0.55 / 0.30 /  5 (§5: 3–5)
//	                                                       0.15 hybrid
const (
	PresetSeed000 = "seed000"
	PresetSeed002 = "seed002"
	PresetSeed004 = "seed004"
)

// Scorings that replace engram's blend with a seed's sum as written.
const (
	// ScoringSeed002 ranks memories as seed 002 §5.2 does.
	ScoringSeed002 = "seed002"
	// ScoringSeed004 ranks memories as seed 004 §5 does.
	ScoringSeed004 = "seed004"
)

type preset struct {
	budget, scoring string
	evidence        int
	onboarding      bool // seed 004 §3's first meeting
}

var presets = map[string]preset{
	PresetSeed000: {budget: PresetSeed000},
	PresetSeed002: {budget: PresetSeed002, scoring: ScoringSeed002, evidence: 5},
	PresetSeed004: {budget: PresetSeed004, scoring: ScoringSeed004, evidence: 5, onboarding: true},
}

// maxEvidence bounds a request's max_evidence.
const maxEvidence = 50

// IsPreset reports whether name is a preset ("" is none).
func IsPreset(name string) bool {
	_, ok := presets[name]
	return ok || name == ""
}

// applyPreset fills what req leaves unset from its preset, or else from
// the engine's.
func (e *Engine) applyPreset(req *Request) {
	if req.Onboarding == nil && e.Onboarding {
		req.Onboarding = &e.Onboarding
	}
	name := req.Preset
	if name == "" {
		name = e.Preset
	}
	p, ok := presets[name]
	if !ok {
		return
	}
	if req.Budget == "" {
		req.Budget = p.budget
	}
	if req.Scoring == "" {
		req.Scoring = p.scoring
	}
	if req.MaxEvidence == 0 {
		req.MaxEvidence = p.evidence
	}
	if req.Onboarding == nil && p.onboarding {
		req.Onboarding = &p.onboarding
	}
}

// seed002Score is seed 002 §5.2's final score: similarity × 0.6 +
// importance × 0.25 + time decay × 0.15, the decay halving every 30 whole
// days since the memory was written. Similarity is the cosine when
// vectors are on, else the text relevance (BM25 over the best hit's):
// seed 002 has no keyword path, engram without vectors has no other.
func seed002Score(similarity, importance float64, age float64) (score, decay float64) {
	days := math.Floor(max(age, 0) / 24)
	decay = math.Pow(0.5, days/30)
	return 0.6*max(similarity, 0) + 0.25*importance + 0.15*decay, decay
}

// seed004Score is seed 004 §5's rerank: 0.55 × semantic + 0.30 × keyword
// + 0.15 × freshness, with the cosine as semantic (0 without vectors),
// the text relevance as keyword and recency (a month's e-folding) as
// freshness. It is not engram's default: with vectors, a memory that
// shares a few common words with the query outranked what full text found
// (rankMemories).
func seed004Score(semantic, keyword, freshness float64) float64 {
	return vector.SeedWeights().Score(semantic, keyword, freshness)
}

// Persona is what an agent's persona weighs up among the memories
// recalled (seed 000 §5.5, §6.4: personas change how memories rank and
// are expressed, never what is stored).
type Persona struct {
	Kinds []memory.Kind
	Boost float64
}

// SeedPersonas are the personas engram knows without configuration.
// tech_expert is seed 000 §5.5's: SKILL and ERROR memories ×1.2. The seed
// names jarvis (§6.4) without weights; engram gives it what a butler
// works from: the user's standing rules, their tastes and what is going
// on now (rule, preference and context memories), ×1.2.
func SeedPersonas() map[string]Persona {
	return map[string]Persona{
		"tech_expert": {Kinds: []memory.Kind{memory.KindSkill, memory.KindError}, Boost: 1.2},
		"jarvis":      {Kinds: []memory.Kind{memory.KindRule, memory.KindPreference, memory.KindContext}, Boost: 1.2},
	}
}

// personaBoost is what persona weighs m by: a known persona's boost for
// the kinds it favours; for a name engram does not know as a persona,
// Weights.Persona for a memory of that kind, topic or project.
func (e *Engine) personaBoost(persona string, m memory.Memory) float64 {
	if persona == "" {
		return 1
	}
	if p, ok := e.Personas[strings.ToLower(persona)]; ok {
		if slices.Contains(p.Kinds, m.Kind) {
			return p.Boost
		}
		return 1
	}
	if strings.EqualFold(persona, string(m.Kind)) || strings.EqualFold(persona, m.Topic) || strings.EqualFold(persona, m.Project) {
		return e.Weights.Persona
	}
	return 1
}

// capEvidence keeps the n best long-term items (memories, episodes and
// daily summaries, by score as Fit would trim them); n 0 keeps all.
func capEvidence(b *Blocks, n int) {
	if n <= 0 || len(b.Memories)+len(b.Episodes) <= n {
		return
	}
	all := append(slices.Clone(b.Memories), b.Episodes...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Score > all[j].Score })
	keep := map[string]bool{}
	for _, it := range all[:n] {
		keep[it.Kind+"\x00"+it.ID] = true
	}
	kept := func(items []Item) []Item {
		return slices.DeleteFunc(items, func(it Item) bool { return !keep[it.Kind+"\x00"+it.ID] })
	}
	b.Memories, b.Episodes = kept(b.Memories), kept(b.Episodes)
}
