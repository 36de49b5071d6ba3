// Package retrievaltest holds stand-ins for the retrieval engine in the
// tests of the packages that serve it (httpapi, natsapi).
package retrievaltest

import (
	"context"
	"sync/atomic"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/retrieval"
)

// CatchingUp is a partition's copy that catches up while it answers: it
// is being built when a request comes, and serves by the time the answer
// is written. Its answers are empty; Building says what an answer from a
// copy being built carries, "" once it has answered.
type CatchingUp struct{ serving atomic.Bool }

// Search answers an empty search, and the copy serves from then on.
func (c *CatchingUp) Search(context.Context, memory.SearchQuery) ([]memory.SearchResult, error) {
	c.serving.Store(true)
	return []memory.SearchResult{}, nil
}

// Context answers an empty context, and the copy serves from then on.
func (c *CatchingUp) Context(context.Context, retrieval.Request) (*retrieval.Response, error) {
	c.serving.Store(true)
	return &retrieval.Response{}, nil
}

// Building is how far the copy has come while it is built, "" once it
// serves.
func (c *CatchingUp) Building() string {
	if c.serving.Load() {
		return ""
	}
	return "partition 0 is being rebuilt: 3 of 9 events read"
}
