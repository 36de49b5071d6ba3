package vector

import "math"

// DefaultRRFK is the k of reciprocal rank fusion used when RRF is given
// none: the value Cormack, Clarke and Büttcher (SIGIR 2009) found to work
// across collections. A large k flattens the gap between the first ranks,
// so agreement between lists counts for more than one list's top hit.
const DefaultRRFK = 60

// Ranked is one ranked list for RRF, best first, with the weight of its
// votes. Weight is used as given: a zero Weight silences the list.
type Ranked struct {
	Weight float64
	IDs    []string
}

// RRF fuses ranked lists by reciprocal rank fusion: each id scores
// Σ Weight_i / (k + rank_i), ranks counted from 1, over the lists it is in.
// It needs only ranks, so lists whose scores are on different scales (a
// cosine, a BM25 score) fuse without normalising them. k ≤ 0 or NaN means
// DefaultRRFK. An id repeated in one list counts at its best rank only.
// Hits come best first, equal scores by id.
func RRF(k float64, lists ...Ranked) []Hit {
	if !(k > 0) {
		k = DefaultRRFK
	}
	scores := make(map[string]float64)
	for _, l := range lists {
		seen := make(map[string]bool, len(l.IDs))
		for i, id := range l.IDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			scores[id] += l.Weight / (k + float64(i+1))
		}
	}
	return hitsOf(scores)
}

// Weights weigh the three scores Hybrid combines.
type Weights struct {
	Semantic, Keyword, Freshness float64
}

// SeedWeights are seed 004's (§2.3, §5): 0.55 semantic + 0.30 keyword +
// 0.15 freshness.
func SeedWeights() Weights { return Weights{Semantic: 0.55, Keyword: 0.30, Freshness: 0.15} }

// Hybrid ranks the union of the ids in the three maps by
//
//	w.Semantic×semantic + w.Keyword×keyword + w.Freshness×freshness
//
// after bringing each score into [0, 1]; a score an id lacks, or that is NaN
// or ±Inf, counts as 0. Hits come best first, equal scores by id.
//
//   - semantic is a cosine similarity, used as it is with negatives raised
//     to 0. It is not rescaled per query: cosines are comparable across
//     queries, and rescaling would give the best of a bad lot a perfect
//     score.
//   - keyword is a BM25 score where higher is better. SQLite FTS5's bm25()
//     is lower-is-better (negative): pass -bm25(), or negative scores all
//     count as 0 and keyword search drops out. BM25 has no fixed scale, so
//     scores are divided by the query's best: min-max per query with the
//     minimum pinned at 0, BM25's score for a row that does not match,
//     rather than at the weakest hit. Plain min-max would give the weakest
//     hit 0, the same as a row the keywords miss, and make two hits of
//     5.0 and 4.9 score 1 and 0.
//   - freshness is already in [0, 1] (a decay such as 0.5^(age/half-life));
//     it is clamped there.
//
// Scores are meant to be known for every candidate (see Index.Scores);
// ranking without vectors is the same weights with Semantic 0, since only
// the ratios between weights change the order.
func Hybrid(semantic, keyword, freshness map[string]float64, w Weights) []Hit {
	var best float64
	for _, s := range keyword {
		if finite(s) > best {
			best = finite(s)
		}
	}
	scores := make(map[string]float64, len(semantic)+len(keyword)+len(freshness))
	score := func(id string) {
		if _, done := scores[id]; done {
			return
		}
		var kw float64
		if best > 0 {
			kw = clamp01(finite(keyword[id]) / best)
		}
		scores[id] = w.Score(semantic[id], kw, freshness[id])
	}
	for _, m := range []map[string]float64{semantic, keyword, freshness} {
		for id := range m {
			score(id)
		}
	}
	return hitsOf(scores)
}

// Score is one candidate's hybrid score from its cosine, its keyword score
// already divided by the query's best, and its freshness: each brought into
// [0, 1] (NaN and ±Inf count as 0), then weighted. Hybrid scores every id
// with it; a caller ranking its own candidates calls it directly.
func (w Weights) Score(semantic, keyword, freshness float64) float64 {
	return w.Semantic*clamp01(finite(semantic)) + w.Keyword*clamp01(finite(keyword)) + w.Freshness*clamp01(finite(freshness))
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func clamp01(x float64) float64 {
	return min(max(x, 0), 1)
}

func hitsOf(scores map[string]float64) []Hit {
	if len(scores) == 0 {
		return nil
	}
	hits := make([]Hit, 0, len(scores))
	for id, s := range scores {
		hits = append(hits, Hit{ID: id, Score: s})
	}
	sortHits(hits)
	return hits
}
