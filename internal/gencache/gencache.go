// Package gencache is a bounded map of two generations: entries go into
// the newer, and when it has spent its budget it becomes the older and
// the older is dropped; an entry read from the older moves to the newer.
// It approximates least-recently-used without a list, and a hit costs
// one map lookup under a lock. The token counts, a stored text's tokens
// and the document frequencies of a query's words are kept in one each.
package gencache

import "sync"

// Cache is safe for concurrent use. Its zero value is not usable: New.
type Cache[K comparable, V any] struct {
	budget int
	cost   func(K, V) int

	mu       sync.Mutex
	cur, old map[K]V
	spent    int // of budget, by cur's entries
}

// New returns a cache whose generations each hold entries costing up to
// budget, cost being what an entry costs (nil: 1 each, so budget counts
// entries). An entry that alone costs more than a 64th of the budget is
// not kept: it would crowd out the many it is kept for.
func New[K comparable, V any](budget int, cost func(K, V) int) *Cache[K, V] {
	if cost == nil {
		cost = func(K, V) int { return 1 }
	}
	return &Cache[K, V]{budget: budget, cost: cost, cur: map[K]V{}}
}

// Get returns the value kept for k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.cur[k]
	if !ok {
		if v, ok = c.old[k]; ok {
			c.putLocked(k, v)
		}
	}
	return v, ok
}

// Len is how many entries the two generations hold.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}

// Put keeps v for k.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	c.putLocked(k, v)
	c.mu.Unlock()
}

func (c *Cache[K, V]) putLocked(k K, v V) {
	if _, ok := c.cur[k]; ok {
		c.cur[k] = v // its cost is spent already
		return
	}
	n := c.cost(k, v)
	if n > max(c.budget/64, 1) {
		return
	}
	if c.spent+n > c.budget {
		c.old, c.cur, c.spent = c.cur, make(map[K]V, len(c.cur)), 0
	}
	c.cur[k] = v
	c.spent += n
}
