package contextblock

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// blocks counts one token per '■' in a line, so an item's cost is set by
// its content alone and quotes, IDs and provenance are free.
var blocks = CounterFunc(func(s string) int { return strings.Count(s, "■") })

func item(id string, tokens int, score float64) Item {
	return Item{ID: id, Content: strings.Repeat("■", tokens), Score: score}
}

func ids(items ...[]Item) []string {
	var out []string
	for _, list := range items {
		for _, it := range list {
			out = append(out, it.ID)
		}
	}
	return out
}

// A limit of 80: profile 10, recent 50, long-term 20, reserve 20.
var small = Budget{Total: 100, Profile: 10, Recent: 50, LongTerm: 20, Reserve: 20}

func turns(n, tokens int) []Item {
	var out []Item
	for i := range n {
		out = append(out, item("t"+string(rune('1'+i)), tokens, 0))
	}
	return out
}

func TestFit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      Blocks
		budget  Budget
		dropped []string
		report  Report // Profile, Recent, LongTerm, ProfileOver, Over
	}{
		{
			name: "everything fits, tiers lend what they do not use",
			in: Blocks{
				Profile:  []Item{item("p", 10, 0)},
				Turns:    turns(4, 10),
				Memories: []Item{item("m1", 10, 0.9), item("m2", 10, 0.5), item("m3", 10, 0.1)},
			},
			budget: small,
			report: Report{Profile: 10, Recent: 40, LongTerm: 30},
		},
		{
			name: "long-term first, lowest score first, memories and episodes together",
			in: Blocks{
				Profile:  []Item{item("p", 10, 0)},
				Turns:    turns(5, 10),
				Memories: []Item{item("a", 10, 0.9), item("b", 10, 0.1), item("c", 10, 0.5)},
				Episodes: []Item{item("e", 10, 0.3)},
			},
			budget:  small,
			dropped: []string{"b", "e"},
			report:  Report{Profile: 10, Recent: 50, LongTerm: 20},
		},
		{
			name: "recent over its share borrows what long-term leaves",
			in: Blocks{
				Profile:  []Item{item("p", 10, 0)},
				Turns:    turns(7, 10),
				Memories: []Item{item("m", 10, 0.5)},
			},
			budget:  small,
			dropped: []string{"t1"},
			report:  Report{Profile: 10, Recent: 60, LongTerm: 10},
		},
		{
			name: "both over: each is cut to its share, long-term first",
			in: Blocks{
				Profile:  []Item{item("p", 10, 0)},
				Turns:    turns(7, 10),
				Memories: []Item{item("m1", 10, 0.4), item("m2", 10, 0.3), item("m3", 10, 0.2), item("m4", 10, 0.1)},
			},
			budget:  small,
			dropped: []string{"m4", "m3", "t1", "t2"},
			report:  Report{Profile: 10, Recent: 50, LongTerm: 20},
		},
		{
			name: "recent: attachments by score before the oldest turns",
			in: Blocks{
				Profile:     []Item{item("p", 10, 0)},
				Turns:       turns(4, 10),
				Attachments: []Item{item("a1", 10, 0.9), item("a2", 10, 0.2), item("a3", 10, 0.5)},
				Memories:    []Item{item("m", 10, 0.5)},
			},
			budget:  Budget{Total: 60, Profile: 10, Recent: 30, LongTerm: 20, Reserve: 10},
			dropped: []string{"a2", "a3", "a1", "t1"},
			report:  Report{Profile: 10, Recent: 30, LongTerm: 10},
		},
		{
			name: "an oversized profile card pays for itself, lowest importance first",
			in: Blocks{
				Profile:    []Item{item("p1", 15, 0.9), item("p2", 15, 0.2)},
				Scratchpad: []Item{item("s", 10, 1)},
				Turns:      turns(5, 10),
				Memories:   []Item{item("m1", 10, 0.9), item("m2", 10, 0.1)},
			},
			budget:  small,
			dropped: []string{"p2", "p1"},
			report:  Report{Profile: 10, Recent: 50, LongTerm: 20, ProfileOver: 30},
		},
		{
			name: "a profile card over the whole limit is cut to fit",
			in: Blocks{
				Profile:  []Item{item("p", 90, 0)},
				Turns:    turns(2, 10),
				Memories: []Item{item("m", 10, 0.9)},
			},
			budget:  small,
			dropped: []string{"p"},
			report:  Report{Profile: 0, Recent: 20, LongTerm: 10, ProfileOver: 80},
		},
		{
			name: "filler turns go before evidence",
			in: Blocks{
				Turns:    []Item{item("t1", 10, 0.9), item("ok", 10, 0.01), item("t3", 10, 0.5), item("thx", 10, 0.01)},
				Memories: []Item{item("m", 10, 0.9)},
			},
			budget:  Budget{Total: 40, Recent: 20, LongTerm: 20},
			dropped: []string{"ok"},
			report:  Report{Recent: 30, LongTerm: 10},
		},
		{
			name: "the session window is cut oldest first, its summary last",
			in: Blocks{
				Window: []Item{summary("sum", 10), item("w1", 10, 0), item("w2", 10, 0), item("w3", 10, 0)},
				Turns:  []Item{item("ev", 10, 0.5)},
			},
			budget:  Budget{Total: 30, Recent: 30},
			dropped: []string{"w1", "ev"},
			report:  Report{Recent: 30},
		},
		{
			name: "what a large drop frees is given back to smaller items",
			in: Blocks{
				Profile:  []Item{item("p", 10, 0)},
				Turns:    turns(4, 10),
				Memories: []Item{item("m1", 5, 0.9), item("m2", 30, 0.5), item("m3", 5, 0.1)},
			},
			budget:  small,
			dropped: []string{"m2"},
			report:  Report{Profile: 10, Recent: 40, LongTerm: 10},
		},
		{
			name: "the window is never put back: it stays unbroken",
			in: Blocks{
				Profile: []Item{item("p", 10, 0)},
				Window:  []Item{item("t1", 5, 0), item("t2", 60, 0), item("t3", 20, 0)},
			},
			budget:  small,
			dropped: []string{"t1", "t2"},
			report:  Report{Profile: 10, Recent: 20},
		},
		{
			name: "equal scores drop the later item first",
			in: Blocks{
				Memories: []Item{item("m1", 10, 0.5), item("m2", 10, 0.5)},
				Episodes: []Item{item("e1", 10, 0.5)},
			},
			budget:  Budget{Total: 10, LongTerm: 10},
			dropped: []string{"e1", "m2"},
			report:  Report{LongTerm: 10},
		},
		{
			name: "zero budget keeps nothing",
			in: Blocks{
				Profile: []Item{item("p", 3, 0)},
				Turns:   turns(1, 1),
			},
			budget:  Budget{},
			dropped: []string{"p", "t1"},
			report:  Report{ProfileOver: 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, r := Fit(tt.in, tt.budget, blocks)
			if !slices.Equal(r.Dropped, tt.dropped) {
				t.Fatalf("Dropped = %v, want %v", r.Dropped, tt.dropped)
			}
			if got, want := r.Trimmed, len(tt.dropped) > 0; got != want {
				t.Errorf("Trimmed = %v, want %v", got, want)
			}
			want := tt.report
			if r.Profile != want.Profile || r.Recent != want.Recent || r.LongTerm != want.LongTerm ||
				r.ProfileOver != want.ProfileOver || r.Over != want.Over {
				t.Errorf("Report = %+v, want tiers %d/%d/%d, profile over %d, over %d",
					r, want.Profile, want.Recent, want.LongTerm, want.ProfileOver, want.Over)
			}
			if got, want := r.Total, r.Profile+r.Recent+r.LongTerm; got != want {
				t.Errorf("Total = %d, want %d", got, want)
			}
			if got, want := r.Limit, tt.budget.Limit(); got != want {
				t.Errorf("Limit = %d, want %d", got, want)
			}
			if r.Over == 0 && r.Total > r.Limit {
				t.Errorf("Total %d is over Limit %d with Over 0", r.Total, r.Limit)
			}
			// What is kept plus what is dropped is what came in, in order.
			kept := ids(got.Profile, got.Scratchpad, got.Memories, got.Episodes, got.Turns, got.Attachments, got.Window)
			all := ids(tt.in.Profile, tt.in.Scratchpad, tt.in.Memories, tt.in.Episodes, tt.in.Turns, tt.in.Attachments, tt.in.Window)
			var wantKept []string
			for _, id := range all {
				if !slices.Contains(tt.dropped, id) {
					wantKept = append(wantKept, id)
				}
			}
			if !slices.Equal(kept, wantKept) {
				t.Errorf("kept %v, want %v", kept, wantKept)
			}
			if r.Total > r.Limit && r.Over == 0 {
				t.Errorf("total %d over the limit %d", r.Total, r.Limit)
			}
			for _, list := range [][]Item{got.Profile, got.Scratchpad, got.Memories, got.Episodes, got.Turns, got.Attachments, got.Window} {
				for _, it := range list {
					if got, want := it.Tokens, utf8.RuneCountInString(it.Content); got != want {
						t.Errorf("item %s Tokens = %d, want %d", it.ID, got, want)
					}
				}
			}
		})
	}
}

func TestFitDefaultBudget(t *testing.T) {
	t.Parallel()
	// Seed 004 §5 with real proportions: a 1,000-token card (400 over its
	// share), 2,400 tokens of turns, 1,200 of memories.
	var in Blocks
	in.Profile = []Item{item("card", 1000, 0)}
	for i := range 24 {
		in.Turns = append(in.Turns, item("t"+strings.Repeat("i", i+1), 100, 0))
	}
	for i := range 12 {
		in.Memories = append(in.Memories, item("m"+strings.Repeat("i", i+1), 100, float64(i)))
	}
	in.Profile = append(in.Profile, item("core", 200, 1))
	_, r := Fit(in, DefaultBudget(), blocks)
	// Limit 3,500: the card is cut to its 600 share (its lowest-importance
	// entry goes, the rest stays), long-term to its 900 share, and recent
	// keeps the 400 over its share that the card left.
	if r.Profile != 200 || r.LongTerm != 900 || r.Recent != 2400 || r.Total != 3500 || r.ProfileOver != 600 || r.Over != 0 {
		t.Fatalf("Report = %+v", r)
	}
	if got, want := r.Dropped[:4], []string{"card", "mi", "mii", "miii"}; !slices.Equal(got, want) {
		t.Fatalf("first dropped %v, want the card's low entry, then the lowest-scored memories %v", got, want)
	}
}

func TestFitDoesNotChangeItsArgument(t *testing.T) {
	t.Parallel()
	in := Blocks{Memories: []Item{item("m1", 10, 0.5), item("m2", 10, 0.1)}}
	before := slices.Clone(in.Memories)
	got, _ := Fit(in, Budget{Total: 10, LongTerm: 10}, blocks)
	if !slices.Equal(in.Memories, before) {
		t.Fatalf("Fit changed its argument: %+v", in.Memories)
	}
	got.Memories[0].Content = "changed"
	if in.Memories[0].Content == "changed" {
		t.Fatal("Fit's result shares memory with its argument")
	}
}

func TestFitCountsRenderedLines(t *testing.T) {
	t.Parallel()
	in := Blocks{
		Profile:  []Item{{ID: "p1", Kind: KindProfile, Content: "名字：小明\n职业：工程师"}},
		Memories: []Item{{ID: "m1", Kind: KindMemory, Content: `prefers "tabs"`, Provenance: "memory m1 · preference"}},
		Turns:    []Item{{ID: "t1", Kind: KindTurn, Content: "<b>hi</b>"}},
	}
	runes := CounterFunc(utf8.RuneCountInString)
	got, r := Fit(in, DefaultBudget(), runes)
	var lines []string
	for l := range strings.Lines(Render(got, LangEN)) {
		if strings.HasPrefix(l, "- ") {
			lines = append(lines, strings.TrimSuffix(l, "\n"))
		}
	}
	kept := slices.Concat(got.Profile, got.Memories, got.Turns)
	if len(lines) != len(kept) {
		t.Fatalf("rendered %d item lines, want %d", len(lines), len(kept))
	}
	total := 0
	for i, it := range kept {
		if got, want := it.Tokens, utf8.RuneCountInString(lines[i]); got != want {
			t.Errorf("%s: Tokens = %d, its rendered line %q has %d", it.ID, got, lines[i], want)
		}
		total += it.Tokens
	}
	if r.Total != total {
		t.Errorf("Report.Total = %d, want %d", r.Total, total)
	}
}

func TestFitNilCounterEstimates(t *testing.T) {
	t.Parallel()
	got, r := Fit(Blocks{Memories: []Item{{ID: "m", Content: "我住在北京"}}}, DefaultBudget(), nil)
	if got.Memories[0].Tokens == 0 || r.Total != got.Memories[0].Tokens {
		t.Fatalf("Fit with nil counter: tokens %d, report %+v", got.Memories[0].Tokens, r)
	}
}

// summary is a session summary item of n tokens.
func summary(id string, n int) Item {
	it := item(id, n, 0)
	it.Kind = KindSummary
	return it
}
