package extractbench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
)

// Extractor is what is measured: the candidates for one turn.
type Extractor func(ctx context.Context, t Turn) ([]memory.Candidate, error)

// Counts are one cell of a report.
type Counts struct {
	Gold, Found int // gold memories; candidates proposed
	Hits        int // gold memories matched (= candidates matched)
}

// Precision is matched candidates over candidates; 1 when none were
// proposed.
func (c Counts) Precision() float64 {
	if c.Found == 0 {
		return 1
	}
	return float64(c.Hits) / float64(c.Found)
}

// Recall is matched gold memories over gold memories; 1 when there were
// none.
func (c Counts) Recall() float64 {
	if c.Gold == 0 {
		return 1
	}
	return float64(c.Hits) / float64(c.Gold)
}

func (c *Counts) add(o Counts) {
	c.Gold, c.Found, c.Hits = c.Gold+o.Gold, c.Found+o.Found, c.Hits+o.Hits
}

// Miss is a turn where the extractor and the labels disagree.
type Miss struct {
	Turn   Turn
	Missed []Gold             // gold memories no candidate matched
	Extra  []memory.Candidate // candidates that matched no gold memory
}

// Report is the score of one extractor on one split.
type Report struct {
	Turns  map[string]int               // per language
	Lang   map[string]Counts            // per language, all kinds
	Kind   map[string]map[string]Counts // per language, per kind
	Misses []Miss
}

// Score runs x over turns. An error from x is returned: a measurement with
// turns left out would not be the measurement.
func Score(ctx context.Context, turns []Turn, x Extractor) (*Report, error) {
	r := &Report{Turns: map[string]int{}, Lang: map[string]Counts{}, Kind: map[string]map[string]Counts{}}
	for _, t := range turns {
		cands, err := x(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("turn %s: %w", t.ID, err)
		}
		goldTo, taken := Pair(t.Gold, cands)
		r.Turns[t.Lang]++
		if r.Kind[t.Lang] == nil {
			r.Kind[t.Lang] = map[string]Counts{}
		}
		cell := func(kind string, c Counts) {
			k := r.Kind[t.Lang][kind]
			k.add(c)
			r.Kind[t.Lang][kind] = k
			l := r.Lang[t.Lang]
			l.add(c)
			r.Lang[t.Lang] = l
		}
		var m Miss
		for i, g := range t.Gold {
			hit := 0
			if goldTo[i] >= 0 {
				hit = 1
			} else {
				m.Missed = append(m.Missed, g)
			}
			cell(strings.ToLower(g.Kind), Counts{Gold: 1, Hits: hit})
		}
		for j, c := range cands {
			cell(string(c.Kind), Counts{Found: 1})
			if !taken[j] {
				m.Extra = append(m.Extra, c)
			}
		}
		if len(m.Missed)+len(m.Extra) > 0 {
			m.Turn = t
			r.Misses = append(r.Misses, m)
		}
	}
	return r, nil
}

// Write prints the report as a table: one row per language, then one per
// kind within it.
func (r *Report) Write(w io.Writer, title string) {
	fmt.Fprintf(w, "%s\n", title)
	fmt.Fprintf(w, "  %-4s %-11s %5s %5s %5s %9s %6s\n", "lang", "kind", "gold", "found", "hits", "precision", "recall")
	langs := sortedKeys(r.Lang)
	for _, l := range langs {
		c := r.Lang[l]
		fmt.Fprintf(w, "  %-4s %-11s %5d %5d %5d %9.2f %6.2f   (%d turns)\n", l, "all", c.Gold, c.Found, c.Hits, c.Precision(), c.Recall(), r.Turns[l])
		for _, k := range sortedKeys(r.Kind[l]) {
			c := r.Kind[l][k]
			fmt.Fprintf(w, "  %-4s %-11s %5d %5d %5d %9.2f %6.2f\n", l, k, c.Gold, c.Found, c.Hits, c.Precision(), c.Recall())
		}
	}
}

// WriteMisses prints every disagreement, for tuning on the dev split.
func (r *Report) WriteMisses(w io.Writer) {
	for _, m := range r.Misses {
		fmt.Fprintf(w, "%s %q\n", m.Turn.ID, chars.ClipHead(chars.OneLine(m.Turn.Content), 120))
		for _, g := range m.Missed {
			fmt.Fprintf(w, "    missed %s %s/%s %q\n", g.Kind, g.Subject, g.Predicate, g.Value)
		}
		for _, c := range m.Extra {
			fmt.Fprintf(w, "    extra  %s %s/%s %q %.2f\n", c.Kind, c.Subject, c.Predicate, c.Content, c.Confidence)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
