package app

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/projector"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
)

// checkOrigin makes sure the read model was built from the MEMORY stream
// there is now. A stream deleted and recreated starts its sequences over,
// so a read model of the old one would resume past the new events and
// skip them without a word; it is emptied instead, and the projector
// applies the new stream from its start. A read model from before origins
// were recorded is kept when its position fits in the stream.
func (a *App) checkOrigin(ctx context.Context, store *sqlite.Store) error {
	origin, streamLast, err := stream.MemoryOrigin(ctx, a.js)
	if err != nil {
		return err
	}
	recorded, err := store.Origin(ctx)
	if err != nil {
		return err
	}
	if recorded == origin {
		return nil
	}
	applied, err := store.LastSeq(ctx)
	if err != nil {
		return err
	}
	if recorded != "" || applied > streamLast {
		a.Log.Warn("the MEMORY stream is not the one the read model was built from (it was deleted and recreated): rebuilding the read model from the stream",
			zap.String("read_model_stream", recorded), zap.String("stream", origin),
			zap.Uint64("read_model_seq", applied), zap.Uint64("stream_last_seq", streamLast))
		if err := store.Reset(ctx); err != nil {
			return err
		}
	}
	return store.SetOrigin(ctx, origin)
}

// runProjector applies the stream to the read model until ctx ends. When
// the stream turns out to have been recreated, it stops, empties the read
// model and starts again from the new stream's start.
func (a *App) runProjector(ctx context.Context, pr *projection, cons *stream.Consumer, p *projector.Projector, log *zap.Logger) error {
	h := pr.track(a.inOrderOf(pr, project(p), log))
	for {
		pctx, stop := context.WithCancel(ctx)
		var watch conc.WaitGroup
		recreated := false
		watch.Go(func() {
			if recreated = a.watchOrigin(pctx, pr.store, log); recreated {
				stop()
			}
		})
		err := cons.Run(pctx, h)
		stop()
		watch.Wait()
		if !recreated || ctx.Err() != nil {
			return err
		}
		for {
			if cons, err = a.restartProjection(ctx, pr, log); err == nil {
				break
			}
			log.Warn("restart projection", zap.Error(err))
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
		}
	}
}

func (a *App) restartProjection(ctx context.Context, pr *projection, log *zap.Logger) (*stream.Consumer, error) {
	check := func() error { return a.checkOrigin(ctx, pr.store) }
	if pr.feed != nil {
		check = func() error { return pr.feed.reset(func() error { return a.checkOrigin(ctx, pr.store) }) }
	}
	if err := check(); err != nil {
		return nil, err
	}
	if pr.passed != nil {
		last, err := pr.store.LastSeq(ctx)
		if err != nil {
			return nil, err
		}
		pr.passed.Store(last)
	}
	return a.projectorConsumer(ctx, pr, log)
}

// watchOrigin polls MEMORY's origin until ctx ends (false) or the stream
// is another than the read model's (true). A missing stream is waited
// for: it is being recreated, or NATS is away.
func (a *App) watchOrigin(ctx context.Context, store *sqlite.Store, log *zap.Logger) bool {
	t := time.NewTicker(a.originEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		recorded, err := store.Origin(ctx)
		if err != nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		origin, _, err := stream.MemoryOrigin(cctx, a.js)
		cancel()
		if err != nil {
			log.Debug("check stream origin", zap.Error(err))
			continue
		}
		if origin != recorded {
			log.Warn("the MEMORY stream was recreated", zap.String(fieldWas, recorded), zap.String(fieldNow, origin))
			return true
		}
	}
}

const (
	fieldWas = "was"
	fieldNow = "now"
)

// recordOrigin writes MEMORY's origin into a rebuilt read model, as the
// projector does into the live one, so the two checksum alike; and a
// live one built from another stream shows as different. A live read
// model from before origins were recorded has none, and neither then
// does the rebuilt one.
func recordOrigin(ctx context.Context, js jetstream.JetStream, cfg config.Config, built *sqlite.Store, hadLive bool) error {
	if hadLive {
		live, err := sqlite.Open(ctx, cfg.ReadModelPath())
		if err != nil {
			return fmt.Errorf("live read model: %w", err)
		}
		recorded, err := live.Origin(ctx)
		live.Close()
		if err != nil || recorded == "" {
			return err
		}
	}
	origin, _, err := stream.MemoryOrigin(ctx, js)
	if err != nil {
		return err
	}
	return built.SetOrigin(ctx, origin)
}
