package locomo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestRecall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		evidence, ranked []string
		k                int
		want             float64
	}{
		{[]string{"a", "b"}, []string{"a", "x", "b"}, 2, 0.5},
		{[]string{"a", "b"}, []string{"a", "x", "b"}, 3, 1},
		{[]string{"a"}, nil, 5, 0},
		{nil, []string{"a"}, 5, 0},
		// Repeats of one turn take one place in the top k.
		{[]string{"a", "b"}, []string{"a", "a", "a", "b"}, 2, 1},
		{[]string{"a", "b", "c"}, []string{"c", "b", "a"}, 1, 1.0 / 3},
	}
	for _, c := range cases {
		if got := Recall(c.evidence, c.ranked, c.k); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Recall(%q, %q, %d)=%v, want %v", c.evidence, c.ranked, c.k, got, c.want)
		}
	}
}

// evalDataset is scored by fixedRetriever with recalls worked out by hand
// in TestEvaluate.
func evalDataset() *Dataset {
	return &Dataset{Conversations: []Conversation{
		{ID: "x", QA: []QA{
			{Question: "q1", Category: 1, Evidence: []string{"a", "b"}},
			{Question: "q2", Category: 4, Evidence: []string{"c"}},
			{Question: "q3", Category: 4},
			{Question: "q4", Category: 2, Evidence: []string{"d", "e", "f"}},
		}},
		{ID: "y", QA: []QA{
			{Question: "q5", Category: 1, Evidence: []string{"a"}},
		}},
	}}
}

func fixedRetriever(t *testing.T) Retriever {
	answers := map[string][]string{
		"x/q1": {"a", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "b"},
		"x/q2": nil,
		"x/q4": {"d", "d", "d", "d", "d", "e", "g", "h", "i", "j", "f"},
		"y/q5": {"a"},
	}
	return func(ctx context.Context, conv *Conversation, q QA) ([]string, error) {
		ranked, ok := answers[conv.ID+"/"+q.Question]
		if !ok {
			t.Errorf("asked %s/%s, which has no evidence or does not exist", conv.ID, q.Question)
		}
		return ranked, nil
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	rep, err := Evaluate(t.Context(), evalDataset(), fixedRetriever(t), []int{25})
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if got, want := fmt.Sprint(rep.Ks), "[5 10 25]"; got != want {
		t.Fatalf("Ks=%s, want %s", got, want)
	}
	// Per question (R@5, R@10, R@25):
	//   q1: a at 1, b at 11      → 1/2, 1/2, 1
	//   q2: nothing              → 0, 0, 0
	//   q3: no evidence          → skipped
	//   q4: distinct d e g h i j f → 2/3, 1, 1
	//   q5: a at 1               → 1, 1, 1
	check := func(name string, s Score, questions int, want [3]float64) {
		t.Helper()
		if s.Questions != questions {
			t.Errorf("%s questions=%d, want %d", name, s.Questions, questions)
		}
		for i, k := range []int{5, 10, 25} {
			if got := s.Recall[k]; math.Abs(got-want[i]) > 1e-9 {
				t.Errorf("%s recall@%d=%.6f, want %.6f", name, k, got, want[i])
			}
		}
	}
	check("overall", rep.Overall, 4, [3]float64{(0.5 + 0 + 2.0/3 + 1) / 4, (0.5 + 0 + 1 + 1) / 4, 3.0 / 4})
	check("conv x", rep.Conversations[0].Score, 3, [3]float64{(0.5 + 2.0/3) / 3, 1.5 / 3, 2.0 / 3})
	check("conv y", rep.Conversations[1].Score, 1, [3]float64{1, 1, 1})

	if got, want := len(rep.Categories), 3; got != want {
		t.Fatalf("categories=%d, want %d", got, want)
	}
	check("multi-hop", rep.Categories[0].Score, 2, [3]float64{0.75, 0.75, 1})
	check("temporal", rep.Categories[1].Score, 1, [3]float64{2.0 / 3, 1, 1})
	check("single-hop", rep.Categories[2].Score, 1, [3]float64{0, 0, 0})
	if got, want := rep.Categories[2].Name, "single-hop"; got != want {
		t.Fatalf("category 4 name=%q, want %q", got, want)
	}
	if rep.Skipped != 1 || rep.Conversations[0].Skipped != 1 || rep.Categories[2].Skipped != 1 {
		t.Fatalf("skipped=%d (conv x %d, single-hop %d), want 1 each",
			rep.Skipped, rep.Conversations[0].Skipped, rep.Categories[2].Skipped)
	}
}

func TestReportWrite(t *testing.T) {
	t.Parallel()
	rep, err := Evaluate(t.Context(), evalDataset(), fixedRetriever(t), []int{50, 25, 10, 5})
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	var buf bytes.Buffer
	if err := rep.Write(&buf); err != nil {
		t.Fatalf("Write: %v", err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if got, want := lines[len(lines)-1], "locomo recall@5=0.542 recall@10=0.625"; got != want {
		t.Fatalf("last line=%q, want %q\n%s", got, want, out)
	}
	if got, want := lines[len(lines)-2], "locomo recall@25=0.750 recall@50=0.750"; got != want {
		t.Fatalf("line before last=%q, want %q\n%s", got, want, out)
	}
	for _, s := range []string{"1 multi-hop", "2 temporal", "4 single-hop", "x", "overall"} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	failing := func(ctx context.Context, conv *Conversation, q QA) ([]string, error) { return nil, boom }

	t.Run("retriever error", func(t *testing.T) {
		_, err := Evaluate(t.Context(), evalDataset(), failing, nil)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "x question 0") {
			t.Fatalf("err=%v, want boom naming x question 0", err)
		}
	})
	t.Run("bad k", func(t *testing.T) {
		if _, err := Evaluate(t.Context(), evalDataset(), failing, []int{0}); err == nil {
			t.Fatal("Evaluate with k=0 succeeded, want error")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := Evaluate(ctx, evalDataset(), fixedRetriever(t), nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err=%v, want context.Canceled", err)
		}
	})
}
