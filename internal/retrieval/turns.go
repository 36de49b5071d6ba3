package retrieval

import (
	"cmp"
	"context"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

// TurnStore is what turn recall needs from a read model.
type TurnStore interface {
	RecallTurns(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.TurnHit, error)
	// TurnsAround reads the turns within radius of each of hits but
	// their own, and one turn further for the first far hits.
	TurnsAround(ctx context.Context, scope memory.Scope, hits []memory.TurnHit, radius, far int) ([]memory.TurnHit, error)
}

// TurnWindowReader is what a store offers to read the turns said within
// a time: a question that names one ("三月初", "on 9 November, 2022") is
// about what was said then, even where no word of it matches.
type TurnWindowReader interface {
	// TurnsWithin returns a scope's turns said within [from, to), each
	// session's first turns first, up to limit.
	TurnsWithin(ctx context.Context, scope memory.Scope, from, to time.Time, limit int) ([]memory.TurnHit, error)
	// SaidWithin reports whether the scope has a turn said within
	// [from, to), reading none.
	SaidWithin(ctx context.Context, scope memory.Scope, from, to time.Time) (bool, error)
}

// TurnOptions tunes raw-turn recall.
type TurnOptions struct {
	// Candidates is how many turns BM25 returns before reranking.
	Candidates int
	// Radius is how far neighbour expansion reaches (0: none).
	Radius int
	// Far is how many of the best text hits reach one turn beyond Radius
	// (at the weight the distance gives): the same read, a few more rows,
	// where a larger Radius would widen every hit's.
	Far int
	// Next and Prev weigh what a turn passes to the turn after and before
	// it: an answer follows its question.
	Next, Prev float64
	// Answer is what a turn that asks something passes to the turn after
	// it on top of Next: that turn is its answer, which seldom repeats
	// the question's words ("What was it about?" — "It was a transgender
	// poetry reading…").
	Answer float64
	// Session weighs a boost for turns in the sessions where the query
	// matched best: a question is usually about one conversation.
	Session float64
	// SessionTop counts only the best this many text hits toward their
	// sessions' evidence (0: every candidate).
	SessionTop int
	// Window weighs how many of the query's terms a turn's window (the turn
	// and the two turns each side) covers: an answer is often split across
	// turns.
	Window float64
	// SessionCover weighs how many of the query's terms a turn's session
	// covers among the turns at hand: the conversation a question is about
	// holds all it names, if spread over its turns, where another may
	// repeat one of its words many times (which Session counts).
	SessionCover float64
	// Speaker is what a turn gains, as a share of its score, when the
	// query names who said it ("what did Caroline research?").
	Speaker float64
	// When is what a turn that says when ("last week", "in 2019") gains,
	// as a share of its score, for a question that asks when.
	When float64
	// Asking is what a turn that ends with a question loses, as a share
	// of its score: it hands the floor, and what it holds is mostly asked,
	// not told; the turn after it (Answer) tells.
	Asking float64
	// Then is the text score the first turn of a session said within the
	// time a question names starts from, and Then/(n+1) its turn n, for
	// the first ThenTurns such turns (a session's first turns first): a
	// conversation opens with its news, "my mom had a stroke the night
	// before last". The window's factor weighs them up again.
	Then      float64
	ThenTurns int
	// Spread is what a turn loses, as a share of its score, for each
	// turn of its session ranked above it, past the first spreadFrom, when
	// the question asks for many things ("what activities…", "how many
	// times…", textseg.Query.AsksMany): their evidence is spread over
	// conversations, and one session's neighbouring turns would crowd the
	// rest out.
	Spread float64
	// Feedback weighs how well a candidate matches the words of the best
	// memories the question found (textseg.Query.Feedback), scaled so the
	// best match is 1: among the turns the question reached, the one that
	// said what a memory records.
	Feedback float64
}

// DefaultTurnOptions are tuned on LoCoMo conversations 0–4 (ENGRAM_LOCOMO_EXPERIMENT=1 go
// test ./internal/retrieval prints the variants; make bench-locomo
// measures the default through /v1/context), but Feedback, which LoCoMo
// (no memories) cannot exercise: it is tuned on the dev sets, where 0.6
// to 1.3 all did as well.
func DefaultTurnOptions() TurnOptions {
	return TurnOptions{Candidates: 200, Radius: 1, Far: 30, Next: 0.2, Prev: 0.3, Answer: 0.6, Session: 0.3, SessionTop: 15, Window: 1.6, Speaker: 0.3, When: 0.4, Asking: 0.2, Then: 0.6, ThenTurns: 12, Spread: 0.3,
		Feedback: 0.8, SessionCover: 0.4}
}

// askedWeight is the least weight of the words the last utterance asks
// with: textseg weighs them 0.85 to 1 (the first words a little less),
// and its scene sentences, the lexicon's siblings and the recent messages
// 0.75 and less.
const askedWeight = 0.8

// ScoredTurn is a recalled turn with its signals.
type ScoredTurn struct {
	memory.TurnHit
	Text     float64 // BM25 scaled by the best hit's, in [0, 1]
	Neighbor float64 // what its neighbours passed on
	Feedback float64 // what matching the best memories' words adds
	Score    float64
}

// tokens is the turn's text as the index reads it, read once: the store
// keeps it for the turns it scored, and the neighbours read it here.
func (s *ScoredTurn) tokens() []string {
	if s.Tokens == nil {
		s.Tokens = textseg.StoredTokens(s.TurnHit.Text()) // s.Text is the score, not the turn's text
	}
	return s.Tokens
}

// rankTurns recalls a scope's turns for query: BM25 over the segmented
// text, then neighbour expansion — a turn next to a strong hit inherits
// part of its score, because in conversation the answer is often the turn
// after the one that shares the question's words. For a question that
// names a time (tw, nil when it names none) the turns said then are
// candidates too (Then), and the window's factor weighs every turn by it.
func rankTurns(ctx context.Context, st TurnStore, scope memory.Scope, q, fb textseg.Query, tw *timeWindow, opt TurnOptions) ([]ScoredTurn, error) {
	hits, err := st.RecallTurns(ctx, scope, q, opt.Candidates)
	if err != nil {
		return nil, err
	}
	return rankHits(ctx, st, scope, hits, q, fb, tw, opt)
}

// rankHits is rankTurns once the text search has found hits (RecallTurns
// for q, opt.Candidates of them).
func rankHits(ctx context.Context, st TurnStore, scope memory.Scope, hits []memory.TurnHit, q, fb textseg.Query, tw *timeWindow, opt TurnOptions) ([]ScoredTurn, error) {
	var err error
	var then []memory.TurnHit
	if r, ok := st.(TurnWindowReader); ok && tw != nil && opt.Then > 0 && opt.ThenTurns > 0 {
		if then, err = r.TurnsWithin(ctx, scope, tw.from, tw.to, opt.ThenTurns); err != nil {
			return nil, err
		}
	}
	if len(hits) == 0 && len(then) == 0 {
		return nil, nil
	}
	top := 0.0
	if len(hits) > 0 {
		top = hits[0].BM25
	}
	byKey := make(map[memory.TurnKey]*ScoredTurn, len(hits)+len(then))
	order := make([]memory.TurnKey, 0, len(hits)+len(then))
	// The turns are allocated a slab at a time, not each on its own (a
	// dialogue's are hundreds): a full slab is left as it is, so the
	// pointers into it stay good.
	slab := make([]ScoredTurn, 0, len(hits)+len(then))
	add := func(h memory.TurnHit) *ScoredTurn {
		k := memory.TurnKey{SessionID: h.SessionID, TurnIndex: h.TurnIndex}
		if st, ok := byKey[k]; ok {
			return st
		}
		if len(slab) == cap(slab) {
			slab = make([]ScoredTurn, 0, max(len(slab), 16))
		}
		slab = append(slab, ScoredTurn{TurnHit: h})
		st := &slab[len(slab)-1]
		byKey[k] = st
		order = append(order, k)
		return st
	}
	keys := make([]memory.TurnKey, 0, len(hits))
	for _, h := range hits {
		s := add(h)
		if top > 0 {
			s.Text = h.BM25 / top
		}
		keys = append(keys, memory.TurnKey{SessionID: h.SessionID, TurnIndex: h.TurnIndex})
	}
	for _, h := range then {
		s := add(h)
		s.Text = max(s.Text, opt.Then/float64(1+h.TurnIndex))
	}
	if opt.Radius > 0 {
		far := min(opt.Far, len(keys))
		around, err := st.TurnsAround(ctx, scope, hits, opt.Radius, far)
		if err != nil {
			return nil, err
		}
		slab = make([]ScoredTurn, 0, len(around))
		for _, h := range around {
			add(h)
		}
		for i, k := range keys {
			src := byKey[k]
			// Not ContainsAny: with a character outside ASCII in its set it
			// looks every rune of the turn up in the set.
			asks := strings.Contains(src.Content, "?") || strings.Contains(src.Content, "？")
			reach := opt.Radius
			if i < far {
				reach++
			}
			for d := 1; d <= reach; d++ {
				decay := 1 / float64(d)
				if n, ok := byKey[memory.TurnKey{SessionID: k.SessionID, TurnIndex: k.TurnIndex + d}]; ok {
					next := opt.Next
					if d == 1 && asks {
						next += opt.Answer
					}
					n.Neighbor = max(n.Neighbor, next*decay*src.Text)
				}
				if p, ok := byKey[memory.TurnKey{SessionID: k.SessionID, TurnIndex: k.TurnIndex - d}]; ok {
					p.Neighbor = max(p.Neighbor, opt.Prev*decay*src.Text)
				}
			}
		}
	}
	if opt.Feedback > 0 && !fb.Empty() {
		feedback(byKey, fb, opt.Feedback)
	}
	var sessions map[string]float64
	if opt.Session > 0 {
		text := make([]float64, len(keys))
		for i, k := range keys {
			text[i] = byKey[k].Text
		}
		sessions = sessionEvidence(keys, text, opt.SessionTop)
	}
	var cover *coverer
	if (opt.Window > 0 || opt.SessionCover > 0) && len(q.Terms) > 0 {
		// The heaviest terms say what is asked; a dialogue's long tail of
		// context words would only slow the count.
		cover = newCoverer(q.Terms, byKey)
	}
	named := map[string]bool{}
	for _, t := range q.Terms {
		if t.Weight >= askedWeight {
			named[t.Surface] = true
		}
	}
	ranked := make([]*ScoredTurn, 0, len(order))
	for _, k := range order {
		s := byKey[k]
		s.Score = s.Text + s.Neighbor + s.Feedback + opt.Session*sessions[k.SessionID]
		if cover != nil {
			s.Score += opt.Window*cover.share(cover.window[s]) + opt.SessionCover*cover.share(cover.session[s])
		}
		if opt.Speaker > 0 && s.Speaker != "" && named[strings.ToLower(s.Speaker)] {
			s.Score *= 1 + opt.Speaker
		}
		if opt.Asking > 0 && endsAsking(s.Content) {
			s.Score *= 1 - opt.Asking
		}
		if q.AsksWhen && opt.When > 0 && textseg.MentionsTime(s.Content) {
			s.Score *= 1 + opt.When
		}
		if tw != nil {
			// A question about a time: what was said then counts more.
			s.Score *= tw.factor(s.Time)
		}
		ranked = append(ranked, s)
	}
	// Sorted as pointers: a ScoredTurn is a few hundred bytes, and moving
	// hundreds of them by reflection was a twentieth of a search.
	slices.SortStableFunc(ranked, func(a, b *ScoredTurn) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(a.ID, b.ID)
	})
	out := make([]ScoredTurn, len(ranked))
	for i, s := range ranked {
		out[i] = *s
	}
	if opt.Spread > 0 && q.AsksMany {
		spread(out, opt.Spread)
	}
	return out, nil
}

// spreadFrom is how many of the best turns spread leaves in place, and
// spreadOver how many it reorders.
const (
	spreadFrom = 5
	spreadOver = 60
)

// spread reorders turns (best first) past the first spreadFrom: each next
// place goes to the best turn once every turn is discounted by pen for
// each turn of its session already placed, and that discounted score is
// its score.
func spread(turns []ScoredTurn, pen float64) {
	n := min(len(turns), spreadOver)
	placed := map[string]int{}
	for i := range min(spreadFrom, n) {
		placed[turns[i].SessionID]++
	}
	for i := spreadFrom; i < n; i++ {
		best, bs := i, -1.0
		for j := i; j < n; j++ {
			sc := turns[j].Score * math.Pow(1-pen, float64(placed[turns[j].SessionID]))
			if sc > bs {
				best, bs = j, sc
			}
		}
		// Keep the others in their order: move the chosen one up, at the
		// score it was chosen by (never above the one before it), so a
		// later sort by score keeps this order.
		chosen := turns[best]
		chosen.Score = bs
		copy(turns[i+1:best+1], turns[i:best])
		turns[i] = chosen
		placed[chosen.SessionID]++
	}
}

// sessionEvidence is how strongly each session matched the query, scaled
// so the strongest is 1: the sum of its turns' text scores among the best
// top hits (keys, best first; 0: all of them). Counting only the best
// keeps a session with many weak matches (a word it repeats) from
// outweighing one with a few strong ones.
func sessionEvidence(keys []memory.TurnKey, text []float64, top int) map[string]float64 {
	sessions := map[string]float64{}
	for i, k := range keys {
		if top > 0 && i >= top {
			break
		}
		sessions[k.SessionID] += text[i]
	}
	best := 0.0
	for _, v := range sessions {
		best = max(best, v)
	}
	if best > 0 {
		for id, v := range sessions {
			sessions[id] = v / best
		}
	}
	return sessions
}

// endsAsking reports whether a turn ends with a question.
func endsAsking(content string) bool {
	c := strings.TrimSpace(content)
	return strings.HasSuffix(c, "?") || strings.HasSuffix(c, "？")
}

// maxCoverTerms bounds the terms the window's and the session's cover
// count.
const maxCoverTerms = 32

// coverRadius is how far a turn's window reaches each side. Two turns:
// a question and its answer often lie a follow-up apart ("What was it
// about?" — "Which one?" — "The one in May…"), and either may hold the
// words the other lacks.
const coverRadius = 2

// coverer measures how much of the query a turn's window (the turn and
// the coverRadius turns each side) covers, and how much its session's
// turns at hand cover between them: an answer is often split across
// turns. Each term counts its weight times its IDF among the turns at
// hand, so a window holding the one rare word of a question covers more
// of it than one holding the words every candidate shares.
type coverer struct {
	weight []float64
	total  float64
	// The terms each turn's window and session hold, as bit sets (bit i:
	// the i-th term), found once for every turn: hundreds of turns a
	// query, each window a few of them.
	window, session map[*ScoredTurn]termSet
}

// termSet is a set of the coverer's terms, at most maxCoverTerms of them.
type termSet uint64

var _ [64 - maxCoverTerms]struct{} // maxCoverTerms fits a termSet

// It counts the heaviest maxCoverTerms of terms but the dictionaries'
// (Term.Dictionary): a word's near-synonyms and its other language, mostly
// absent from a user's words, would only shrink every window's share.
func newCoverer(terms []textseg.Term, turns map[memory.TurnKey]*ScoredTurn) *coverer {
	own := make([]textseg.Term, 0, maxCoverTerms)
	for _, t := range terms {
		if !t.Dictionary && len(own) < maxCoverTerms {
			own = append(own, t)
		}
	}
	terms = own
	c := &coverer{weight: make([]float64, len(terms)), window: make(map[*ScoredTurn]termSet, len(turns)), session: make(map[*ScoredTurn]termSet, len(turns))}
	df := make([]int, len(terms))
	// Each turn's tokens are looked up among the terms, not made into a
	// set of their own: hundreds of turns a query, each a map to fill.
	index := make(map[string][]int, len(terms))
	var prefixed []int
	for i, term := range terms {
		index[term.Token] = append(index[term.Token], i)
		if term.Prefix {
			prefixed = append(prefixed, i)
		}
	}
	type held struct {
		turn *ScoredTurn
		has  termSet
	}
	sessions := map[string][]held{}
	for _, t := range turns {
		var h termSet
		for _, tok := range t.tokens() {
			for _, i := range index[tok] {
				h |= 1 << i
			}
			for _, i := range prefixed {
				if h&(1<<i) == 0 && strings.HasPrefix(tok, terms[i].Token) {
					h |= 1 << i
				}
			}
		}
		for i := range terms {
			if h&(1<<i) != 0 {
				df[i]++
			}
		}
		sessions[t.SessionID] = append(sessions[t.SessionID], held{t, h})
	}
	// A session's turns in order: each window is its neighbours in the
	// list, no lookup.
	for _, run := range sessions {
		slices.SortFunc(run, func(a, b held) int { return cmp.Compare(a.turn.TurnIndex, b.turn.TurnIndex) })
		var all termSet
		for _, t := range run {
			all |= t.has
		}
		for i, t := range run {
			w := t.has
			for j := i - 1; j >= 0 && t.turn.TurnIndex-run[j].turn.TurnIndex <= coverRadius; j-- {
				w |= run[j].has
			}
			for j := i + 1; j < len(run) && run[j].turn.TurnIndex-t.turn.TurnIndex <= coverRadius; j++ {
				w |= run[j].has
			}
			c.window[t.turn], c.session[t.turn] = w, all
		}
	}
	for i, term := range terms {
		c.weight[i] = term.Weight * textseg.IDF(len(turns), df[i])
		c.total += c.weight[i]
	}
	return c
}

// share is the share of the query's weight the terms of h hold.
func (c *coverer) share(h termSet) float64 {
	if c.total == 0 {
		return 0
	}
	found := 0.0
	for h != 0 {
		found += c.weight[bits.TrailingZeros64(uint64(h))]
		h &= h - 1
	}
	return found / c.total
}

// feedback scores every candidate for fb, the words of the best memories,
// with BM25 over the candidates themselves (no read: they are at hand),
// and gives each w times its score over the best one's.
func feedback(byKey map[memory.TurnKey]*ScoredTurn, fb textseg.Query, w float64) {
	texts := make([]string, 0, len(byKey))
	turns := make([]*ScoredTurn, 0, len(byKey))
	st := textseg.Stats{DF: map[string]int{}}
	total := 0
	want := map[string]bool{}
	for _, t := range fb.Terms {
		want[t.Token] = true
	}
	var toks [][]string
	for _, s := range byKey {
		text := s.TurnHit.Text()
		tt := s.tokens()
		toks = append(toks, tt)
		total += len(tt)
		seen := map[string]bool{}
		for _, tok := range tt {
			if want[tok] && !seen[tok] {
				seen[tok] = true
				st.DF[tok]++
			}
		}
		texts = append(texts, text)
		turns = append(turns, s)
	}
	st.Docs = len(texts)
	st.AvgLen = float64(total) / float64(max(len(texts), 1))
	sc := textseg.NewScorer(fb, st)
	scores := make([]float64, len(texts))
	best := 0.0
	for i, t := range texts {
		scores[i], _ = sc.ScoreTokens(t, toks[i])
		best = max(best, scores[i])
	}
	if best <= 0 {
		return
	}
	for i, s := range turns {
		s.Feedback = w * scores[i] / best
	}
}
