package dedupe

import (
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

func BenchmarkClusters10k(b *testing.B) {
	items := Synthetic(10000, MeasureSeed)
	b.ResetTimer()
	for b.Loop() {
		Clusters(items, memory.MergeSimilarity, MinPartition)
	}
}

func BenchmarkPairwise10k(b *testing.B) {
	items := Synthetic(10000, MeasureSeed)
	b.ResetTimer()
	for b.Loop() {
		Pairwise(items, memory.MergeSimilarity, MinPartition)
	}
}

// BenchmarkMeasure10k is the bar: LSH against the pairwise
// baseline on the same 10,000 memories, and the merge calls made.
func BenchmarkMeasure10k(b *testing.B) {
	for b.Loop() {
		r, err := Measure(10000)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("\n%s", r)
		b.ReportMetric(r.LSHTime.Seconds(), "lsh-s")
		b.ReportMetric(r.PairwiseTime.Seconds(), "pairwise-s")
		b.ReportMetric(r.Speedup, "speedup")
		b.ReportMetric(r.Recall, "recall")
		b.ReportMetric(float64(r.Clusters), "clusters")
		b.ReportMetric(float64(r.LLMCalls), "llm-calls")
	}
}
