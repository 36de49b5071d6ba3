package locomo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// Retriever answers one question for one conversation with the dia ids of
// the turns it found, best first. It must not look at q.Answer or
// q.Evidence.
type Retriever func(ctx context.Context, conv *Conversation, q QA) ([]string, error)

// DefaultKs are the cut-offs of the LoCoMo paper's Table 3.
var DefaultKs = []int{5, 10, 25, 50}

// Score is the mean recall@k over a set of questions.
type Score struct {
	Questions int             // questions scored
	Recall    map[int]float64 // k → mean recall@k
	sums      map[int]float64
}

// ConversationScore is one conversation's part of a Report.
type ConversationScore struct {
	ID      string
	Skipped int // questions without evidence
	Score
}

// CategoryScore is one question category's part of a Report.
type CategoryScore struct {
	Category int
	Name     string
	Skipped  int
	Score
}

// Report is the outcome of Evaluate.
type Report struct {
	Ks            []int
	Conversations []ConversationScore // in dataset order
	Categories    []CategoryScore     // by category number
	Overall       Score
	Skipped       int // questions without evidence, over all conversations
}

func newScore(ks []int) Score {
	s := Score{Recall: map[int]float64{}, sums: map[int]float64{}}
	for _, k := range ks {
		s.Recall[k] = 0
		s.sums[k] = 0
	}
	return s
}

func (s *Score) add(recall map[int]float64) {
	s.Questions++
	for k, r := range recall {
		s.sums[k] += r
		s.Recall[k] = s.sums[k] / float64(s.Questions)
	}
}

// Recall returns the fraction of evidence found among the first k distinct
// ids of ranked: "top k turns" means k turns, so a retriever that returns
// several hits from one turn is not charged twice for it.
func Recall(evidence, ranked []string, k int) float64 {
	if len(evidence) == 0 {
		return 0
	}
	top := make(map[string]bool, k)
	for _, id := range ranked {
		if len(top) == k {
			break
		}
		top[id] = true
	}
	found := 0
	for _, id := range evidence {
		if top[id] {
			found++
		}
	}
	return float64(found) / float64(len(evidence))
}

// Evaluate asks r every question of ds that has evidence and reports mean
// recall@k for each k in ks (DefaultKs when empty). Recall is always
// computed at 5 and 10 as well, because Write's summary line reports them.
// Questions without evidence are skipped and counted. An error from r stops
// the evaluation.
func Evaluate(ctx context.Context, ds *Dataset, r Retriever, ks []int) (*Report, error) {
	if ds == nil || r == nil {
		return nil, errors.New("evaluate locomo: nil dataset or retriever")
	}
	if len(ks) == 0 {
		ks = DefaultKs
	}
	ks = slices.Clone(ks)
	for _, k := range ks {
		if k < 1 {
			return nil, fmt.Errorf("evaluate locomo: k=%d, want k >= 1", k)
		}
	}
	ks = append(ks, 5, 10)
	sort.Ints(ks)
	ks = slices.Compact(ks)

	rep := &Report{Ks: ks, Overall: newScore(ks)}
	cats := map[int]*CategoryScore{}
	for i := range ds.Conversations {
		conv := &ds.Conversations[i]
		cs := ConversationScore{ID: conv.ID, Score: newScore(ks)}
		for qi, q := range conv.QA {
			cat := cats[q.Category]
			if cat == nil {
				cat = &CategoryScore{Category: q.Category, Name: CategoryName(q.Category), Score: newScore(ks)}
				cats[q.Category] = cat
			}
			if len(q.Evidence) == 0 {
				cs.Skipped++
				cat.Skipped++
				rep.Skipped++
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("evaluate locomo: %w", err)
			}
			ranked, err := r(ctx, conv, q)
			if err != nil {
				return nil, fmt.Errorf("evaluate locomo: %s question %d: %w", conv.ID, qi, err)
			}
			recall := make(map[int]float64, len(ks))
			for _, k := range ks {
				recall[k] = Recall(q.Evidence, ranked, k)
			}
			cs.add(recall)
			cat.add(recall)
			rep.Overall.add(recall)
		}
		rep.Conversations = append(rep.Conversations, cs)
	}
	for _, c := range cats {
		rep.Categories = append(rep.Categories, *c)
	}
	sort.Slice(rep.Categories, func(i, j int) bool { return rep.Categories[i].Category < rep.Categories[j].Category })
	return rep, nil
}

// Write prints the report as a table: one row per conversation, one per
// category, then overall. Its last line is always
// "locomo recall@5=0.xxx recall@10=0.yyy", for scripts to read; the line
// before it holds the other cut-offs.
func (r *Report) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := func(first string) {
		fmt.Fprintf(tw, "%s\tquestions\tskipped\t", first)
		for _, k := range r.Ks {
			fmt.Fprintf(tw, "R@%d\t", k)
		}
		fmt.Fprintln(tw)
	}
	row := func(name string, s Score, skipped int) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t", name, s.Questions, skipped)
		for _, k := range r.Ks {
			fmt.Fprintf(tw, "%.3f\t", s.Recall[k])
		}
		fmt.Fprintln(tw)
	}
	header("conversation")
	for _, c := range r.Conversations {
		row(c.ID, c.Score, c.Skipped)
	}
	fmt.Fprintln(tw)
	header("category")
	for _, c := range r.Categories {
		row(fmt.Sprintf("%d %s", c.Category, c.Name), c.Score, c.Skipped)
	}
	row("overall", r.Overall, r.Skipped)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write locomo report: %w", err)
	}

	var others []string
	for _, k := range r.Ks {
		if k != 5 && k != 10 {
			others = append(others, fmt.Sprintf("recall@%d=%.3f", k, r.Overall.Recall[k]))
		}
	}
	var b strings.Builder
	if len(others) > 0 {
		fmt.Fprintf(&b, "locomo %s\n", strings.Join(others, " "))
	}
	fmt.Fprintf(&b, "locomo recall@5=%.3f recall@10=%.3f\n", r.Overall.Recall[5], r.Overall.Recall[10])
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write locomo report: %w", err)
	}
	return nil
}
