package consolidation

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"go.uber.org/zap"
)

// Pending is a firing of a mode: confirm rule waiting for an operator.
// The queue lives in Consolidator.Queue when it is set (a JetStream
// key-value bucket: it survives a restart and every instance sees it);
// otherwise in the consolidator's memory, where a restart forgets it.
type Pending struct {
	ID          string    `json:"id"`
	Rule        string    `json:"rule"`
	Description string    `json:"description,omitempty"`
	Namespace   string    `json:"namespace,omitempty"` // empty for a schedule
	User        string    `json:"user,omitempty"`
	EventType   string    `json:"event_type,omitempty"`
	EventID     string    `json:"event_id,omitempty"`
	Time        time.Time `json:"time"` // the event's, or the firing's
	Actions     []string  `json:"actions"`
	// TriggerSeq is the stream sequence of the triggering event, from
	// which a stored firing's trigger is read again.
	TriggerSeq uint64 `json:"trigger_seq,omitempty"`

	rule    rules.Rule
	trigger *memory.Applied
}

// ask queues a firing of a confirm rule, once: the same rule fired by the
// same event (a redelivery) is one item.
func (c *Consolidator) ask(r rules.Rule, trigger *memory.Applied, at time.Time) {
	p := &Pending{Rule: r.Name, Description: r.Description, Time: at.UTC(), rule: r}
	if trigger != nil {
		t := *trigger
		p.trigger = &t
		p.Namespace, p.User, p.EventType, p.EventID, p.TriggerSeq = t.Scope.Namespace, t.Scope.User, t.Type, t.ID, t.Seq
		p.ID = "pf_" + hashOf(r.Name, t.Source, t.ID)[:16]
	} else {
		p.ID = "pf_" + hashOf(r.Name, strconv.FormatInt(at.UnixNano(), 10))[:16]
	}
	for _, a := range r.Do {
		p.Actions = append(p.Actions, a.String())
	}
	// A rule that acts on the user's memory as it stands (re-render the
	// cards) needs one firing waiting per user, not one per event: the
	// one waiting, approved, runs on the memory as it is then. Without
	// this a few sessions' important memories fill the queue with the
	// same request.
	coalesce := trigger != nil && wholeUser(r)
	same := func(q *Pending) bool {
		return q.ID == p.ID || coalesce && q.Rule == p.Rule && q.Namespace == p.Namespace && q.User == p.User
	}
	if c.Queue != nil {
		if coalesce {
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			waiting, err := c.ListPending(ctx, &memory.Scope{Namespace: p.Namespace, User: p.User})
			cancel()
			if err != nil {
				c.Log.Warn("list the confirm queue", zap.Error(err))
			}
			for i := range waiting {
				if same(&waiting[i]) {
					if waiting[i].ID != p.ID {
						c.cover(p)
					}
					return
				}
			}
		}
		c.storeAsk(p)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.decided[p.ID] {
		return // approved or dismissed already: the event came again
	}
	for _, q := range c.pending {
		if same(q) {
			if q.ID != p.ID {
				c.markDecided(p.ID) // covered by q: decided with it
			}
			return
		}
	}
	if len(c.pending) >= maxPending {
		c.Log.Warn("confirm queue full; the oldest firing is dropped", zap.String(fieldRule, c.pending[0].Rule))
		c.pending = slices.Delete(c.pending, 0, 1)
	}
	c.pending = append(c.pending, p)
	c.Log.Info("rule waits for confirmation", zap.String(fieldRule, r.Name), zap.String("pending", p.ID))
}

// markDecided remembers firing id as decided, in an in-memory queue
// (c.mu held).
func (c *Consolidator) markDecided(id string) {
	if c.decided == nil {
		c.decided = map[string]bool{}
	}
	if len(c.decided) >= maxDecided {
		clear(c.decided) // a bound, not a guarantee, for a queue in memory
	}
	c.decided[id] = true
}

// cover records firing p, coalesced into one already waiting, as decided:
// the waiting one, approved or dismissed, stands for it. Seen again (a
// replay, a redelivery) it is not queued anew once the waiting one is
// decided.
func (c *Consolidator) cover(p *Pending) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	err := c.Queue.Put(ctx, *p)
	if err == nil {
		_, err = c.Queue.Take(ctx, p.ID)
	}
	if err != nil && memory.ErrorCode(err) != memory.ENOTFOUND {
		c.Log.Warn("mark a coalesced firing decided", zap.String(fieldRule, p.Rule), zap.String("pending", p.ID), zap.Error(err))
	}
}

// wholeUser reports whether every action of r acts on the user's memory
// as it stands rather than on the event that fired it.
func wholeUser(r rules.Rule) bool {
	for _, a := range r.Do {
		switch a.Type {
		case rules.ActRenderCards, rules.ActRefreshProfile, rules.ActDedupe, rules.ActDecay, rules.ActArchive,
			rules.ActExpire, rules.ActEnforceCap, rules.ActCompressDaily:
		default:
			return false
		}
	}
	return len(r.Do) > 0
}

// PendingFirings lists the firings waiting for confirmation, oldest first;
// with a scope, only that user's (a schedule's firings belong to no user).
func (c *Consolidator) PendingFirings(scope *memory.Scope) []Pending {
	if c.Queue != nil {
		out, err := c.ListPending(context.Background(), scope)
		if err != nil {
			c.Log.Warn("list the confirm queue", zap.Error(err))
		}
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []Pending{}
	for _, p := range c.pending {
		if scope != nil && (p.Namespace != scope.Namespace || p.User != scope.User) {
			continue
		}
		out = append(out, *p)
	}
	return out
}

// take removes a pending firing, in scope when a scope is given.
func (c *Consolidator) take(id string, scope *memory.Scope) (*Pending, error) {
	if c.Queue != nil {
		return c.storeTake(id, scope)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range c.pending {
		if p.ID != id || scope != nil && (p.Namespace != scope.Namespace || p.User != scope.User) {
			continue
		}
		c.pending = slices.Delete(c.pending, i, i+1)
		c.markDecided(id)
		return p, nil
	}
	return nil, memory.Errorf(memory.ENOTFOUND, "no pending firing %s", id)
}

// Approve runs a pending firing's actions now, as they would have run when
// it fired (same event, same time, so the same ids). With a scope, only
// that user's firing may be approved. If the actions fail the firing is
// queued again.
func (c *Consolidator) Approve(ctx context.Context, id string, scope *memory.Scope) error {
	p, err := c.take(id, scope)
	if err != nil {
		return err
	}
	if err := c.runRule(ctx, p.rule, p.trigger, p.Time); err != nil {
		if c.Queue != nil {
			c.storeReturn(p)
			return err
		}
		c.mu.Lock()
		delete(c.decided, p.ID)
		c.pending = append(c.pending, p)
		c.mu.Unlock()
		return err
	}
	c.Log.Info("pending firing approved", zap.String(fieldRule, p.Rule), zap.String("pending", p.ID))
	return nil
}

// Dismiss drops a pending firing without running it.
func (c *Consolidator) Dismiss(id string, scope *memory.Scope) error {
	p, err := c.take(id, scope)
	if err == nil {
		c.Log.Info("pending firing dismissed", zap.String(fieldRule, p.Rule), zap.String("pending", p.ID))
	}
	return err
}
