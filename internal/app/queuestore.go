package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go/jetstream"
)

// kvQueue is consolidation.PendingStore on a key-value bucket.
type kvQueue struct{ kv jetstream.KeyValue }

var _ consolidation.PendingStore = kvQueue{}

// openConfirmQueue binds the confirm queue's bucket (stream.ConfirmBucket,
// the operator's: SetupStreams).
func (a *App) openConfirmQueue(ctx context.Context) (kvQueue, error) {
	kv, err := a.bus(stream.RoleConsolidator).js.KeyValue(ctx, stream.ConfirmBucket)
	return kvQueue{kv}, err
}

// decidedMark is what a taken firing's key holds from then on: a firing
// decided is remembered, so seeing its event again queues nothing.
type decidedMark struct {
	Decided bool `json:"decided"`
}

// Put keeps p; a firing already waiting, or decided before, stays as it
// is.
func (q kvQueue) Put(ctx context.Context, p consolidation.Pending) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if _, err := q.kv.Create(ctx, p.ID, b); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return err
	}
	return nil
}

// Return puts a taken firing back, waiting.
func (q kvQueue) Return(ctx context.Context, p consolidation.Pending) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = q.kv.Put(ctx, p.ID, b)
	return err
}

// Take marks the firing decided at the revision it read, so of two
// instances taking it at once one gets it and the other "not found".
func (q kvQueue) Take(ctx context.Context, id string) (consolidation.Pending, error) {
	var p consolidation.Pending
	e, err := q.kv.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return p, memory.Errorf(memory.ENOTFOUND, "no pending firing %s", id)
	}
	if err != nil {
		return p, err
	}
	if decided(e.Value()) {
		return p, memory.Errorf(memory.ENOTFOUND, "pending firing %s was decided already", id)
	}
	if err := json.Unmarshal(e.Value(), &p); err != nil {
		return p, fmt.Errorf("pending firing %s: %w", id, err)
	}
	mark, _ := json.Marshal(decidedMark{Decided: true})
	if _, err := q.kv.Update(ctx, id, mark, e.Revision()); err != nil {
		return p, memory.Errorf(memory.ENOTFOUND, "pending firing %s was taken by another instance", id)
	}
	return p, nil
}

// decided reports whether a key holds a decided firing's mark.
func decided(v []byte) bool {
	var m decidedMark
	return json.Unmarshal(v, &m) == nil && m.Decided
}

// List is every waiting firing, oldest first.
func (q kvQueue) List(ctx context.Context) ([]consolidation.Pending, error) {
	keys, err := q.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := []consolidation.Pending{}
	for k := range keys.Keys() {
		e, err := q.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // taken meanwhile
		}
		if err != nil {
			return nil, err
		}
		if decided(e.Value()) {
			continue
		}
		var p consolidation.Pending
		if err := json.Unmarshal(e.Value(), &p); err != nil {
			return nil, fmt.Errorf("pending firing %s: %w", k, err)
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}
