package vector

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// naive is Search by the book: score everything, sort, cut.
func naive(vecs map[string][]float32, q []float32, k int) []Hit {
	q = Normalize(q)
	var all []Hit
	for id, v := range vecs {
		all = append(all, Hit{ID: id, Score: float64(Dot(q, Normalize(v)))})
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return all[:min(k, len(all))]
}

func mustAdd(t *testing.T, ix *Index, id string, v []float32) {
	t.Helper()
	if err := ix.Add(id, v); err != nil {
		t.Fatalf("Add(%s): %v", id, err)
	}
}

func mustSearch(t *testing.T, ix *Index, q []float32, k int) []Hit {
	t.Helper()
	hits, err := ix.Search(q, k)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	return hits
}

func sameHits(t *testing.T, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d hits, want %d\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("hit %d=%v, want %v\ngot  %v\nwant %v", i, got[i], want[i], got, want)
		}
	}
}

func TestSearchMatchesNaive(t *testing.T) {
	for _, tc := range []struct{ n, dims, k int }{
		{1, 3, 1}, {5, 8, 10}, {300, 16, 1}, {300, 16, 10}, {1000, 37, 20}, {blockLen, 8, blockLen}, {blockLen + 1, 8, 7},
	} {
		t.Run(fmt.Sprintf("n=%d,dims=%d,k=%d", tc.n, tc.dims, tc.k), func(t *testing.T) {
			r := newRand(uint64(tc.n*1000 + tc.dims))
			ix := NewIndex(tc.dims)
			vecs := make(map[string][]float32)
			for range tc.n {
				id := fmt.Sprintf("m%05d", r.IntN(10*tc.n+1)) // ids repeat: Add replaces
				vecs[id] = randomVec(r, tc.dims)
				mustAdd(t, ix, id, vecs[id])
			}
			if got, want := ix.Len(), len(vecs); got != want {
				t.Fatalf("Len=%d, want %d", got, want)
			}
			for range 5 {
				q := randomVec(r, tc.dims)
				sameHits(t, mustSearch(t, ix, q, tc.k), naive(vecs, q, tc.k))
			}
			// Remove a third, in random order, and compare again.
			ids := make([]string, 0, len(vecs))
			for id := range vecs {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
			for _, id := range ids[:len(ids)/3] {
				ix.Remove(id)
				delete(vecs, id)
			}
			if got, want := ix.Len(), len(vecs); got != want {
				t.Fatalf("Len after Remove=%d, want %d", got, want)
			}
			for range 5 {
				q := randomVec(r, tc.dims)
				sameHits(t, mustSearch(t, ix, q, tc.k), naive(vecs, q, tc.k))
			}
		})
	}
}

// TestSearchTiesByID fills an index with vectors of equal scores in
// different orders: the hits, including which of the tied ids make the cut,
// must not depend on the order.
func TestSearchTiesByID(t *testing.T) {
	ids := []string{"e", "b", "h", "a", "g", "c", "f", "d"}
	build := func(order []string) *Index {
		ix := NewIndex(2)
		for _, id := range order {
			v := []float32{1, 0} // all the same direction as the query...
			if id == "f" || id == "c" {
				v = []float32{0, 2} // ...except two, orthogonal to it
			}
			mustAdd(t, ix, id, v)
		}
		return ix
	}
	want := []Hit{{"a", 1}, {"b", 1}, {"d", 1}}
	r := newRand(6)
	for i := range 20 {
		order := slices.Clone(ids)
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		ix := build(order)
		sameHits(t, mustSearch(t, ix, []float32{3, 0}, 3), want)
		all := mustSearch(t, ix, []float32{3, 0}, 100)
		sameHits(t, all, []Hit{{"a", 1}, {"b", 1}, {"d", 1}, {"e", 1}, {"g", 1}, {"h", 1}, {"c", 0}, {"f", 0}})
		if i%2 == 0 {
			// Removing and re-adding moves vectors around; ties hold.
			ix.Remove("a")
			ix.Remove("h")
			mustAdd(t, ix, "a", []float32{5, 0})
			sameHits(t, mustSearch(t, ix, []float32{1, 0}, 3), want)
		}
	}
}

func TestIndexAddReplaceRemove(t *testing.T) {
	ix := NewIndex(2)
	mustAdd(t, ix, "x", []float32{1, 0})
	mustAdd(t, ix, "y", []float32{0, 1})
	mustAdd(t, ix, "x", []float32{0, -3}) // replaces: x now points away
	if got, want := ix.Len(), 2; got != want {
		t.Fatalf("Len=%d, want %d", got, want)
	}
	sameHits(t, mustSearch(t, ix, []float32{0, 1}, 5), []Hit{{"y", 1}, {"x", -1}})

	ix.Remove("nope")
	ix.Remove("y")
	ix.Remove("y")
	if got, want := ix.Len(), 1; got != want {
		t.Fatalf("Len=%d, want %d", got, want)
	}
	sameHits(t, mustSearch(t, ix, []float32{0, 1}, 5), []Hit{{"x", -1}})
	ix.Remove("x")
	if hits := mustSearch(t, ix, []float32{0, 1}, 5); len(hits) != 0 {
		t.Fatalf("empty index found %v", hits)
	}
	if hits := mustSearch(t, ix, []float32{0, 1}, 0); hits != nil {
		t.Fatalf("k=0 found %v", hits)
	}
}

func TestIndexAddCopies(t *testing.T) {
	ix := NewIndex(2)
	v := []float32{1, 0}
	mustAdd(t, ix, "x", v)
	v[0], v[1] = 0, 1 // the caller reuses its buffer
	sameHits(t, mustSearch(t, ix, []float32{1, 0}, 1), []Hit{{"x", 1}})
}

func TestIndexRefuses(t *testing.T) {
	ix := NewIndex(3)
	nan := float32(0)
	nan = nan / nan
	for name, tc := range map[string]struct {
		v    []float32
		want error
	}{
		"short": {[]float32{1, 2}, ErrDims},
		"long":  {[]float32{1, 2, 3, 4}, ErrDims},
		"zero":  {[]float32{0, 0, 0}, ErrInvalid},
		"NaN":   {[]float32{1, nan, 0}, ErrInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			if err := ix.Add("a", tc.v); !errors.Is(err, tc.want) {
				t.Fatalf("Add: %v, want %v", err, tc.want)
			}
			if _, err := ix.Search(tc.v, 3); !errors.Is(err, tc.want) {
				t.Fatalf("Search: %v, want %v", err, tc.want)
			}
			if _, err := ix.Scores(tc.v, []string{"a"}); !errors.Is(err, tc.want) {
				t.Fatalf("Scores: %v, want %v", err, tc.want)
			}
		})
	}
	if err := ix.Add("", []float32{1, 2, 3}); err == nil {
		t.Fatal("Add with an empty id succeeded")
	}
	if got := ix.Len(); got != 0 {
		t.Fatalf("Len=%d after refused Adds", got)
	}
}

func TestIndexFull(t *testing.T) {
	ix := NewIndex(2)
	if got, want := ix.MaxLen, DefaultComponents/2; got != want {
		t.Fatalf("MaxLen=%d, want %d", got, want)
	}
	ix.MaxLen = 2
	mustAdd(t, ix, "a", []float32{1, 0})
	mustAdd(t, ix, "b", []float32{1, 1})
	if err := ix.Add("c", []float32{0, 1}); !errors.Is(err, ErrFull) {
		t.Fatalf("Add to a full index: %v, want ErrFull", err)
	}
	mustAdd(t, ix, "b", []float32{0, 1}) // replacing is not growing
	ix.Remove("a")
	mustAdd(t, ix, "c", []float32{-1, 0})
	sameHits(t, mustSearch(t, ix, []float32{0, 1}, 5), []Hit{{"b", 1}, {"c", 0}})
}

func TestIndexBytesFollowsBlocks(t *testing.T) {
	const dims = 4
	ix := NewIndex(dims)
	if got := ix.Bytes(); got != 0 {
		t.Fatalf("empty Bytes=%d", got)
	}
	block := blockLen * dims * 4
	mustAdd(t, ix, "0", ones(dims))
	one := ix.Bytes()
	if one < block {
		t.Fatalf("Bytes=%d with one block of %d bytes", one, block)
	}
	for i := 1; i <= blockLen; i++ {
		mustAdd(t, ix, fmt.Sprint(i), ones(dims))
	}
	two := ix.Bytes()
	if two < 2*block {
		t.Fatalf("Bytes=%d with two blocks of %d bytes", two, block)
	}
	ix.Remove("7") // the last vector moves into 7's place; block 2 empties
	if got := ix.Bytes(); got > two-block {
		t.Fatalf("Bytes=%d after the second block emptied, want at most %d", got, two-block)
	}
	if got, want := ix.Len(), blockLen; got != want {
		t.Fatalf("Len=%d, want %d", got, want)
	}
	// The moved vector is still found under its own id.
	got, err := ix.Scores(ones(dims), []string{fmt.Sprint(blockLen), "7"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[fmt.Sprint(blockLen)] < 0.999 {
		t.Fatalf("Scores=%v, want only %d with cosine 1", got, blockLen)
	}
}

func TestScores(t *testing.T) {
	ix := NewIndex(2)
	mustAdd(t, ix, "east", []float32{2, 0})
	mustAdd(t, ix, "north", []float32{0, 5})
	mustAdd(t, ix, "west", []float32{-1, 0})
	got, err := ix.Scores([]float32{3, 4}, []string{"east", "west", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"east": 0.6, "west": -0.6}
	if len(got) != len(want) {
		t.Fatalf("Scores=%v, want %v", got, want)
	}
	for id, w := range want {
		if g, ok := got[id]; !ok || g < w-1e-6 || g > w+1e-6 {
			t.Fatalf("Scores[%s]=%v, want %v", id, g, w)
		}
	}
}

func TestDefaultMaxLen(t *testing.T) {
	for dims, want := range map[int]int{256: 19_531, 768: 6_510, 1536: 3_255, MaxDims: 76} {
		if got := NewIndex(dims).MaxLen; got != want {
			t.Fatalf("NewIndex(%d).MaxLen=%d, want %d", dims, got, want)
		}
	}
}

func TestNewIndexPanicsOnBadDims(t *testing.T) {
	for _, dims := range []int{0, -1, MaxDims + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("NewIndex(%d) did not panic", dims)
				}
			}()
			NewIndex(dims)
		}()
	}
}

// TestConcurrentSearchWhileWriting runs readers against one writer; under
// -race it checks the locking, and every result must still be a valid
// ranking of vectors that were in the index at some point.
func TestConcurrentSearchWhileWriting(t *testing.T) {
	const dims, n = 16, 600
	ix := NewIndex(dims)
	r := newRand(7)
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randomVec(r, dims)
	}
	for i := range n / 2 {
		mustAdd(t, ix, fmt.Sprintf("v%03d", i), vecs[i])
	}
	queries := make([][]float32, 8)
	for i := range queries {
		queries[i] = randomVec(r, dims)
	}

	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 4)
	for g := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				q := queries[(g+i)%len(queries)]
				hits, err := ix.Search(q, 10)
				if err != nil {
					errs <- err
					return
				}
				if err := checkRanking(hits, 10); err != nil {
					errs <- err
					return
				}
				_ = ix.Len()
				_ = ix.Bytes()
			}
		})
	}
	for i := n / 2; i < n; i++ {
		mustAdd(t, ix, fmt.Sprintf("v%03d", i), vecs[i])
		ix.Remove(fmt.Sprintf("v%03d", i-n/2))
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// After the writer is done, the index holds exactly the second half.
	want := make(map[string][]float32)
	for i := n / 2; i < n; i++ {
		want[fmt.Sprintf("v%03d", i)] = vecs[i]
	}
	for _, q := range queries {
		sameHits(t, mustSearch(t, ix, q, 10), naive(want, q, 10))
	}
}

func checkRanking(hits []Hit, k int) error {
	if len(hits) > k {
		return fmt.Errorf("%d hits for k=%d", len(hits), k)
	}
	seen := make(map[string]bool)
	for i, h := range hits {
		if seen[h.ID] {
			return fmt.Errorf("%s found twice in %v", h.ID, hits)
		}
		seen[h.ID] = true
		if h.Score < -1.001 || h.Score > 1.001 {
			return fmt.Errorf("score %v out of range", h.Score)
		}
		if i > 0 && (hits[i-1].Score < h.Score || hits[i-1].Score == h.Score && hits[i-1].ID > h.ID) {
			return fmt.Errorf("hits out of order: %v", hits)
		}
	}
	return nil
}
