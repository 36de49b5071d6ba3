package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/engramhq/engram/internal/memory"
	"github.com/nats-io/nats.go/jetstream"
)

// KVQueue is a queue of decisions waiting on a key-value bucket, one key
// per item: the confirm queue of rule firings (ConfirmBucket, the
// operator's: SetupStreams), whose words its errors use. An item taken is
// remembered, so putting it again, its event seen again on a replay,
// queues nothing.
type KVQueue[T any] struct {
	kv jetstream.KeyValue
	// id is an item's key; before orders List.
	id     func(T) string
	before func(a, b T) bool
}

// OpenKVQueue binds the queue on bucket, keyed by id, listed in before's
// order.
func OpenKVQueue[T any](ctx context.Context, js jetstream.JetStream, bucket string, id func(T) string, before func(a, b T) bool) (KVQueue[T], error) {
	kv, err := js.KeyValue(ctx, bucket)
	return KVQueue[T]{kv: kv, id: id, before: before}, err
}

// decidedMark is what a taken item's key holds from then on.
type decidedMark struct {
	Decided bool `json:"decided"`
}

// Put keeps p; an item already waiting, or decided before, stays as it
// is.
func (q KVQueue[T]) Put(ctx context.Context, p T) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if _, err := q.kv.Create(ctx, q.id(p), b); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return err
	}
	return nil
}

// Return puts a taken item back, waiting.
func (q KVQueue[T]) Return(ctx context.Context, p T) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = q.kv.Put(ctx, q.id(p), b)
	return err
}

// Take marks the item decided at the revision it read, so of two
// instances taking it at once one gets it and the other "not found".
func (q KVQueue[T]) Take(ctx context.Context, id string) (T, error) {
	var p T
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

// decided reports whether a key holds a decided item's mark.
func decided(v []byte) bool {
	var m decidedMark
	return json.Unmarshal(v, &m) == nil && m.Decided
}

// List is every waiting item, in before's order.
func (q KVQueue[T]) List(ctx context.Context) ([]T, error) {
	keys, err := q.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := []T{}
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
		var p T
		if err := json.Unmarshal(e.Value(), &p); err != nil {
			return nil, fmt.Errorf("pending firing %s: %w", k, err)
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return q.before(out[i], out[j]) })
	return out, nil
}
