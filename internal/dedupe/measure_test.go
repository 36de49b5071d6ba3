package dedupe

import (
	"testing"
)

// TestMeasure is the bar at 1,000 memories, so the default run
// stays fast; BenchmarkClusters10k and Measure(10000) are the full size.
func TestMeasure(t *testing.T) {
	t.Parallel()
	r, err := Measure(1000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", r)
	if r.Recall < 0.99 {
		t.Errorf("Recall = %.4f, want ≥ 0.99", r.Recall)
	}
	if got, want := r.Precision, 1.0; got != want {
		t.Errorf("Precision = %v, want %v: every LSH merge is checked exactly", got, want)
	}
	if r.MultiClusters < 30 || r.MergedAway < 300 {
		t.Errorf("%d multi-member clusters merging %d memories: the set holds too few near-duplicates", r.MultiClusters, r.MergedAway)
	}
	if r.LLMCalls == 0 || r.LLMCalls > r.MultiClusters {
		t.Errorf("LLMCalls = %d, want between 1 and the %d multi-member clusters", r.LLMCalls, r.MultiClusters)
	}
	if got, want := r.Clustered, 994; got != want {
		t.Errorf("Clustered = %d, want %d (the six items of the small partition are skipped)", got, want)
	}
	if r.LSHCompared >= r.PairwiseCompared/10 {
		t.Errorf("LSH compared %d pairs, pairwise %d: LSH should need far fewer", r.LSHCompared, r.PairwiseCompared)
	}
}
