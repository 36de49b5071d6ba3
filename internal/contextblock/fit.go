package contextblock

import (
	"cmp"
	"slices"

	"github.com/engramhq/engram/internal/memory"
)

// Item kinds.
const (
	KindProfile    = "profile"
	KindScratchpad = "scratchpad"
	KindMemory     = "memory"
	KindEpisode    = "episode"
	KindTurn       = "turn"
	KindAttachment = "attachment"
	// KindSummary is a summary of the turns that left a session window.
	KindSummary = "summary"
)

// Item is one piece of stored text offered for the prompt.
type Item struct {
	ID      string
	Kind    string // KindProfile, KindScratchpad, …
	Content string
	// Provenance says where the text came from, e.g. "memory m_ab12 ·
	// preference · 2026-03-01 · from session s-42"; Render prints it after
	// the quote (Kind and ID when it is empty).
	Provenance string
	Score      float64 // higher is more relevant; orders trimming of long-term items and attachments
	Tokens     int     // set by Fit: what the item's rendered line costs
	// rendered is the line Fit counted, with what it was made of, for
	// Render to write rather than make again (cleaning and quoting every
	// rune of a long turn twice).
	rendered *rendered
}

// rendered is an item's line and the fields it was rendered from.
type rendered struct {
	id, kind, content, provenance, line string
}

// lineOf is the line of it: the one Fit made, while the fields it was
// made of are unchanged.
func lineOf(it Item) string {
	if r := it.rendered; r != nil && r.id == it.ID && r.kind == it.Kind && r.content == it.Content && r.provenance == it.Provenance {
		return r.line
	}
	return line(it)
}

// Blocks are the items of a context block by section, in the order Render
// prints them. Turns are oldest first; the other sections are in the
// order the caller wants them shown.
//
// Window is the current session as the agent had it (seed 002 §4's
// short-term memory): a summary of what has left it, if any, then its
// latest turns, oldest first. Turns are evidence recalled from anywhere.
type Blocks struct {
	Profile, Scratchpad, Memories, Episodes, Turns, Attachments, Window []Item
}

// Len is the number of items in b.
func (b Blocks) Len() int {
	return len(b.Profile) + len(b.Scratchpad) + len(b.Memories) + len(b.Episodes) + len(b.Turns) + len(b.Attachments) + len(b.Window)
}

// Counter counts tokens the way the caller's model family does.
type Counter interface {
	Count(string) int
}

// CounterFunc adapts a function to Counter.
type CounterFunc func(string) int

// Count calls f.
func (f CounterFunc) Count(s string) int { return f(s) }

// Estimate counts with memory.EstimateTokens, for callers with no
// tokenizer of their own.
type Estimate struct{}

// Count estimates s's tokens.
func (Estimate) Count(s string) int { return memory.EstimateTokens(s) }

// Report says what Fit kept and dropped.
type Report struct {
	Profile, Recent, LongTerm int // tokens kept in each tier
	Total                     int // their sum
	Limit                     int // Budget.Limit(): what Fit could fill
	// ProfileOver is how far the profile card as offered exceeded
	// Budget.Profile (before trimming).
	ProfileOver int
	Over        int      // tokens beyond Limit; only a single item larger than the limit causes it
	Dropped     []string // IDs of the items left out, in the order they were dropped
	Trimmed     bool     // anything was dropped
}

// Fit trims b to budget, counting each item's rendered line with c (nil
// means Estimate). It returns the items kept, in their original order and
// with Tokens set, and a Report.
//
// The profile card (Profile and Scratchpad) is cut to its share, lowest
// Score first (the core profile's scores are importances), and the
// session Window to the recent share, oldest first, its summary last:
// a card of a hundred entries or a session of hundreds of turns pays for
// itself, not with the evidence that answers the question. Past that,
// when everything fits in Budget.Limit(), nothing is dropped, whatever
// the shares say: a tier may use what another leaves unused. When it does
// not fit, items are dropped in this order until it does:
//
//  1. (the profile card and the window, as said);
//  2. long-term (Memories and Episodes together), lowest Score first,
//     while long-term holds more than its share;
//  3. recent, while it holds more than its share: Attachments lowest
//     Score first, then Turns (recalled evidence) lowest Score first, the
//     older first among equals, so filler ("Understood.", "好的") goes
//     before evidence;
//  4. long-term, recent (the window last) and the profile card again,
//     below their shares, in that order: shares adding up to more than
//     the limit are paid for so, and the total never passes the limit.
//
// So each tier keeps its share when the others overflow theirs, and seed
// 004 §5's order holds. Because items are whole, a drop can free more than
// needed; dropped items that fit in what is left are then put back,
// highest Score first, recent before long-term before the profile. The
// Window is not put back, so the session stays one unbroken window. Ties
// in Score drop the later item first.
func Fit(b Blocks, budget Budget, c Counter) (Blocks, Report) {
	if c == nil {
		c = Estimate{}
	}
	out := Blocks{
		Profile:     count(b.Profile, c),
		Scratchpad:  count(b.Scratchpad, c),
		Memories:    count(b.Memories, c),
		Episodes:    count(b.Episodes, c),
		Turns:       count(b.Turns, c),
		Attachments: count(b.Attachments, c),
		Window:      count(b.Window, c),
	}
	profile := sum(out.Profile) + sum(out.Scratchpad)
	recent := sum(out.Turns) + sum(out.Attachments) + sum(out.Window)
	long := sum(out.Memories) + sum(out.Episodes)
	limit := budget.Limit()
	profileOver := max(0, profile-budget.Profile)

	profileQ := byScore(out.Profile, out.Scratchpad)
	longQ := byScore(out.Memories, out.Episodes)
	recentQ := append(byScore(out.Attachments), turnsByScore(out.Turns)...)
	dropped := map[*Item]bool{}
	var order []*Item
	over := func() int { return profile + recent + long - limit }
	drop := func(q *[]*Item, tier *int, floor int) {
		for over() > 0 && *tier > floor && len(*q) > 0 {
			it := (*q)[0]
			*q = (*q)[1:]
			if it.Tokens == 0 {
				continue
			}
			dropped[it] = true
			order = append(order, it)
			*tier -= it.Tokens
		}
	}
	// The profile card and the session window keep to their shares even
	// when the whole would fit: each is a running text (a core profile of
	// a hundred entries, a session of hundreds of turns) that would take
	// whatever room it is given.
	capTier := func(q *[]*Item, tier *int, share int) {
		for *tier > share && len(*q) > 0 {
			it := (*q)[0]
			*q = (*q)[1:]
			if it.Tokens == 0 {
				continue
			}
			dropped[it] = true
			order = append(order, it)
			*tier -= it.Tokens
		}
	}
	capTier(&profileQ, &profile, budget.Profile)
	windowQ := windowOrder(out.Window)
	window := sum(out.Window)
	before := window
	capTier(&windowQ, &window, budget.Recent)
	recent -= before - window
	drop(&longQ, &long, budget.LongTerm)
	drop(&recentQ, &recent, budget.Recent)
	drop(&longQ, &long, 0)
	drop(&recentQ, &recent, 0)
	drop(&windowQ, &recent, 0)
	drop(&profileQ, &profile, 0)

	// Put back what fits in the room a large drop left, the profile card
	// within its share; the window stays out.
	for _, tier := range []struct {
		items []*Item
		total *int
		cap   int
	}{{append(byScore(out.Attachments), turnsByScore(out.Turns)...), &recent, limit},
		{byScore(out.Memories, out.Episodes), &long, limit},
		{byScore(out.Profile, out.Scratchpad), &profile, budget.Profile}} {
		for i := len(tier.items) - 1; i >= 0; i-- {
			it := tier.items[i]
			if dropped[it] && it.Tokens <= -over() && *tier.total+it.Tokens <= tier.cap {
				delete(dropped, it)
				*tier.total += it.Tokens
			}
		}
	}

	r := Report{
		Profile:     profile,
		Recent:      recent,
		LongTerm:    long,
		Total:       profile + recent + long,
		Limit:       limit,
		ProfileOver: profileOver,
		Over:        max(0, over()),
	}
	for _, it := range order {
		if dropped[it] {
			r.Dropped = append(r.Dropped, it.ID)
		}
	}
	r.Trimmed = len(r.Dropped) > 0
	if r.Trimmed {
		out.Profile = keep(out.Profile, dropped)
		out.Scratchpad = keep(out.Scratchpad, dropped)
		out.Memories = keep(out.Memories, dropped)
		out.Episodes = keep(out.Episodes, dropped)
		out.Turns = keep(out.Turns, dropped)
		out.Attachments = keep(out.Attachments, dropped)
		out.Window = keep(out.Window, dropped)
	}
	return out, r
}

// turnsByScore lists turns lowest Score first, the older (earlier in
// items) first among equals.
func turnsByScore(items []Item) []*Item {
	q := make([]*Item, len(items))
	for i := range items {
		q[i] = &items[i]
	}
	slices.SortStableFunc(q, func(a, b *Item) int { return cmp.Compare(a.Score, b.Score) })
	return q
}

// windowOrder is the order a session window is trimmed in: its turns
// oldest first, then its summary (KindSummary), which stands for all that
// left before them.
func windowOrder(items []Item) []*Item {
	var turns, summaries []*Item
	for i := range items {
		if items[i].Kind == KindSummary {
			summaries = append(summaries, &items[i])
		} else {
			turns = append(turns, &items[i])
		}
	}
	return append(turns, summaries...)
}

// count copies items with Tokens set to the cost of their rendered line.
func count(items []Item, c Counter) []Item {
	if len(items) == 0 {
		return nil
	}
	out := slices.Clone(items)
	for i := range out {
		l := line(out[i])
		out[i].rendered = &rendered{id: out[i].ID, kind: out[i].Kind, content: out[i].Content, provenance: out[i].Provenance, line: l}
		out[i].Tokens = max(0, c.Count(l))
	}
	return out
}

func sum(items []Item) int {
	n := 0
	for _, it := range items {
		n += it.Tokens
	}
	return n
}

// byScore lists the items of blocks lowest Score first; among equal
// scores the later item (in blocks order) comes first, so it drops first.
func byScore(blocks ...[]Item) []*Item {
	var q []*Item
	for _, items := range blocks {
		for i := range items {
			q = append(q, &items[i])
		}
	}
	slices.Reverse(q)
	slices.SortStableFunc(q, func(a, b *Item) int { return cmp.Compare(a.Score, b.Score) })
	return q
}

func keep(items []Item, dropped map[*Item]bool) []Item {
	var out []Item
	for i := range items {
		if !dropped[&items[i]] {
			out = append(out, items[i])
		}
	}
	return out
}
