// Package projector applies the MEMORY stream to the read model.
//
// It exists for one rule: events are applied strictly in stream order, so a
// read model rebuilt from the stream equals the live one. A batch that
// fails for a reason that may pass (a locked or full disk) is retried in
// place, with backoff, before anything after it is applied. An event that
// fails on its own is handed back at once, to go to the dead letters with
// its reason: the store has already committed the rest of its batch and
// moved its position past it, so trying the batch again would skip it and
// lose it without a word. Such an error carries the code EINVALID, which
// the stream's fate table dead-letters at once.
//
// It never calls an LLM and never reads the clock for data: every value it
// writes comes from the events.
package projector

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// Projector applies batches of events through an Applier.
type Projector struct {
	Store memory.Applier
	Log   *zap.Logger
	// Backoff is the wait before the n-th retry of a failing batch.
	Backoff func(n int) time.Duration
}

// New returns a Projector with default backoff (100 ms doubling to 5 s).
// A try costs one failed transaction, and the cap is how stale the read
// model stays once the database can write again (a full disk freed).
func New(store memory.Applier, log *zap.Logger) *Projector {
	return &Projector{Store: store, Log: log, Backoff: func(n int) time.Duration {
		return min(100*time.Millisecond<<min(n, 9), 5*time.Second)
	}}
}

// Apply applies batch and returns one error per event that cannot be
// applied (nil for the others). It returns only when every event is either
// applied or reported, or when ctx is done. While the database itself is
// unavailable it waits, however long that takes: skipping ahead would
// apply events out of order.
func (p *Projector) Apply(ctx context.Context, batch []memory.Applied) []error {
	for try := 0; ; try++ {
		errs := p.Store.Apply(ctx, batch)
		if !retryable(errs) {
			return refused(errs)
		}
		if ctx.Err() != nil {
			return errs
		}
		d := p.Backoff(try)
		p.Log.Warn("apply failed; retrying", zap.Int("events", len(batch)), zap.Int("try", try+1),
			zap.Duration("delay", d), zap.Error(firstErr(errs)))
		select {
		case <-ctx.Done():
			return errs
		case <-time.After(d):
		}
	}
}

// retryable reports whether the batch should be tried again: only when
// the database itself was unavailable, which rolls the whole batch back.
func retryable(errs []error) bool {
	for _, err := range errs {
		if memory.ErrorCode(err) == memory.EUNAVAILABLE {
			return true
		}
	}
	return false
}

// refused gives each event the store refused on its own the code
// EINVALID, whatever the store said: applying is deterministic and the
// position has passed the event, so no retry could apply it.
func refused(errs []error) []error {
	for i, err := range errs {
		switch memory.ErrorCode(err) {
		case "", memory.EINVALID, memory.ETOOLARGE:
		default:
			errs[i] = fmt.Errorf("%w: %w", memory.Errorf(memory.EINVALID, "event not applied"), err)
		}
	}
	return errs
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
