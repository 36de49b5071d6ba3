package app

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// A worker run apart that needs to read (the extractor's update check,
// restart recovery and sweep; the consolidator's episodes, scratchpad,
// scheduled jobs and cards) keeps a read model of its own, fed by its own
// projector, rather than asking a retriever over NATS. The reasons: the
// readers are the workers' inner loops (a consolidation job reads
// thousands of rows), which a request per read would make slow and
// fragile; a worker then depends on NATS alone, not on a retriever being
// up; and the read model is already the projector's deterministic output,
// so every copy holds the same data. The cost is disk: one SQLite file
// per such worker.

// projectorDurable names the read model's consumer. A retriever's (and
// the single binary's) is projector-<instance>; a worker apart that keeps
// a read model for itself adds its role, so that an extractor and a
// consolidator on one host with the same ENGRAM_INSTANCE do not take each
// other's consumer.
func (a *App) projectorDurable() string {
	name := "projector-"
	if a.Roles&RoleRetriever == 0 {
		switch {
		case a.Roles&RoleExtractor != 0 && a.Roles&RoleConsolidator == 0:
			name += "extractor-"
		case a.Roles&RoleConsolidator != 0 && a.Roles&RoleExtractor == 0:
			name += "consolidator-"
		default:
			name += "worker-"
		}
	}
	return name + stream.EncodeToken(a.Config.Instance)
}

// waitCaughtUp waits, up to limit, until the read model has passed what
// the stream held when it was called: a worker that just started reads
// what it missed only once its read model has it. It goes on, logged,
// when the read model has not.
func (a *App) waitCaughtUp(ctx context.Context, limit time.Duration, log *zap.Logger) {
	if err := a.passHead(ctx, limit); err != nil && ctx.Err() == nil {
		log.Warn("read model has not caught up with the stream; going on", zap.Error(err))
	}
}

// passHead waits, up to limit, until the read model has passed what the
// stream holds now (an event it dead-lettered counts as passed).
func (a *App) passHead(ctx context.Context, limit time.Duration) error {
	head, err := a.StreamHead(ctx)
	if err != nil {
		return fmt.Errorf("stream head: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := a.waitPassed(ctx, head); err != nil {
		return fmt.Errorf("the read model to pass seq %d: %w", head, err)
	}
	return nil
}

// waitPassed waits until the read model's projector has passed stream
// sequence seq: applied it, or acknowledged it. An event the projector
// could not apply (dead-lettered) never moves the read model's position,
// so with one at the head of the stream only the consumer's
// acknowledgement floor says it was passed.
func (a *App) waitPassed(ctx context.Context, seq uint64) error {
	for tick := 1; ; tick++ {
		got, err := a.store.LastSeq(ctx)
		if err != nil || got >= seq {
			return err
		}
		if tick%20 == 0 { // every 100 ms
			if floor, err := stream.AckFloor(ctx, a.js, a.projectorDurable()); err == nil && floor >= seq {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
