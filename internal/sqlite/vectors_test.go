package sqlite

import (
	"slices"
	"testing"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

func embedded(seq uint64, user, model string, texts map[string][]float32) memory.Applied {
	d := &events.MemoryEmbedded{Model: model}
	for text, v := range texts {
		d.Vectors = append(d.Vectors, events.Embedded{Hash: events.TextHash(text), Vector: v})
		d.Dims = len(v)
	}
	return derived(seq, user, events.TypeMemoryEmbedded, d)
}

func nearest(t *testing.T, s *Store, user string, q []float32, also ...string) ([]string, map[string]float64) {
	t.Helper()
	hits, scores, err := s.SearchVectors(t.Context(), memory.Scope{Namespace: "ns", User: user}, "m", q, 10, also)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
		if h.Semantic <= 0 || h.Semantic > 1.0001 {
			t.Fatalf("hit %s has cosine %v", h.ID, h.Semantic)
		}
	}
	return ids, scores
}

// Vectors are found through the content they were filed under, only for
// the user who owns them, only for active memories, and the cached index
// follows every write.
func TestSearchVectors(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	tea, trip := "prefers oolong tea", "planning a trip to Kyoto"
	mustApply(t, s,
		added(1, "ana", "m-tea", tea, 0.5),
		added(2, "ana", "m-trip", trip, 0.5),
		added(3, "bob", "b-tea", tea, 0.5),
		embedded(4, "ana", "m", map[string][]float32{tea: {1, 0, 0}, trip: {0, 1, 0}}),
	)
	if ids, _ := nearest(t, s, "ana", []float32{0.9, 0.1, 0}); !slices.Equal(ids, []string{"m-tea", "m-trip"}) {
		t.Fatalf("ana's nearest = %v, want tea then trip", ids)
	}
	// Bob holds the same text but no vector of his own.
	if ids, _ := nearest(t, s, "bob", []float32{1, 0, 0}); len(ids) != 0 {
		t.Fatalf("bob found %v with ana's vectors", ids)
	}
	// Another model's vectors are another index.
	if hits, _, err := s.SearchVectors(t.Context(), memory.Scope{Namespace: "ns", User: "ana"}, "other", []float32{1, 0, 0}, 5, nil); err != nil || len(hits) != 0 {
		t.Fatalf("model other found %v (%v)", hits, err)
	}
	// Cosines of chosen memories, for keyword hits.
	if _, scores := nearest(t, s, "ana", []float32{0, 1, 0}, "m-tea", "m-trip", "unknown"); scores["m-trip"] < 0.99 || scores["m-tea"] != 0 || len(scores) != 2 {
		t.Fatalf("scores = %v", scores)
	}

	// New content has no vector until it is embedded; the old one no
	// longer applies. The cached index must notice.
	newTea := "prefers green tea"
	mustApply(t, s, derived(5, "ana", events.TypeMemoryUpdated, &events.MemoryUpdated{MemoryID: "m-tea", Content: &newTea}))
	if ids, _ := nearest(t, s, "ana", []float32{1, 0.1, 0}); !slices.Equal(ids, []string{"m-trip"}) {
		t.Fatalf("after the update, nearest = %v, want only trip", ids)
	}
	mustApply(t, s, embedded(6, "ana", "m", map[string][]float32{newTea: {1, 0.1, 0}}))
	if ids, _ := nearest(t, s, "ana", []float32{1, 0.1, 0}); !slices.Equal(ids, []string{"m-tea", "m-trip"}) {
		t.Fatalf("after embedding the new content, nearest = %v", ids)
	}
	mustApply(t, s, derived(7, "ana", events.TypeMemoryDeleted, &events.MemoryDeleted{MemoryID: "m-trip"}))
	if ids, _ := nearest(t, s, "ana", []float32{0, 1, 0}); !slices.Equal(ids, []string{"m-tea"}) {
		t.Fatalf("after deleting trip, nearest = %v", ids)
	}
	// A query of other dimensions is an error, not an empty answer.
	if _, _, err := s.SearchVectors(t.Context(), memory.Scope{Namespace: "ns", User: "ana"}, "m", []float32{1, 0}, 5, nil); err == nil {
		t.Fatal("a 2-dimensional query against 3-dimensional vectors succeeded")
	}
	mustApply(t, s, derived(8, "ana", events.TypeUserForgotten, &events.UserForgotten{Reason: "request"}))
	var n int
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM embeddings WHERE user_id = 'ana'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d embeddings left after forgetting ana (%v)", n, err)
	}
}

func TestVectorCacheBudget(t *testing.T) {
	t.Parallel()
	c := newVectorCache(200)
	a, b := vectorKey{scope: memory.Scope{Namespace: "n", User: "a"}}, vectorKey{scope: memory.Scope{Namespace: "n", User: "b"}}
	_, gen, _ := c.get(a)
	c.put(a, nil, gen)
	if _, _, ok := c.get(a); !ok {
		t.Fatal("a fresh entry is not current")
	}
	c.invalidate(a.scope)
	if _, _, ok := c.get(a); ok {
		t.Fatal("an invalidated entry is current")
	}
	// A build that began before a write is not kept as current.
	_, gen, _ = c.get(b)
	c.invalidate(b.scope)
	c.put(b, nil, gen)
	if _, _, ok := c.get(b); ok {
		t.Fatal("an index built across a write is current")
	}
	for i := range 10 {
		k := vectorKey{scope: memory.Scope{Namespace: "n", User: string(rune('c' + i))}}
		_, gen, _ := c.get(k)
		c.put(k, nil, gen)
	}
	if c.bytes > c.max || c.lru.Len() != 3 {
		t.Fatalf("cache holds %d entries, %d bytes, budget %d", c.lru.Len(), c.bytes, c.max)
	}
}
