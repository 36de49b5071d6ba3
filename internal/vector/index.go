package vector

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// blockLen is how many vectors share one allocation. Growing block by block
// rather than appending to one slice means Add never copies the whole index
// under the write lock (at 100k × 768 dimensions that would be 300 MB, tens
// of milliseconds during which every Search waits), and at most one block is
// allocated but unused.
const blockLen = 256

// DefaultComponents bounds the vectors × dimensions a new Index holds. At
// the 0.41-0.48 ns per component Search was measured at on the 2-core
// development machine (see the package documentation), 5M components is
// about 2 ms a query, the share of the 5 ms retrieval goal vectors can take:
// 6,510 vectors of 768 dimensions, 3,255 of 1,536, 19,531 of 256, and
// 20 MB of floats. Past it brute force no longer fits the budget.
const DefaultComponents = 5_000_000

// Hit is one result: an id and its score, higher is better.
type Hit struct {
	ID    string
	Score float64
}

// Index holds the vectors of one scope (one user) in memory and finds the
// nearest ones to a query by brute force: every Search computes the cosine
// with every vector. Vectors are normalised when added, so a dot product is
// the cosine.
//
// Any number of Searches run at once; Add and Remove take the write lock
// and wait for them. Memory per vector is 4 bytes per dimension plus the id
// and its bookkeeping, about 95 bytes with a 26-byte ULID, plus up to one
// block of slack per index (Bytes gives the estimate).
type Index struct {
	// MaxLen caps the number of vectors: adding a new id to a full index
	// fails with ErrFull (replacing an existing id still works), and the
	// caller keeps that vector out of semantic search, or evicts another.
	// NewIndex sets DefaultComponents/dims; zero or less means no cap. Set
	// it before the index is shared.
	MaxLen int

	dims int

	mu     sync.RWMutex
	blocks [][]float32      // each blockLen×dims long; position p is in blocks[p/blockLen]
	ids    []string         // ids[p] is the id of the vector at position p
	pos    map[string]int32 // the position of each id
	idLen  int              // total bytes of the ids, for Bytes
}

// NewIndex returns an empty index for vectors of dims dimensions. It panics
// if dims is not between 1 and MaxDims: the dimension count comes from the
// embedding model's configuration, not from outside input.
func NewIndex(dims int) *Index {
	if dims < 1 || dims > MaxDims {
		panic(fmt.Sprintf("vector.NewIndex: %d dimensions, want 1 to %d", dims, MaxDims))
	}
	return &Index{MaxLen: max(1, DefaultComponents/dims), dims: dims, pos: make(map[string]int32)}
}

// Dims is the number of dimensions the index holds.
func (ix *Index) Dims() int { return ix.dims }

// Len is the number of vectors in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.ids)
}

// Add stores a normalised copy of v under id, replacing any vector already
// there. It refuses a vector of the wrong length (ErrDims), one that is
// zero or holds NaN or ±Inf (ErrInvalid; it would score 0 or NaN against
// everything), and a new id when the index is full (ErrFull).
func (ix *Index) Add(id string, v []float32) error {
	if id == "" {
		return errors.New("add vector: empty id")
	}
	if err := ix.check(v); err != nil {
		return fmt.Errorf("add vector %s: %w", id, err)
	}
	n := Normalize(v)

	ix.mu.Lock()
	defer ix.mu.Unlock()
	if p, ok := ix.pos[id]; ok {
		copy(ix.vec(int(p)), n)
		return nil
	}
	p := len(ix.ids)
	if ix.MaxLen > 0 && p >= ix.MaxLen {
		return fmt.Errorf("add vector %s: %d vectors: %w", id, p, ErrFull)
	}
	if p == len(ix.blocks)*blockLen {
		ix.blocks = append(ix.blocks, make([]float32, blockLen*ix.dims))
	}
	ix.ids = append(ix.ids, id)
	ix.pos[id] = int32(p)
	ix.idLen += len(id)
	copy(ix.vec(p), n)
	return nil
}

// Remove deletes the vector stored under id, if any. The last vector moves
// into its place, so removal costs one vector copy whatever the size.
func (ix *Index) Remove(id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	p32, ok := ix.pos[id]
	if !ok {
		return
	}
	p, last := int(p32), len(ix.ids)-1
	if p != last {
		copy(ix.vec(p), ix.vec(last))
		ix.ids[p] = ix.ids[last]
		ix.pos[ix.ids[p]] = int32(p)
	}
	ix.ids[last] = ""
	ix.ids = ix.ids[:last]
	delete(ix.pos, id)
	ix.idLen -= len(id)
	if last%blockLen == 0 {
		// The last block is now empty: give its memory back.
		ix.blocks[len(ix.blocks)-1] = nil
		ix.blocks = ix.blocks[:len(ix.blocks)-1]
	}
}

// Search returns the k vectors with the highest cosine similarity to q,
// best first; equal scores are ordered by id so that results do not depend
// on the order vectors were added or removed. It returns fewer than k hits
// when the index holds fewer. A query of the wrong length (ErrDims), or one
// that is zero or holds NaN or ±Inf (ErrInvalid), is an error, so that a
// change of embedding model is noticed rather than answered with nothing.
func (ix *Index) Search(q []float32, k int) ([]Hit, error) {
	if err := ix.check(q); err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	if k <= 0 {
		return nil, nil
	}
	q = Normalize(q)

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := len(ix.ids)
	top := topK{ids: ix.ids, c: make([]cand, 0, min(k, n))}
	d := ix.dims
	for b, blk := range ix.blocks {
		start := b * blockLen
		m := min(blockLen, n-start)
		for j := range m {
			s := Dot(q, blk[j*d:(j+1)*d:(j+1)*d])
			// Most vectors lose to the worst kept so far: reject them
			// before the call.
			if len(top.c) == cap(top.c) && s < top.c[0].score {
				continue
			}
			top.offer(s, int32(start+j))
		}
	}
	hits := make([]Hit, len(top.c))
	for i, c := range top.c {
		hits[i] = Hit{ID: ix.ids[c.pos], Score: float64(c.score)}
	}
	sortHits(hits)
	return hits, nil
}

// Scores returns the cosine similarity of q to each of ids that the index
// holds; ids it does not hold are left out. It lets a caller score the
// keyword search's hits semantically too, so that Hybrid sees all three
// scores for every candidate.
func (ix *Index) Scores(q []float32, ids []string) (map[string]float64, error) {
	if err := ix.check(q); err != nil {
		return nil, fmt.Errorf("score vectors: %w", err)
	}
	q = Normalize(q)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make(map[string]float64, len(ids))
	for _, id := range ids {
		if p, ok := ix.pos[id]; ok {
			out[id] = float64(Dot(q, ix.vec(int(p))))
		}
	}
	return out, nil
}

// Bytes estimates the memory the index holds: its blocks (allocated, not
// only used), the ids and their bookkeeping. BenchmarkMemory checks the
// estimate against the heap.
func (ix *Index) Bytes() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	const (
		strHeader = 16 // a pointer and a length
		// A Go map[string]int32 entry: a 16-byte key and 4-byte value in
		// a 24-byte slot, a control byte, and slack from a load factor
		// between 7/16 and 7/8: about 40 bytes measured.
		mapEntry = 40
	)
	return len(ix.blocks)*blockLen*ix.dims*4 + cap(ix.ids)*strHeader + ix.idLen + len(ix.pos)*mapEntry
}

func (ix *Index) vec(p int) []float32 {
	off := (p % blockLen) * ix.dims
	return ix.blocks[p/blockLen][off : off+ix.dims : off+ix.dims]
}

// check refuses a vector that cannot be compared with the index's.
func (ix *Index) check(v []float32) error {
	if len(v) != ix.dims {
		return fmt.Errorf("%d dimensions, the index holds %d: %w", len(v), ix.dims, ErrDims)
	}
	if err := checkFinite(v); err != nil {
		return err
	}
	for _, f := range v {
		if f != 0 {
			return nil
		}
	}
	return fmt.Errorf("zero vector: %w", ErrInvalid)
}

type cand struct {
	score float32
	pos   int32
}

// topK keeps the best cap(c) candidates seen in a min-heap whose root is
// the worst of them, so each new candidate costs one comparison unless it
// gets in. The order is total (score, then id), which makes the kept set,
// not only its order, independent of the scan order.
type topK struct {
	c   []cand
	ids []string
}

// below reports whether a ranks below b.
func (t *topK) below(a, b cand) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return t.ids[a.pos] > t.ids[b.pos]
}

func (t *topK) offer(score float32, pos int32) {
	c := cand{score, pos}
	if len(t.c) < cap(t.c) {
		t.c = append(t.c, c)
		for i := len(t.c) - 1; i > 0; {
			parent := (i - 1) / 2
			if !t.below(t.c[i], t.c[parent]) {
				break
			}
			t.c[i], t.c[parent] = t.c[parent], t.c[i]
			i = parent
		}
		return
	}
	if !t.below(t.c[0], c) {
		return
	}
	t.c[0] = c
	for i := 0; ; {
		l, r, least := 2*i+1, 2*i+2, i
		if l < len(t.c) && t.below(t.c[l], t.c[least]) {
			least = l
		}
		if r < len(t.c) && t.below(t.c[r], t.c[least]) {
			least = r
		}
		if least == i {
			return
		}
		t.c[i], t.c[least] = t.c[least], t.c[i]
		i = least
	}
}

// sortHits orders hits best first, equal scores by id.
func sortHits(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
