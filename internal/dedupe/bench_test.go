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

// BenchmarkKeyedClusters10k is what the weekly job does now: each memory's
// Key, then the clusters at the rule's 0.9.
func BenchmarkKeyedClusters10k(b *testing.B) {
	items := Synthetic(10000, MeasureSeed)
	b.ResetTimer()
	for b.Loop() {
		keyed := make([]Item, len(items))
		for i, it := range items {
			it.Key = Key(it.Text)
			keyed[i] = it
		}
		Clusters(keyed, memory.MergeSimilarity, MinPartition)
	}
}

// BenchmarkKeyedClustersLoose10k is the clustering with a model
// configured: the loose clusters (model_similarity 0.4) the model judges.
func BenchmarkKeyedClustersLoose10k(b *testing.B) {
	items := Synthetic(10000, MeasureSeed)
	for i := range items {
		items[i].Key = Key(items[i].Text)
	}
	b.ResetTimer()
	var multi int
	for b.Loop() {
		multi = 0
		for _, c := range Clusters(items, 0.4, MinPartition) {
			if len(c.Members) > 1 {
				multi++
			}
		}
	}
	b.ReportMetric(float64(multi), "model-calls")
}
