package embedding

import (
	"container/list"
	"crypto/sha256"
	"sync"

	"github.com/engramhq/engram/internal/memory"
)

// key names a published vector: a digest of scope, model and text hash,
// so a remembered key costs 16 bytes however long the names are.
type key [16]byte

func keyOf(scope memory.Scope, model, hash string) key {
	h := sha256.New()
	for _, s := range []string{scope.Namespace, scope.User, model, hash} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var k key
	copy(k[:], h.Sum(nil))
	return k
}

// lru remembers the most recently published keys, up to a bound.
type lru struct {
	mu    sync.Mutex
	max   int
	order *list.List // of key, most recent first
	items map[key]*list.Element
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: make(map[key]*list.Element)}
}

// has reports whether k is remembered, and makes it the most recent.
func (c *lru) has(k key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[k]
	if ok {
		c.order.MoveToFront(el)
	}
	return ok
}

// add remembers k, forgetting the least recent key when full.
func (c *lru) add(k key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[k]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.items[k] = c.order.PushFront(k)
	if c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(key))
	}
}
