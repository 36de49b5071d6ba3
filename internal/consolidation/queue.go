package consolidation

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// PendingStore keeps the confirm queue outside the process. Take returns
// a waiting firing only for the one caller that gets it, so two instances
// never both run it (memory.ENOTFOUND otherwise), and remembers it was
// taken: Put of a firing taken before (the consolidator seeing its event
// again, on a replay) keeps nothing, so a decision is never asked again.
// Return puts a taken firing back, when what it ran failed.
type PendingStore interface {
	Put(ctx context.Context, p Pending) error
	Take(ctx context.Context, id string) (Pending, error)
	Return(ctx context.Context, p Pending) error
	List(ctx context.Context) ([]Pending, error)
}

// storeTimeout bounds one call to the store from a path without a context.
const storeTimeout = 10 * time.Second

func (c *Consolidator) storeAsk(p *Pending) {
	c.storePut(p)
	c.Log.Info("rule waits for confirmation", zap.String(fieldRule, p.Rule), zap.String("pending", p.ID))
}

func (c *Consolidator) storePut(p *Pending) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := c.Queue.Put(ctx, *p); err != nil {
		c.Log.Error("keep a pending firing", zap.String(fieldRule, p.Rule), zap.String("pending", p.ID), zap.Error(err))
	}
}

// storeReturn puts a taken firing back in the queue.
func (c *Consolidator) storeReturn(p *Pending) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := c.Queue.Return(ctx, *p); err != nil {
		c.Log.Error("put a pending firing back", zap.String(fieldRule, p.Rule), zap.String("pending", p.ID), zap.Error(err))
	}
}

// ListPending lists the stored firings, oldest first; with a scope, only
// that user's.
func (c *Consolidator) ListPending(ctx context.Context, scope *memory.Scope) ([]Pending, error) {
	if c.Queue == nil {
		return c.PendingFirings(scope), nil
	}
	all, err := c.Queue.List(ctx)
	if err != nil {
		return []Pending{}, fmt.Errorf("confirm queue: %w", err)
	}
	out := []Pending{}
	for _, p := range all {
		if scope != nil && (p.Namespace != scope.Namespace || p.User != scope.User) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// storeTake takes a stored firing and makes it runnable again: its rule
// from the rules in force, its trigger from the stream.
func (c *Consolidator) storeTake(id string, scope *memory.Scope) (*Pending, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	all, err := c.Queue.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("confirm queue: %w", err)
	}
	found := false
	for _, p := range all {
		if p.ID == id && (scope == nil || p.Namespace == scope.Namespace && p.User == scope.User) {
			found = true
		}
	}
	if !found {
		return nil, memory.Errorf(memory.ENOTFOUND, "no pending firing %s", id)
	}
	p, err := c.Queue.Take(ctx, id)
	if err != nil {
		return nil, err
	}
	set := c.rules()
	for _, r := range set.Rules {
		if r.Name == p.Rule {
			p.rule = r
		}
	}
	if p.rule.Name == "" {
		return nil, memory.Errorf(memory.ENOTFOUND, "pending firing %s: rule %q is no longer in force", id, p.Rule)
	}
	if p.TriggerSeq > 0 {
		if c.Trigger == nil {
			c.storeReturn(&p)
			return nil, memory.Errorf(memory.EUNAVAILABLE, "pending firing %s: no way to read its event %d", id, p.TriggerSeq)
		}
		if p.trigger, err = c.Trigger(ctx, p.TriggerSeq); err != nil {
			c.storeReturn(&p)
			return nil, fmt.Errorf("pending firing %s: read event %d: %w", id, p.TriggerSeq, err)
		}
	}
	return &p, nil
}
