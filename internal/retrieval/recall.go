package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/prefilter"
	"github.com/engramhq/engram/internal/textseg"
	"github.com/sourcegraph/conc"
)

// The recall paths of a context request, one method each: memories (by
// text, by the time a question names, by vectors), raw turns with their
// attachments, episodes, daily summaries, and the recent turns.
//
// One rule for a read that fails: the answer goes on without what that
// path would have found, names the fall in Response.Degraded and reports
// it to Engine.Degraded, which logs it once; no read error is dropped. A
// full-text path that fails takes the other full-text paths with it (the
// index is likelier broken than one query) and the recent turns answer
// ("fts->recent").

// Falls are the falls down the degradation chain a response can name
// (Response.Degraded reads from->to), so their metrics can exist before
// the first one happens: those a retrieval.degraded event carries.
//
//	fts->recent      full text failed: recent turns and the profile answer
//	vectors->fts     the semantic path failed: full text alone
//	time->fts        the memories written within an asked time were not read
//	anchor->latest   a yearless time stays in its latest year
//	episodes, daily, recent, scratchpad->none: that block is left out
//	attachments->none  a turn's attachments could not be read
//	identity->none   the agent's card and the onboarding were not read
//	pending->none    the unconfirmed memories were not read
var Falls = events.RetrievalFalls

// fall records that a path failed: in the response, and once to Degraded.
func (e *Engine) fall(scope memory.Scope, resp *Response, from, to string, err error) {
	resp.Degraded = append(resp.Degraded, from+"->"+to)
	if e.Degraded != nil {
		e.Degraded(scope, from, to, err.Error())
	}
}

// asked is one reading of a request, which every recall path searches
// with.
type asked struct {
	scope memory.Scope
	req   Request
	now   time.Time
	// q reads the last utterance and the recent messages before it: the
	// last utterance weighs most, the recent messages add their words at
	// weights that fall with distance (seed 000 §5.5).
	q textseg.Query
	// searchable: q has words worth searching by text. A query of
	// stopwords alone ("what about that?") with no recent message to lend
	// it words matches nearly every turn and would rank them by noise:
	// then only the recent turns, the profile and vectors answer.
	searchable bool
	project    string      // the known project the query names, or ""
	tw         *timeWindow // the time the query asks about, or nil
	limit      int         // how many raw turns to list as evidence
}

// recall runs a request's recall paths and fills its long-term and
// recent blocks.
type recall struct {
	e    *Engine
	a    asked
	b    *Blocks
	resp *Response
	// textFailed: a full-text read failed; the other full-text paths are
	// not tried.
	textFailed bool
}

func (r *recall) fall(from, to string, err error) { r.e.fall(r.a.scope, r.resp, from, to, err) }

func (r *recall) textFails(err error) {
	r.textFailed = true
	r.fall("fts", "recent", err)
}

// recall reads the request once and runs every recall path.
func (e *Engine) recall(ctx context.Context, scope memory.Scope, req Request, now time.Time, projects []string, b *Blocks, resp *Response) {
	recent := make([]string, 0, len(req.RecentMessages))
	for i := len(req.RecentMessages) - 1; i >= 0; i-- {
		if c := strings.TrimSpace(req.RecentMessages[i].Content); c != "" {
			recent = append(recent, c)
		}
	}
	q := textseg.Understand(req.Query, recent...)
	a := asked{scope: scope, req: req, now: now, q: q, searchable: !q.Empty() && !q.Uninformative,
		project: prefilter.MentionedProject(req.Query, projects), limit: req.TurnLimit}
	if a.limit == 0 {
		a.limit = 8
	}
	r := &recall{e: e, a: a, b: b, resp: resp}
	// A question about a time ("三月初", "late May", "上周") recalls what
	// was written and said then, even when no word matches.
	tw, err := askedWindow(ctx, e.Store, scope, req.Query, now, e.Weights.Time)
	if err != nil {
		r.fall("anchor", "latest", err)
	}
	r.a.tw = tw
	// The turns' text search needs nothing the memories find (their words
	// weigh in after it, memoryFeedback): it runs beside the memories'
	// paths, on a connection of its own.
	found := r.searchTurns(ctx)
	defer found.wait() // the search is the request's: waited for whatever comes before
	r.memories(ctx)
	r.turns(ctx, found)
	r.episodes(ctx)
	r.daily(ctx)
	r.recent(ctx)
}

// memories recalls memories by text, then those written within the time
// the question names, then by vectors, and ranks them.
func (r *recall) memories(ctx context.Context) {
	a, e := &r.a, r.e
	var hits []memory.MemoryHit
	if a.searchable {
		var err error
		if hits, err = e.Store.RecallMemories(ctx, a.scope, a.q, e.PerPath); err != nil {
			r.textFails(fmt.Errorf("recall memories: %w", err))
		}
	}
	if a.tw != nil && !r.textFailed {
		then, err := e.Store.Memories(ctx, memory.MemoryQuery{Scope: a.scope, CreatedFrom: a.tw.from, CreatedTo: a.tw.to, Limit: e.PerPath})
		if err != nil {
			r.fall("time", "fts", fmt.Errorf("memories written within the time asked: %w", err))
		}
		for _, m := range then {
			if !slices.ContainsFunc(hits, func(h memory.MemoryHit) bool { return h.ID == m.ID }) {
				hits = append(hits, memory.MemoryHit{Memory: m})
			}
		}
	}
	var semantic map[string]float64
	if e.Vectors != nil {
		semantic, hits = r.semantic(ctx, hits)
	}
	r.b.Memories = e.rankMemories(hits, semantic, a.now, rankOptions{persona: a.req.Persona, scoring: a.req.Scoring,
		project: a.project, intent: asksFor(a.req.Query), tw: a.tw, explain: a.req.Explain})
	// A profile memory the query also matches is in the profile card
	// already; listed twice it would be rendered and charged twice.
	r.b.Memories = slices.DeleteFunc(r.b.Memories, func(it Item) bool {
		return slices.ContainsFunc(r.b.Profile, func(p Item) bool { return p.ID == it.ID })
	})
}

// turnSearch is the text search of a request's turns, running.
type turnSearch struct {
	wg   conc.WaitGroup
	hits []memory.TurnHit
	err  error
}

// searchTurns starts the turns' text search, the first read of turns,
// or returns nil when the request has no words worth searching by text.
func (r *recall) searchTurns(ctx context.Context) *turnSearch {
	if !r.a.searchable {
		return nil
	}
	s := &turnSearch{}
	s.wg.Go(func() {
		s.hits, s.err = r.e.Store.RecallTurns(ctx, r.a.scope, r.a.q, r.e.Turns.Candidates)
	})
	return s
}

// wait waits for the search to end; a panic in it panics here, on the
// request's goroutine, as it did when the read ran there.
func (s *turnSearch) wait() {
	if s != nil {
		s.wg.Wait()
	}
}

// turns recalls raw turns with their neighbours (seed 000: the raw text
// gets used), led by the words of the best memories, and the attachments
// of those turns that hold the question's words (rankAttachments). found
// is the turns' text search (searchTurns), which it waits for.
func (r *recall) turns(ctx context.Context, found *turnSearch) {
	a, e := &r.a, r.e
	if found == nil {
		return
	}
	found.wait()
	if r.textFailed {
		return
	}
	contents := make([]string, 0, feedbackMemories)
	for _, m := range r.b.Memories[:min(feedbackMemories, len(r.b.Memories))] {
		contents = append(contents, m.Content)
	}
	fb, topt := e.memoryFeedback(a.q, contents)
	err := found.err
	var turns []ScoredTurn
	if err == nil {
		turns, err = rankHits(ctx, e.Store, a.scope, found.hits, a.q, fb, a.tw, topt)
	}
	if err != nil {
		r.textFails(fmt.Errorf("recall turns: %w", err))
		return
	}
	for _, t := range turns[:min(a.limit, len(turns))] {
		r.b.Turns = append(r.b.Turns, turnItem(t.TurnHit, t.Score, a.req.Explain, map[string]float64{
			"text": t.Text, "neighbor": t.Neighbor, "feedback": t.Feedback, "score": t.Score}))
	}
	atts, err := rankAttachments(a.q, a.req.Query, turns)
	if err != nil {
		r.fall("attachments", "none", err)
	}
	for _, s := range atts[:min(maxAttachments, len(atts))] {
		r.b.Attachments = append(r.b.Attachments, attachmentItem(s, a.req.Explain))
	}
}

// episodes recalls episodes by text, when the store has them.
func (r *recall) episodes(ctx context.Context) {
	er, ok := r.e.Store.(EpisodeRecaller)
	if !ok || r.textFailed || !r.a.searchable {
		return
	}
	eps, err := er.RecallEpisodes(ctx, r.a.scope, r.a.q, 5)
	if err != nil {
		r.fall("episodes", "none", fmt.Errorf("recall episodes: %w", err))
		return
	}
	for i, ep := range eps {
		r.b.Episodes = append(r.b.Episodes, Item{ID: ep.ID, Kind: "episode", Content: ep.Summary,
			Provenance: fmt.Sprintf("episode %s · %s · %s", ep.ID, ep.Outcome, ep.Started.Format("2006-01-02")),
			Score:      1 / float64(i+1), SessionID: ep.SessionID, Time: ep.Started})
	}
}

// daily recalls daily summaries (tier 3: migrated dated logs, daily
// compression) by text and by the date a question names.
func (r *recall) daily(ctx context.Context) {
	dr, ok := r.e.Store.(DailyRecaller)
	tw := r.a.tw
	if !ok || r.textFailed || !(r.a.searchable || tw != nil) {
		return
	}
	from, to := "", ""
	if tw != nil {
		from, to = tw.from.Format("2006-01-02"), tw.to.Format("2006-01-02")
	}
	days, err := dr.RecallDailySummaries(ctx, r.a.scope, r.a.q, from, to, 3)
	if err != nil {
		r.fall("daily", "none", fmt.Errorf("recall daily summaries: %w", err))
		return
	}
	// A day whose own turns the block already quotes would only say
	// their words again (today's log of a live conversation, above all),
	// unless the question asks about a time: then the day's log is the
	// answer.
	quoted := map[string]bool{}
	if tw == nil {
		for _, it := range r.b.Turns {
			quoted[it.Time.Local().Format(time.DateOnly)] = true
		}
	}
	i := 0
	for _, d := range days {
		if quoted[d.Date] {
			continue
		}
		i++
		at, _ := time.Parse("2006-01-02", d.Date) // the store writes it; a bad one only loses the item's time
		r.b.Episodes = append(r.b.Episodes, Item{ID: "daily_" + d.Date + "_" + d.Channel, Kind: "daily", Content: d.Summary,
			Provenance: fmt.Sprintf("daily summary · %s · %s", d.Date, d.Channel), Score: 0.5 / float64(i), Time: at})
	}
}

// recent adds the last three days' turns, always: what the user did
// recently matters even when the words differ, and it is the only path
// left when text failed.
func (r *recall) recent(ctx context.Context) {
	recent, err := r.e.Store.RecentTurns(ctx, r.a.scope, r.a.now.Add(-72*time.Hour), 6)
	if err != nil {
		r.fall("recent", "none", fmt.Errorf("recent turns: %w", err))
		return
	}
	seen := map[string]bool{}
	for _, it := range r.b.Turns {
		seen[it.ID] = true
	}
	for _, t := range recent {
		if seen[t.Key] || len(r.b.Turns) >= r.a.limit+3 {
			continue
		}
		r.b.Turns = append(r.b.Turns, turnItem(t, 0.1, r.a.req.Explain, map[string]float64{"recent": 1}))
	}
}
