package retrieval

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

var _ memory.Searcher = (*Engine)(nil)

// Search finds what q.Scope's memory holds about q.Text (GET /v1/search,
// the NATS search service): active memories, raw turns and daily
// summaries, and the attachments of the turns found that hold the
// query's own words (rankAttachments), merged best first. It reads the
// query as /v1/context does (textseg.Understand), and ranks turns as /v1/context does: rankTurns
// (neighbours, the answer after its question, the conversation cues, a
// time the query names, the words of the best two memories). A search and
// a context request for the same words find the same turns in the same
// order, where they agree on the best two memories (a search ranks
// memories by their words alone).
//
// Scores of the lists are not on one scale, so each is scaled by its own
// best before merging; a memory, being distilled, wins a tie with a turn,
// and a day's summary, being broader, ranks below the best of both. A
// query of stopwords alone is merged newest first, its turns as the index
// finds them (the newest matches), without the conversation cues: its
// words say nothing to weigh a turn by.
func (e *Engine) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	if err := q.Normalize(); err != nil {
		return nil, err
	}
	if len(textseg.Terms(q.Text)) == 0 {
		return []memory.SearchResult{}, nil
	}
	query := textseg.Understand(q.Text)
	informative := textseg.Informative(q.Text)
	mems, err := e.Store.RecallMemories(ctx, q.Scope, query, q.Limit)
	if err != nil {
		return nil, err
	}
	var turns []ScoredTurn
	if informative {
		contents := make([]string, 0, feedbackMemories)
		for _, m := range mems[:min(feedbackMemories, len(mems))] {
			contents = append(contents, m.Content)
		}
		fb, opt := e.memoryFeedback(query, contents)
		tw, err := askedWindow(ctx, e.Store, q.Scope, q.Text, e.Now(), e.Weights.Time)
		if err != nil {
			return nil, err
		}
		if turns, err = rankTurns(ctx, e.Store, q.Scope, query, fb, tw, opt); err != nil {
			return nil, err
		}
		// Evidence that says nothing ("Understood.") ranks after evidence
		// that does, as in /v1/context.
		// The turns come best first, and only one above the floor can
		// move: the check stops at the floor, or once q.Limit turns that
		// say something are above it, since nothing after them can enter
		// the list (isFiller understands a turn as a query, and a common
		// word brings hundreds).
		if len(turns) > 0 {
			floor := fillerScore * turns[0].Score
			said := 0
			for i := 0; i < len(turns) && turns[i].Score > floor && said < q.Limit; i++ {
				if isFiller(turns[i].Content) {
					turns[i].Score = min(turns[i].Score, floor)
				} else {
					said++
				}
			}
			slices.SortStableFunc(turns, func(a, b ScoredTurn) int { return cmp.Compare(b.Score, a.Score) })
		}
	} else {
		hits, err := e.Store.RecallTurns(ctx, q.Scope, query, q.Limit)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			turns = append(turns, ScoredTurn{TurnHit: h, Score: h.BM25})
		}
	}
	var atts []scoredAttachment
	if informative {
		if atts, err = rankAttachments(query, q.Text, turns); err != nil {
			return nil, err
		}
		atts = atts[:min(len(atts), q.Limit)]
	}
	turns = turns[:min(len(turns), q.Limit)]
	var days []memory.DailySummary
	if dr, ok := e.Store.(DailyRecaller); ok {
		if days, err = dr.RecallDailySummaries(ctx, q.Scope, query, "", "", q.Limit); err != nil {
			return nil, err
		}
	}
	out := make([]memory.SearchResult, 0, len(mems)+len(turns)+len(atts)+len(days))
	for _, m := range mems {
		out = append(out, memory.SearchResult{ID: m.ID, Kind: memory.ResultMemory, Content: m.Content, Score: m.BM25,
			SessionID: m.SessionID, TurnIndex: -1, Time: m.Updated})
	}
	for _, t := range turns {
		out = append(out, memory.SearchResult{ID: t.Key, Kind: memory.ResultTurn, Content: t.Content, Score: t.Score,
			SessionID: t.SessionID, TurnIndex: t.TurnIndex, Role: t.Role, Time: t.Time})
	}
	scaleTo(out[:len(mems)], 1.0)
	scaleTo(out[len(mems):], 0.95)
	// An attachment's score is already a share of the question's words it
	// holds, in (0, 1], plus its kind's bonus: scaled as a turn's.
	for _, a := range atts {
		out = append(out, memory.SearchResult{ID: a.id(), Kind: memory.ResultAttachment, Content: a.content(),
			Score: 0.95 * min(1, a.score()), SessionID: a.turn.SessionID, TurnIndex: a.turn.TurnIndex, Role: a.turn.Role,
			Time: a.turn.Time})
	}
	for i, d := range days {
		at, _ := time.Parse("2006-01-02", d.Date)
		out = append(out, memory.SearchResult{ID: "daily_" + d.Date + "_" + d.Channel, Kind: memory.ResultDaily,
			Content: d.Summary, Score: 0.9 / float64(i+1), TurnIndex: -1, Time: at})
	}
	if informative {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	} else {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	}
	return out[:min(len(out), q.Limit)], nil
}

// scaleTo scales a list so its best score is weight.
func scaleTo(rs []memory.SearchResult, weight float64) {
	top := 0.0
	for _, r := range rs {
		top = max(top, r.Score)
	}
	if top <= 0 {
		return
	}
	for i := range rs {
		rs[i].Score = weight * rs[i].Score / top
	}
}
