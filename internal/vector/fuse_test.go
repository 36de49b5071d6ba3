package vector

import (
	"math"
	"testing"
)

func closeHits(t *testing.T, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d hits, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-12 {
			t.Fatalf("hit %d=%v, want %v\ngot  %v\nwant %v", i, got[i], want[i], got, want)
		}
	}
}

func TestRRF(t *testing.T) {
	t.Run("two lists", func(t *testing.T) {
		vec := Ranked{Weight: 1, IDs: []string{"x", "y", "z"}}
		kw := Ranked{Weight: 1, IDs: []string{"y", "w", "x"}}
		// y: ranks 2 and 1; x: ranks 1 and 3; w: rank 2; z: rank 3.
		closeHits(t, RRF(60, vec, kw), []Hit{
			{"y", 1.0/62 + 1.0/61},
			{"x", 1.0/61 + 1.0/63},
			{"w", 1.0 / 62},
			{"z", 1.0 / 63},
		})
	})
	t.Run("weights", func(t *testing.T) {
		// With k=1, rank r of a list of weight w scores w/(1+r).
		got := RRF(1, Ranked{Weight: 2, IDs: []string{"a", "c"}}, Ranked{Weight: 1, IDs: []string{"b", "x", "c"}})
		closeHits(t, got, []Hit{{"a", 2.0 / 2}, {"c", 2.0/3 + 1.0/4}, {"b", 1.0 / 2}, {"x", 1.0 / 3}})
	})
	t.Run("ties by id", func(t *testing.T) {
		got := RRF(60, Ranked{Weight: 1, IDs: []string{"q", "s"}}, Ranked{Weight: 1, IDs: []string{"p", "r"}})
		closeHits(t, got, []Hit{{"p", 1.0 / 61}, {"q", 1.0 / 61}, {"r", 1.0 / 62}, {"s", 1.0 / 62}})
	})
	t.Run("repeated id counts once at its best rank", func(t *testing.T) {
		got := RRF(60, Ranked{Weight: 1, IDs: []string{"a", "b", "a"}})
		closeHits(t, got, []Hit{{"a", 1.0 / 61}, {"b", 1.0 / 62}})
	})
	t.Run("default k", func(t *testing.T) {
		l := Ranked{Weight: 1, IDs: []string{"a", "b"}}
		want := []Hit{{"a", 1.0 / 61}, {"b", 1.0 / 62}}
		for _, k := range []float64{0, -5, math.NaN()} {
			closeHits(t, RRF(k, l), want)
		}
	})
	t.Run("zero weight", func(t *testing.T) {
		got := RRF(60, Ranked{IDs: []string{"a"}}, Ranked{Weight: 1, IDs: []string{"b"}})
		closeHits(t, got, []Hit{{"b", 1.0 / 61}, {"a", 0}})
	})
	t.Run("nothing", func(t *testing.T) {
		if got := RRF(60); got != nil {
			t.Fatalf("RRF()=%v", got)
		}
		if got := RRF(60, Ranked{Weight: 1}); got != nil {
			t.Fatalf("RRF(empty list)=%v", got)
		}
	})
}

func TestSeedWeights(t *testing.T) {
	w := SeedWeights()
	if w.Semantic != 0.55 || w.Keyword != 0.30 || w.Freshness != 0.15 {
		t.Fatalf("SeedWeights=%+v, want 0.55/0.30/0.15 (seed 004 §5)", w)
	}
}

func TestHybrid(t *testing.T) {
	t.Run("seed weights", func(t *testing.T) {
		semantic := map[string]float64{"a": 0.9, "b": 0.5, "c": -0.2}
		keyword := map[string]float64{"a": 2, "b": 8, "d": 4} // divided by 8
		freshness := map[string]float64{"a": 0.1, "c": 1, "d": 0.5, "e": 1.5}
		closeHits(t, Hybrid(semantic, keyword, freshness, SeedWeights()), []Hit{
			{"a", 0.55*0.9 + 0.30*0.25 + 0.15*0.1},
			{"b", 0.55*0.5 + 0.30*1},
			{"d", 0.30*0.5 + 0.15*0.5},
			{"c", 0.15 * 1}, // negative cosine counts as 0
			{"e", 0.15 * 1}, // freshness clamped to 1; tie with c, ordered by id
		})
	})
	t.Run("keyword divided by the best, not min-max", func(t *testing.T) {
		got := Hybrid(nil, map[string]float64{"a": 5, "b": 4.9}, nil, Weights{Keyword: 1})
		closeHits(t, got, []Hit{{"a", 1}, {"b", 4.9 / 5}})
	})
	t.Run("a single keyword hit scores 1", func(t *testing.T) {
		got := Hybrid(map[string]float64{"a": 0.2}, map[string]float64{"b": 0.01}, nil, SeedWeights())
		closeHits(t, got, []Hit{{"b", 0.30}, {"a", 0.55 * 0.2}})
	})
	t.Run("raw FTS5 bm25 is negative and counts as nothing", func(t *testing.T) {
		got := Hybrid(map[string]float64{"a": 0.5, "b": 0.4}, map[string]float64{"a": -1, "b": -9}, nil, SeedWeights())
		closeHits(t, got, []Hit{{"a", 0.55 * 0.5}, {"b", 0.55 * 0.4}})
	})
	t.Run("NaN and Inf count as 0", func(t *testing.T) {
		inf, nan := math.Inf(1), math.NaN()
		got := Hybrid(
			map[string]float64{"a": nan, "b": inf},
			map[string]float64{"a": inf, "b": 2, "c": nan},
			map[string]float64{"c": math.Inf(-1), "d": 0.5},
			Weights{Semantic: 1, Keyword: 1, Freshness: 1})
		closeHits(t, got, []Hit{{"b", 1}, {"d", 0.5}, {"a", 0}, {"c", 0}})
	})
	t.Run("without vectors", func(t *testing.T) {
		w := SeedWeights()
		w.Semantic = 0
		got := Hybrid(nil, map[string]float64{"a": 1, "b": 3}, map[string]float64{"a": 1}, w)
		closeHits(t, got, []Hit{{"b", 0.30}, {"a", 0.30/3 + 0.15}})
	})
	t.Run("nothing", func(t *testing.T) {
		if got := Hybrid(nil, nil, nil, SeedWeights()); got != nil {
			t.Fatalf("Hybrid()=%v", got)
		}
	})
}
