package app

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/engramhq/engram/internal/stream"
)

// catchUp is the read model's readiness: ready once the projector has
// applied, or dead-lettered, every event MEMORY held when this process
// started. Until then searches answer from a read model that is still
// being rebuilt. Once ready it stays ready; lag after that is in /metrics.
type catchUp struct {
	target  uint64 // MEMORY's last sequence at start
	durable string
	done    atomic.Bool
}

// newCatchUp reads MEMORY's last sequence; it must run before the
// projector starts.
func (a *App) newCatchUp(ctx context.Context, durable string) (*catchUp, error) {
	head, err := stream.Head(ctx, a.js)
	if err != nil {
		return nil, fmt.Errorf("readiness: %w", err)
	}
	return &catchUp{target: head, durable: durable}, nil
}

// Readiness is Ready, every worker loop still running (workers.go) and,
// for a retriever, the read model caught up with the stream as it was at
// start. GET /readyz answers with it.
func (a *App) Readiness(ctx context.Context) error {
	if err := a.Ready(ctx); err != nil {
		return err
	}
	if err := a.stopped.err(); err != nil {
		return err
	}
	if a.reads != nil {
		return a.reads.readiness()
	}
	c := a.catchUp
	if c == nil || c.done.Load() {
		return nil
	}
	last, err := a.store.LastSeq(ctx)
	if err != nil {
		return fmt.Errorf("read model: %w", err)
	}
	if last < c.target {
		// Events the projector dead-lettered leave no position behind;
		// the consumer's ack floor passes them.
		floor, err := stream.AckFloor(ctx, a.js, c.durable)
		if err != nil {
			return fmt.Errorf("projector consumer: %w", err)
		}
		if floor < c.target {
			return fmt.Errorf("projector catching up: %d of %d events applied", last, c.target)
		}
	}
	c.done.Store(true)
	return nil
}
