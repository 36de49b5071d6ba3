package sqlite

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/vector"
)

// defaultVectorCacheBytes bounds the memory the cached vector indexes
// take (vector.Index.Bytes): 256 MB holds the indexes of about 100 users
// with 1,000 memories of 768 dimensions each, or 1,000 with 100.
const defaultVectorCacheBytes = 256 << 20

// applyEmbedded stores the vectors of a memory.embedded event. A vector
// already stored for the same text and model stays: the text, and so the
// vector, is the same.
func applyEmbedded(w *wtx, env memory.Envelope, d *events.MemoryEmbedded) error {
	for i, e := range d.Vectors {
		blob, err := vector.Encode(e.Vector)
		if err != nil {
			return memory.Errorf(memory.EINVALID, "vectors[%d]: %v", i, err)
		}
		if _, err := w.tx.ExecContext(w.ctx, `INSERT OR IGNORE INTO embeddings (namespace, user_id, model, hash, vector)
			VALUES (?, ?, ?, ?, ?)`, env.Scope.Namespace, env.Scope.User, d.Model, e.Hash, blob); err != nil {
			return err
		}
	}
	return nil
}

// changesVectors reports whether an event of type t can change which
// memories a user's vector index holds: their active memories, their
// contents, or their vectors. Turns, sessions, episodes, access counts and
// the profile's order cannot, and must not cost a rebuild of the index.
func changesVectors(t string) bool {
	switch t {
	case events.TypeMemoryExtracted, events.TypeMemoryAdded, events.TypeMemoryUpdated, events.TypeMemoryDeleted,
		events.TypePendingConfirmed, events.TypePendingIgnored, events.TypePendingSnoozed,
		events.TypeMemoriesMerged, events.TypeMemoriesArchived, events.TypeUserForgotten, events.TypeMemoryEmbedded:
		return true
	}
	return false
}

// SearchVectors returns the scope's active memories nearest to q among
// those embedded with model, best first, at most k, with each one's cosine
// in Semantic (above zero); and the cosine of q with each memory in also that has a
// vector, so that keyword hits can be scored semantically too. A scope
// with no vectors gives no hits and no error. The scope's index is built
// from SQLite on first use and kept until a write to the scope's memories.
func (s *Store) SearchVectors(ctx context.Context, scope memory.Scope, model string, q []float32, k int, also []string) ([]memory.MemoryHit, map[string]float64, error) {
	ix, err := s.vectorIndex(ctx, scope, model)
	if err != nil || ix == nil {
		return nil, nil, err
	}
	hits, err := ix.Search(q, k) // Search and Scores normalise q themselves
	if err != nil {
		return nil, nil, fmt.Errorf("search vectors: %w", err)
	}
	scores, err := ix.Scores(q, also)
	if err != nil {
		return nil, nil, fmt.Errorf("search vectors: %w", err)
	}
	// A cosine of zero or less is no likeness at all.
	for len(hits) > 0 && hits[len(hits)-1].Score <= 0 {
		hits = hits[:len(hits)-1]
	}
	if len(hits) == 0 {
		return nil, scores, nil
	}
	ids := make([]any, 0, len(hits)+2)
	ids = append(ids, scope.Namespace, scope.User)
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT m.rowid, `+prefixed("m.", memoryColumns)+` FROM memories m
		WHERE m.namespace = ? AND m.user_id = ? AND m.status = 'active'
			AND m.id IN (?`+strings.Repeat(", ?", len(hits)-1)+`)`, ids...)
	if err != nil {
		return nil, nil, fmt.Errorf("search vectors: %w", err)
	}
	defer quiet.Close(rows)
	byID := make(map[string]memory.Memory, len(hits))
	for rows.Next() {
		m, err := scanMemoryWith(rows)
		if err != nil {
			return nil, nil, fmt.Errorf("search vectors: %w", err)
		}
		byID[m.ID] = m.Memory
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("search vectors: %w", err)
	}
	out := make([]memory.MemoryHit, 0, len(hits))
	for _, h := range hits {
		// A memory the index holds but the table no longer has active
		// changed after the index was built; it is simply not a hit.
		if m, ok := byID[h.ID]; ok {
			out = append(out, memory.MemoryHit{Memory: m, Semantic: float64(h.Score)})
		}
	}
	return out, scores, nil
}

// vectorIndex returns the scope's index for model, from the cache or
// built from the read model; nil when the scope has no vectors.
func (s *Store) vectorIndex(ctx context.Context, scope memory.Scope, model string) (*vector.Index, error) {
	key := vectorKey{scope: scope, model: model}
	ix, gen, ok := s.vectors.get(key)
	if ok {
		return ix, nil
	}
	ix, err := s.buildVectorIndex(ctx, scope, model)
	if err != nil {
		return nil, err
	}
	s.vectors.put(key, ix, gen)
	return ix, nil
}

// buildVectorIndex loads the vectors of the scope's active memories: each
// memory's vector is the one filed under the hash of its content. Past
// the index's capacity (vector.DefaultComponents) the remaining memories
// are left to full-text search.
func (s *Store) buildVectorIndex(ctx context.Context, scope memory.Scope, model string) (*vector.Index, error) {
	vecs := map[string][]byte{}
	rows, err := s.r.QueryContext(ctx, `SELECT hash, vector FROM embeddings WHERE namespace = ? AND user_id = ? AND model = ?`,
		scope.Namespace, scope.User, model)
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	for rows.Next() {
		var hash string
		var blob []byte
		if err := rows.Scan(&hash, &blob); err != nil {
			quiet.Close(rows)
			return nil, fmt.Errorf("load vectors: %w", err)
		}
		vecs[hash] = blob
	}
	quiet.Close(rows)
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	if len(vecs) == 0 {
		return nil, nil
	}
	rows, err = s.r.QueryContext(ctx, `SELECT id, content FROM memories
		WHERE namespace = ? AND user_id = ? AND status = 'active' ORDER BY updated DESC, id`, scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	defer quiet.Close(rows)
	var ix *vector.Index
	for rows.Next() {
		var id, content string
		if err := rows.Scan(&id, &content); err != nil {
			return nil, fmt.Errorf("load vectors: %w", err)
		}
		blob, ok := vecs[events.TextHash(content)]
		if !ok {
			continue // not embedded (yet): found by text only
		}
		v, err := vector.Decode(blob)
		if err != nil {
			return nil, fmt.Errorf("load vectors: memory %s: %w", id, err)
		}
		if ix == nil {
			ix = vector.NewIndex(len(v))
		}
		switch err := ix.Add(id, v); { // Add stores a normalised copy
		case errors.Is(err, vector.ErrFull):
			return ix, nil // the newest memories are in; the rest by text
		case err != nil:
			// A vector of other dimensions under the same model name: the
			// model changed behind its name. Keep the index consistent.
			continue
		}
	}
	return ix, rows.Err()
}

// vectorKey names one cached index.
type vectorKey struct {
	scope memory.Scope
	model string
}

// vectorCache keeps recently used vector indexes within a byte budget,
// least recently used out first. Writers invalidate by scope through
// generation counters: an index is current if its scope's counter has not
// moved since the build began, so an index built while a write committed
// is never kept as current. Counters are striped by a hash of the scope,
// which bounds their memory; a write to one scope may also invalidate
// another's index, costing a rebuild, never a stale answer.
type vectorCache struct {
	seed  maphash.Seed
	gens  [4096]atomic.Uint64
	mu    sync.Mutex
	max   int
	bytes int
	lru   *list.List // of *vectorEntry, most recent first
	byKey map[vectorKey]*list.Element
}

type vectorEntry struct {
	key   vectorKey
	ix    *vector.Index // nil: the scope has no vectors
	gen   uint64
	bytes int
}

func newVectorCache(maxBytes int) *vectorCache {
	return &vectorCache{seed: maphash.MakeSeed(), max: maxBytes, lru: list.New(), byKey: map[vectorKey]*list.Element{}}
}

func (c *vectorCache) stripe(s memory.Scope) *atomic.Uint64 {
	return &c.gens[maphash.String(c.seed, s.Namespace+"\x00"+s.User)%uint64(len(c.gens))]
}

func (c *vectorCache) invalidate(s memory.Scope) { c.stripe(s).Add(1) }

// get returns the cached index of key if it is current; otherwise the
// generation to pass to put with the index built now.
func (c *vectorCache) get(key vectorKey) (ix *vector.Index, gen uint64, ok bool) {
	gen = c.stripe(key.scope).Load()
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, found := c.byKey[key]; found {
		e := el.Value.(*vectorEntry)
		if e.gen == gen {
			c.lru.MoveToFront(el)
			return e.ix, gen, true
		}
		c.remove(el)
	}
	return nil, gen, false
}

func (c *vectorCache) put(key vectorKey, ix *vector.Index, gen uint64) {
	e := &vectorEntry{key: key, ix: ix, gen: gen, bytes: 64}
	if ix != nil {
		e.bytes += ix.Bytes()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, found := c.byKey[key]; found {
		c.remove(el)
	}
	if e.bytes > c.max {
		return // larger than the whole budget: rebuilt per search
	}
	c.byKey[key] = c.lru.PushFront(e)
	c.bytes += e.bytes
	for c.bytes > c.max {
		c.remove(c.lru.Back())
	}
}

func (c *vectorCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*vectorEntry)
	delete(c.byKey, e.key)
	c.bytes -= e.bytes
}
