package retrieval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/contextblock"
	"github.com/engramhq/engram/internal/maintain"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/prefilter"
	"github.com/engramhq/engram/internal/textseg"
	"github.com/engramhq/engram/internal/vector"
)

// Store is what retrieval reads.
type Store interface {
	TurnStore
	// RecallMemories searches a scope's active memories for q, best
	// first, scored by the scope's own statistics.
	RecallMemories(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.MemoryHit, error)
	RecentTurns(ctx context.Context, scope memory.Scope, since time.Time, limit int) ([]memory.TurnHit, error)
	Projects(ctx context.Context, scope memory.Scope) ([]string, error)
	memory.MemoryReader
}

// Optional read paths a store may offer (the consolidator's projections).
type (
	// EpisodeRecaller finds a scope's episodes by text.
	EpisodeRecaller interface {
		RecallEpisodes(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.Episode, error)
	}
	// Vectors is the optional semantic path: it embeds the query and
	// returns the scope's active memories nearest to it, best first, with
	// their cosine in Semantic, and the cosine of each memory in also that
	// has a vector.
	Vectors interface {
		SearchMemories(ctx context.Context, scope memory.Scope, query string, k int, also []string) ([]memory.MemoryHit, map[string]float64, error)
	}
	// ScratchpadReader reads a scope's scratchpad.
	ScratchpadReader interface {
		Scratchpad(ctx context.Context, scope memory.Scope) (memory.Scratchpad, error)
	}
	// DailyRecaller finds a scope's daily summaries (tier 3) for q, within
	// the days from–to (YYYY-MM-DD, to exclusive) when they are set.
	DailyRecaller interface {
		RecallDailySummaries(ctx context.Context, scope memory.Scope, q textseg.Query, from, to string, limit int) ([]memory.DailySummary, error)
	}
	// SessionReader reads one session: its turns, and its episodes (a
	// compression episode carries the summary of what left the agent's
	// window).
	SessionReader interface {
		SessionTurns(ctx context.Context, scope memory.Scope, session string) ([]memory.Turn, error)
		Episodes(ctx context.Context, scope memory.Scope, session string, limit int) ([]memory.Episode, error)
	}
)

// Weights are every weight a memory is ranked by: seed 000 §5.5's
// rerank, what a memory gains for matching the request beyond its words,
// and what a time the question names weighs.
type Weights struct {
	Relevance, Recency, Importance, Access float64
	// Persona, Project and Intent multiply the score of a memory whose
	// kind, topic or project is the request's persona, whose project the
	// query names, and whose kind the question asks for ("what do I
	// like?" looks at preferences first; intents).
	Persona, Project, Intent float64
	Time                     TimeWeights
}

// TimeWeights weigh an item for a question that names a time (a
// timeWindow): inside the window it weighs In as much, outside Out; a
// sharp window (a day, or a month with its year: a surer cue than "in
// June" or "last week") SharpIn and SharpOut. A memory written in the
// window that no word matched is recalled at relevance Base.
type TimeWeights struct {
	In, Out, SharpIn, SharpOut, Base float64
}

// SeedWeights are seed 000's: 0.40 relevance, 0.25 recency, 0.20
// importance, 0.15 access frequency; and ours beside them.
func SeedWeights() Weights {
	return Weights{Relevance: 0.40, Recency: 0.25, Importance: 0.20, Access: 0.15,
		Persona: 1.2, Project: 1.2, Intent: 1.25,
		Time: TimeWeights{In: 1.2, Out: 0.85, SharpIn: 1.5, SharpOut: 0.7, Base: 0.25}}
}

// Recorder learns which memories a retrieval used (access reinforcement).
type Recorder interface {
	Accessed(scope memory.Scope, ids []string, at time.Time)
}

// Counter counts tokens the way the target model does.
type Counter = contextblock.Counter

// Engine answers context requests.
type Engine struct {
	Store   Store
	Weights Weights
	// Vectors, when set, adds semantic recall: its hits are fused with
	// the full-text ones by reciprocal rank fusion, and a memory's
	// relevance is the better of its text relevance and its cosine
	// (rankMemories).
	Vectors Vectors
	Turns   TurnOptions
	// PerPath is how many candidates each recall path contributes.
	PerPath int
	// Tokens picks the token counter for a model ("" = the default).
	Tokens func(model string) Counter
	// Recorder receives the memories each answer used; nil records nothing.
	Recorder Recorder
	// Degraded learns of each fall down the degradation chain (from
	// "vectors" or "fts" to "fts" or "recent"); nil ignores them.
	Degraded func(scope memory.Scope, from, to, reason string)
	// Now is the clock for recency; tests set it.
	Now func() time.Time
	// Preset is the preset (presets.go) of a request that names none;
	// "" is engram's defaults.
	Preset string
	// Onboarding is whether a request that does not say asks for seed 004
	// §3's first meeting (Request.Onboarding).
	Onboarding bool
	// Personas are the personas a request may name, by lower-case name
	// (SeedPersonas by default).
	Personas map[string]Persona
}

// NewEngine returns an Engine with the seed defaults.
func NewEngine(st Store) *Engine {
	return &Engine{Store: st, Weights: SeedWeights(), Turns: DefaultTurnOptions(), PerPath: 20, Now: time.Now,
		Personas: SeedPersonas()}
}

// Message is one of the agent's recent messages.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is a context request (POST /v1/context).
type Request struct {
	Namespace      string    `json:"namespace"`
	User           string    `json:"user"`
	Agent          string    `json:"agent,omitempty"`
	SessionID      string    `json:"session_id,omitempty"`
	Query          string    `json:"query"`
	RecentMessages []Message `json:"recent_messages,omitempty"`
	BudgetTokens   int       `json:"budget_tokens,omitempty"`
	// Preset reproduces one seed's retrieval as written (presets.go):
	// "seed000", "seed002" or "seed004"; Budget, Scoring and MaxEvidence
	// override its choices.
	Preset string `json:"preset,omitempty"`
	// Onboarding asks the agent to settle who it and the user are while
	// the user has not (seed 004 §3; the answer's onboarding). Unset: the
	// seed004 preset asks, other requests do not unless Engine.Onboarding.
	Onboarding *bool `json:"onboarding,omitempty"`
	// Budget chooses the split: "seed004" (default), "seed002" or
	// "seed000".
	Budget string `json:"budget,omitempty"`
	// Scoring ranks memories: "" engram's blend, "seed002" (seed 002
	// §5.2) or "seed004" (seed 004 §5's hybrid sum).
	Scoring string `json:"scoring,omitempty"`
	// MaxEvidence caps the long-term evidence (memories, episodes, daily
	// summaries) at so many items, best first; 0 bounds it by tokens alone.
	MaxEvidence int `json:"max_evidence,omitempty"`
	// Persona weighs up what the agent's persona favours (SeedPersonas;
	// a name engram does not know as a persona: memories of that kind,
	// topic or project).
	Persona string `json:"persona,omitempty"`
	Explain bool   `json:"explain,omitempty"`
	// Force retrieves even when the pre-check would skip.
	Force bool `json:"force,omitempty"`
	// Model names the target model family for token counting.
	Model string `json:"model,omitempty"`
	// TurnLimit caps raw-turn evidence (default 8, at most 50).
	TurnLimit int    `json:"turn_limit,omitempty"`
	Lang      string `json:"lang,omitempty"`
}

// Item is one entry of a block.
type Item struct {
	ID         string             `json:"id"`
	Kind       string             `json:"kind"`
	Content    string             `json:"content"`
	Provenance string             `json:"provenance"`
	Score      float64            `json:"score"`
	Tokens     int                `json:"tokens"`
	SessionID  string             `json:"session_id,omitempty"`
	TurnIndex  *int               `json:"turn_index,omitempty"`
	Time       time.Time          `json:"time,omitzero"`
	Signals    map[string]float64 `json:"signals,omitempty"` // with explain
}

// Blocks are the response's sections.
type Blocks struct {
	Profile     []Item `json:"profile"`
	Scratchpad  []Item `json:"scratchpad"`
	Memories    []Item `json:"memories"`
	Episodes    []Item `json:"episodes"`
	Turns       []Item `json:"turns"`
	Attachments []Item `json:"attachments"`
	// Window is the session of the request (session_id): a summary of
	// what left the agent's window, then the session's latest turns,
	// oldest first (seed 002 §4's short-term memory).
	Window []Item `json:"window"`
	// Pending are up to MaxPendingAsked memories waiting for the user's
	// confirmation, for the agent to ask about at the end of its reply
	// (seed 004 §7).
	Pending []Item `json:"pending"`
}

// Response is the answer to a context request.
type Response struct {
	Retrieved bool     `json:"retrieved"`
	Reason    string   `json:"reason"`
	Blocks    Blocks   `json:"blocks"`
	Rendered  string   `json:"rendered"`
	Tokens    int      `json:"tokens"`
	Budget    any      `json:"budget"`
	Degraded  []string `json:"degraded,omitempty"`
	Dropped   []string `json:"dropped,omitempty"`
	// Onboarding is set while the user has not confirmed who the agent is
	// and who they are (seed 004 §3).
	Onboarding *Onboarding `json:"onboarding,omitempty"`
}

// Validate names the first bad field.
func (r *Request) Validate() error {
	if r.Namespace == "" {
		r.Namespace = "default"
	}
	if err := (memory.Scope{Namespace: r.Namespace, User: r.User}).Validate(); err != nil {
		return err
	}
	if len(r.Query) > 16<<10 {
		return memory.Errorf(memory.EINVALID, "query is longer than 16384 bytes")
	}
	if len(r.RecentMessages) > 50 {
		return memory.Errorf(memory.EINVALID, "recent_messages: at most 50")
	}
	if r.BudgetTokens < 0 || r.BudgetTokens > 200000 {
		return memory.Errorf(memory.EINVALID, "budget_tokens: %d is outside 0..200000", r.BudgetTokens)
	}
	if !IsPreset(r.Preset) {
		return memory.Errorf(memory.EINVALID, "preset: %q is not seed000, seed002 or seed004", r.Preset)
	}
	switch r.Budget {
	case "", PresetSeed004, PresetSeed002, PresetSeed000:
	default:
		return memory.Errorf(memory.EINVALID, "budget: %q is not seed004, seed002 or seed000", r.Budget)
	}
	switch r.Scoring {
	case "", ScoringSeed002, ScoringSeed004:
	default:
		return memory.Errorf(memory.EINVALID, "scoring: %q is not seed002 or seed004 (or empty, engram's)", r.Scoring)
	}
	if r.MaxEvidence < 0 || r.MaxEvidence > maxEvidence {
		return memory.Errorf(memory.EINVALID, "max_evidence: %d is outside 0..%d", r.MaxEvidence, maxEvidence)
	}
	if len(r.Persona) > 200 {
		return memory.Errorf(memory.EINVALID, "persona is longer than 200 bytes")
	}
	if r.TurnLimit < 0 || r.TurnLimit > 50 {
		return memory.Errorf(memory.EINVALID, "turn_limit: %d is outside 0..50", r.TurnLimit)
	}
	return nil
}

// Context answers one request.
func (e *Engine) Context(ctx context.Context, req Request) (*Response, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	e.applyPreset(&req)
	scope := memory.Scope{Namespace: req.Namespace, User: req.User}
	now := e.Now()
	resp := &Response{}
	var b Blocks

	// The profile card goes in whether or not the query needs memory.
	core, err := e.Store.Memories(ctx, memory.MemoryQuery{Scope: scope, Profile: true, Limit: 100})
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	for _, m := range core {
		// Scored by importance: a card over its share loses its least
		// important entries first.
		b.Profile = append(b.Profile, memoryItem(m, m.Importance, nil))
	}
	projects, err := e.Store.Projects(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("projects: %w", err)
	}
	if pr, ok := e.Store.(ScratchpadReader); ok {
		pad, err := pr.Scratchpad(ctx, scope)
		if err != nil {
			e.fall(scope, resp, "scratchpad", "none", fmt.Errorf("scratchpad: %w", err))
		}
		if pad.Content != "" {
			b.Scratchpad = append(b.Scratchpad, Item{ID: "scratchpad", Kind: "scratchpad", Content: pad.Content,
				Provenance: "scratchpad · " + pad.Updated.Format("2006-01-02"), Score: 1, Time: pad.Updated})
		}
	}

	if req.SessionID != "" {
		if sr, ok := e.Store.(SessionReader); ok {
			window, err := sessionWindow(ctx, sr, scope, req.SessionID)
			if err != nil {
				return nil, fmt.Errorf("session window: %w", err)
			}
			b.Window = window
		}
	}

	d := prefilter.ShouldRetrieve(req.Query, projects)
	if req.Force {
		d = prefilter.Forced()
	}
	resp.Retrieved, resp.Reason = d.Retrieve, d.Reason
	if d.Retrieve {
		e.recall(ctx, scope, req, now, projects, &b, resp)
	}
	e.ask(ctx, req, scope, now, &b, resp)
	// Evidence that says nothing ("Understood.", "好的") ranks, and is
	// trimmed, after evidence that does; a turn the session window holds
	// is not listed twice.
	for i := range b.Turns {
		if isFiller(b.Turns[i].Content) {
			b.Turns[i].Score = min(b.Turns[i].Score, fillerScore)
		}
	}
	b.Turns = slices.DeleteFunc(b.Turns, func(it Item) bool {
		return slices.ContainsFunc(b.Window, func(w Item) bool { return w.ID == it.ID })
	})
	sort.SliceStable(b.Turns, func(i, j int) bool { return b.Turns[i].Score > b.Turns[j].Score })
	capEvidence(&b, req.MaxEvidence)
	e.finish(req, &b, resp, scope, now)
	return resp, nil
}

// semantic runs the vector path and fuses its hits with the text hits by
// reciprocal rank fusion, keeping the best PerPath of the union. It
// returns the cosine of every memory that has a vector, or nil when the
// path failed: then the text hits stand alone and the fall is recorded.
func (r *recall) semantic(ctx context.Context, hits []memory.MemoryHit) (map[string]float64, []memory.MemoryHit) {
	e := r.e
	text := make([]string, len(hits))
	for i, h := range hits {
		text[i] = h.ID
	}
	near, semantic, err := e.Vectors.SearchMemories(ctx, r.a.scope, r.a.req.Query, e.PerPath, text)
	if err != nil {
		r.fall("vectors", "fts", fmt.Errorf("nearest memories: %w", err))
		return nil, hits
	}
	if semantic == nil {
		semantic = map[string]float64{}
	}
	byID := make(map[string]memory.MemoryHit, len(hits)+len(near))
	for _, h := range hits {
		byID[h.ID] = h
	}
	nearIDs := make([]string, len(near))
	for i, h := range near {
		nearIDs[i] = h.ID
		semantic[h.ID] = h.Semantic
		if _, ok := byID[h.ID]; !ok {
			byID[h.ID] = h
		}
	}
	fused := vector.RRF(0, vector.Ranked{Weight: 1, IDs: text}, vector.Ranked{Weight: 1, IDs: nearIDs})
	out := make([]memory.MemoryHit, 0, min(len(fused), e.PerPath))
	for _, f := range fused[:min(len(fused), e.PerPath)] {
		h := byID[f.ID]
		h.Semantic = semantic[f.ID]
		out = append(out, h)
	}
	return semantic, out
}

// rankMemories scores memory hits with seed 000's signals (relevance,
// recency, importance, access); seed 001's category decay scales
// importance. With vectors (semantic not nil), a memory's relevance is the
// better of its text relevance and its cosine with the query: the vectors
// only add. Seed 004's hybrid sum (0.55 semantic + 0.30 keyword + 0.15
// freshness) let a vector that shares a few common words with the query
// outrank a memory full text found: on the dev sets, with the test
// embeddings, it ranked gold memories below full text alone (zh
// 0.855/0.914 for 0.862/0.907, en 0.816/0.874 for 0.816/0.895); the better
// of the two ranks them above both (0.866/0.917, 0.826/0.900).
//
// Relevance leads: the other signals scale with it (score = relevance ×
// (weights of all four)), so a memory that matches worse cannot be lifted
// above a better match by being new, important or often used — they order
// memories that match alike. Recency is from when the memory was written
// or changed, not when it was last retrieved, and access counts are
// bounded and fade with time since the last use: retrieval must not feed
// on itself. Only active memories are recalled, so a superseded value
// never ranks as current.
//
// Scoring "seed002" and "seed004" replace the blend with those seeds'
// sums as written (presets.go); the boosts (persona, project, intent, a
// time asked about) apply to each.
func (e *Engine) rankMemories(hits []memory.MemoryHit, semantic map[string]float64, now time.Time, o rankOptions) []Item {
	tw := o.tw
	if len(hits) == 0 {
		return nil
	}
	top := 0.0
	for _, h := range hits {
		top = max(top, h.BM25)
	}
	w := e.Weights
	sum := w.Relevance + w.Recency + w.Importance + w.Access
	items := make([]Item, 0, len(hits))
	for _, h := range hits {
		rel := 0.0
		if top > 0 {
			rel = h.BM25 / top
		}
		if tw.holds(h.Created) {
			rel = max(rel, w.Time.Base)
		}
		written := h.Updated
		if h.Created.After(written) {
			written = h.Created
		}
		age := now.Sub(written)
		recency := math.Exp(-age.Hours() / (24 * 30)) // a month's e-folding
		access := accessSignal(h.Memory, now)
		// Seed 001 §8: the category decay is of importance (it replaces
		// ORDER BY importance), so an old event keeps its relevance.
		decay := maintain.DecayFactor(h.Category, now.Sub(maintain.LastUsed(h.Memory)))
		importance := h.Importance * decay
		text := rel
		if semantic != nil {
			rel = max(rel, semantic[h.ID])
		}
		score := rel * (w.Relevance + w.Recency*recency + w.Importance*importance + w.Access*access) / sum
		var timeDecay float64
		switch o.scoring {
		case ScoringSeed002:
			similarity := text
			if semantic != nil {
				similarity = semantic[h.ID]
			}
			score, timeDecay = seed002Score(similarity, h.Importance, age.Hours())
		case ScoringSeed004:
			score = seed004Score(semantic[h.ID], text, recency)
		}
		persona := e.personaBoost(o.persona, h.Memory)
		boost := persona
		if o.project != "" && strings.EqualFold(o.project, h.Project) {
			boost *= w.Project
		}
		if slices.Contains(o.intent, h.Kind) {
			boost *= w.Intent
		}
		boost *= tw.factor(h.Created)
		score *= boost
		var sig map[string]float64
		if o.explain {
			sig = map[string]float64{"relevance": rel, "recency": recency, "importance": h.Importance,
				"access": access, "decay": decay, "persona": persona, "boost": boost, "score": score}
			if semantic != nil {
				sig["semantic"], sig["text"] = semantic[h.ID], text
			}
			if o.scoring == ScoringSeed002 {
				sig["time_decay"] = timeDecay
			}
		}
		items = append(items, memoryItem(h.Memory, score, sig))
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Score != items[j].Score {
			return items[i].Score > items[j].Score
		}
		return items[i].ID < items[j].ID
	})
	return items
}

// rankOptions are what a request asks of memory ranking.
type rankOptions struct {
	persona, scoring, project string
	intent                    []memory.Kind
	tw                        *timeWindow
	explain                   bool
}

// accessSignal is access reinforcement that cannot run away: the count
// counts logarithmically up to 20 uses, and the whole fades with a
// two-week e-folding since the last use.
func accessSignal(m memory.Memory, now time.Time) float64 {
	if m.AccessCount <= 0 || m.LastAccessed.IsZero() {
		return 0
	}
	n := math.Min(1, math.Log1p(float64(m.AccessCount))/math.Log(21))
	return n * math.Exp(-now.Sub(m.LastAccessed).Hours()/(24*14))
}

// intents are the words that say which kind of memory a question is
// after: "what do I like" looks at preferences first, "how should I …" at
// the rules the user set, feelings at the events behind them.
var intents = []struct {
	kinds []memory.Kind
	words []string
}{
	{[]memory.Kind{memory.KindPreference}, []string{"do i like", "i like", "i prefer", "do i prefer", "my favorite", "my favourite",
		"i enjoy", "do i enjoy", "i love", "喜欢", "爱喝", "爱吃", "偏好", "最爱", "口味"}},
	{[]memory.Kind{memory.KindRule}, []string{"should i", "should we", "am i allowed", "rule", "how do we", "how should",
		"规则", "应该", "可以直接", "能不能", "要不要", "规定"}},
	{[]memory.Kind{memory.KindIdentity}, []string{"who am i", "my name", "where do i live", "how old am i",
		"我叫", "我是谁", "住在哪", "住哪"}},
	{[]memory.Kind{memory.KindError}, []string{"error", "bug", "crash", "exception", "报错", "错误", "崩溃", "异常"}},
	{[]memory.Kind{memory.KindContext}, []string{"i feel", "i'm feeling", "feeling", "i felt", "scared", "worried", "upset",
		"sad", "stressed", "miserable", "drained", "心情", "难过", "伤心", "焦虑", "害怕", "担心", "郁闷", "崩溃", "累死", "烦死"}},
}

// feedbackMemories is how many of the best memories lend their words to
// the turns (TurnOptions.Feedback), and feedbackCover the share of the
// question's own words one must hold for them to weigh in full (tuned on
// the dev sets and on LoCoMo 0–4 with its sessions ended, where rule
// extraction leaves a few memories per conversation: in full whatever
// they held, they cost 0.010 at 5 there).
const (
	feedbackMemories = 2
	feedbackCover    = 0.3
)

// asksFor returns the kinds of memory query asks for, or nil.
func asksFor(query string) []memory.Kind {
	lq := strings.ToLower(query)
	for _, in := range intents {
		for _, w := range in.words {
			if strings.Contains(lq, w) {
				return in.kinds
			}
		}
	}
	return nil
}

// finish fits the blocks to the budget, renders them, and records the
// memories used.
func (e *Engine) finish(req Request, b *Blocks, resp *Response, scope memory.Scope, now time.Time) {
	budget := contextblock.DefaultBudget()
	switch req.Budget {
	case PresetSeed002:
		budget = contextblock.Seed002Budget(max(req.BudgetTokens, 0))
	case PresetSeed000:
		budget = contextblock.Seed000Budget()
	}
	if req.BudgetTokens > 0 && req.Budget != PresetSeed002 {
		budget = budget.Scale(req.BudgetTokens)
	}
	var counter Counter = contextblock.Estimate{}
	if e.Tokens != nil {
		counter = e.Tokens(req.Model)
	}
	// What the agent is to ask goes after the memory, out of the profile
	// share (the cards' and theirs, seed 004 §5), at most half of it:
	// past that the last unconfirmed memories go, then the onboarding.
	shown := budget
	var asks string
	var askTokens int
	for {
		asks = renderAsks(req, *b, resp.Onboarding)
		askTokens = counter.Count(asks)
		if askTokens <= budget.Profile/2 {
			break
		}
		if n := len(b.Pending); n > 0 {
			b.Pending = b.Pending[:n-1]
			continue
		}
		resp.Onboarding = nil
	}
	budget.Profile -= askTokens
	budget.Total -= askTokens
	// Fit takes turns oldest first (it trims the oldest and renders them in
	// the order of the conversation); the response keeps them best first.
	chrono := slices.Clone(b.Turns)
	slices.SortStableFunc(chrono, func(x, y Item) int { return x.Time.Compare(y.Time) })
	cb := contextblock.Blocks{Profile: toCB(b.Profile), Scratchpad: toCB(b.Scratchpad), Memories: toCB(b.Memories),
		Episodes: toCB(b.Episodes), Turns: toCB(chrono), Attachments: toCB(b.Attachments), Window: toCB(b.Window)}
	fitted, rep := contextblock.Fit(cb, budget, counter)
	keep := func(items []Item, kept []contextblock.Item) []Item {
		tokens := map[string]int{}
		for _, k := range kept {
			tokens[k.ID] = k.Tokens
		}
		out := items[:0]
		for _, it := range items {
			if n, ok := tokens[it.ID]; ok {
				it.Tokens = n
				out = append(out, it)
			}
		}
		return out
	}
	b.Profile, b.Scratchpad = keep(b.Profile, fitted.Profile), keep(b.Scratchpad, fitted.Scratchpad)
	b.Memories, b.Episodes = keep(b.Memories, fitted.Memories), keep(b.Episodes, fitted.Episodes)
	b.Turns, b.Attachments = keep(b.Turns, fitted.Turns), keep(b.Attachments, fitted.Attachments)
	b.Window = keep(b.Window, fitted.Window)
	for _, l := range []*[]Item{&b.Profile, &b.Scratchpad, &b.Memories, &b.Episodes, &b.Turns, &b.Attachments, &b.Window, &b.Pending} {
		if *l == nil {
			*l = []Item{}
		}
	}
	resp.Blocks, resp.Tokens, resp.Dropped = *b, rep.Total+askTokens, rep.Dropped
	resp.Budget = shown
	resp.Rendered = contextblock.Render(fitted, req.Lang) + asks
	for i := range resp.Blocks.Pending {
		resp.Blocks.Pending[i].Tokens = counter.Count(resp.Blocks.Pending[i].Content)
	}
	if e.Recorder != nil {
		var ids []string
		for _, it := range append(append([]Item{}, b.Profile...), b.Memories...) {
			ids = append(ids, it.ID)
		}
		if len(ids) > 0 {
			e.Recorder.Accessed(scope, ids, now)
		}
	}
}

func toCB(items []Item) []contextblock.Item {
	out := make([]contextblock.Item, len(items))
	for i, it := range items {
		out[i] = contextblock.Item{ID: it.ID, Kind: it.Kind, Content: it.Content, Provenance: it.Provenance, Score: it.Score}
	}
	return out
}

func memoryItem(m memory.Memory, score float64, signals map[string]float64) Item {
	prov := fmt.Sprintf("memory %s · %s · %s", m.ID, m.Kind, m.Updated.Format("2006-01-02"))
	if m.SessionID != "" {
		prov += " · from session " + m.SessionID
	}
	kind := "memory"
	if m.Tier == 1 {
		kind = "profile"
	}
	return Item{ID: m.ID, Kind: kind, Content: m.Content, Provenance: prov, Score: score, SessionID: m.SessionID,
		Time: m.Updated, Signals: signals}
}

func turnItem(t memory.TurnHit, score float64, explain bool, signals map[string]float64) Item {
	idx := t.TurnIndex
	who := t.Role
	if t.Speaker != "" {
		who = t.Speaker
	}
	it := Item{ID: t.Key, Kind: "turn", Content: t.Content, Score: score, SessionID: t.SessionID, TurnIndex: &idx, Time: t.Time,
		Provenance: fmt.Sprintf("turn %s · %s · session %s, turn %d · %s", t.Key, who, t.SessionID, t.TurnIndex, t.Time.Format("2006-01-02 15:04"))}
	if explain {
		it.Signals = signals
	}
	return it
}

// memoryFeedback is what the best memories (contents, best first) lend
// the turns: their words (textseg.Query.Feedback), weighed among the turns
// the question reached (TurnOptions.Feedback). The best memories name, in
// the words the conversation used, what the question is about. They weigh
// in full once a memory holds feedbackCover of the question's own words,
// less below: a memory that shares nothing with the question may be the
// best of a few unrelated ones.
func (e *Engine) memoryFeedback(q textseg.Query, contents []string) (textseg.Query, TurnOptions) {
	opt := e.Turns
	if len(contents) == 0 {
		return textseg.Query{}, opt
	}
	cover := 0.0
	for _, c := range contents {
		cover = max(cover, covers(q, c))
	}
	opt.Feedback *= min(1, cover/feedbackCover)
	return q.Feedback(contents...), opt
}

// covers is the share of the weight of q's own words (the last
// utterance's: weight askedWeight and more) that text holds.
func covers(q textseg.Query, text string) float64 {
	toks := textseg.Tokens(text)
	var all, held float64
	for _, t := range q.Terms {
		if t.Weight < askedWeight {
			continue
		}
		all += t.Weight
		if slices.ContainsFunc(toks, func(tok string) bool {
			return tok == t.Token || (t.Prefix && strings.HasPrefix(tok, t.Token))
		}) {
			held += t.Weight
		}
	}
	if all == 0 {
		return 0
	}
	return held / all
}
