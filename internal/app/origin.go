package app

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/projector"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
)

// originVerdict is whether the read model may follow the MEMORY stream
// there is now.
type originVerdict int

const (
	// originSame: the read model was built from this stream.
	originSame originVerdict = iota
	// originAdopt: a new read model, or one from before origins were
	// recorded whose position fits in the stream: it records this one.
	originAdopt
	// originAccepted: another stream than the read model's, which an
	// operator accepted (engram streams accept): the read model is
	// emptied and applies it from its start.
	originAccepted
	// originForeign: another stream, not accepted. A stream deleted and
	// recreated starts its sequences over, so a read model of the old one
	// would resume past the new events and skip them without a word; and
	// emptied, it would throw away the only copy of what the old stream
	// held. It is kept as it is, and applies nothing, until an operator
	// decides.
	originForeign
)

// originOf judges the read model store against MEMORY as info describes it.
func (a *App) originOf(ctx context.Context, store *sqlite.Store, info *stream.StreamInfo) (originVerdict, string, error) {
	origin := stream.OriginOf(info)
	recorded, err := store.Origin(ctx)
	if err != nil {
		return 0, "", err
	}
	if recorded == origin {
		return originSame, recorded, nil
	}
	if recorded == "" {
		applied, err := store.LastSeq(ctx)
		if err != nil {
			return 0, "", err
		}
		if applied <= info.State.LastSeq {
			return originAdopt, recorded, nil
		}
	}
	if stream.AcceptedOf(info.Config).Origin == origin {
		return originAccepted, recorded, nil
	}
	return originForeign, recorded, nil
}

// checkOrigin decides whether the read model follows the MEMORY stream
// there is now (follow), recording its origin, and emptying the read
// model first when an operator accepted a new stream. A foreign stream is
// reported as drift; the read model is left as it is.
func (a *App) checkOrigin(ctx context.Context, store *sqlite.Store) (follow bool, err error) {
	info, err := stream.MemoryInfo(ctx, a.js)
	if err != nil {
		return false, err
	}
	v, recorded, err := a.originOf(ctx, store, info)
	if err != nil {
		return false, err
	}
	origin := stream.OriginOf(info)
	log := a.Log.Named("projector")
	switch v {
	case originSame:
	case originAdopt:
		if err := store.SetOrigin(ctx, origin); err != nil {
			return false, err
		}
	case originAccepted:
		log.Warn("the MEMORY stream is not the one the read model was built from, and an operator accepted it "+
			"(engram streams accept): emptying the read model and applying the stream from its start",
			zap.String(fieldWas, recorded), zap.String(fieldNow, origin))
		if err := store.Reset(ctx); err != nil {
			return false, err
		}
		if err := store.SetOrigin(ctx, origin); err != nil {
			return false, err
		}
	case originForeign:
		a.drift.set(log, driftRecreated, recreatedReason(recorded, origin))
		return false, nil
	}
	a.drift.clear(log, driftRecreated)
	return true, nil
}

func recreatedReason(recorded, origin string) string {
	was := recorded
	if was == "" {
		was = "one whose sequences went further"
	}
	return fmt.Sprintf("%s is not the stream the read model was built from (this one was created %s; the read model's, %s): "+
		"it was deleted and made again, and what the old one held may be gone. The read model is kept as it is and "+
		"applies nothing of the new stream until an operator decides: `engram streams accept` makes every read model "+
		"start over from the stream as it is now, throwing away what only they held; or restore the old stream from a backup",
		stream.MemoryStream, origin, was)
}

// runProjector applies the stream to the read model until ctx ends. cons
// is nil when the read model may not follow MEMORY yet (a foreign stream):
// it waits. When the stream turns out to have been replaced, it stops,
// and goes on only once the read model may follow the new one.
func (a *App) runProjector(ctx context.Context, pr *projection, cons *stream.Consumer, p *projector.Projector, log *zap.Logger) error {
	h := pr.track(a.inOrderOf(pr, a.project(p), log))
	for {
		if cons == nil {
			if cons = a.awaitOrigin(ctx, pr, log); cons == nil {
				return nil
			}
		}
		pctx, stop := context.WithCancel(ctx)
		var watch conc.WaitGroup
		moved := false
		watch.Go(func() {
			if moved = a.watchOrigin(pctx, pr.store, log); moved {
				if pr.feed != nil {
					pr.feed.held.Store(true)
				}
				stop()
			}
		})
		err := cons.Run(pctx, h)
		stop()
		watch.Wait()
		if !moved || ctx.Err() != nil {
			return err
		}
		cons = nil
	}
}

// awaitOrigin waits until the read model may follow MEMORY (checkOrigin),
// then starts its consumer; nil when ctx ends first.
func (a *App) awaitOrigin(ctx context.Context, pr *projection, log *zap.Logger) *stream.Consumer {
	for {
		var follow bool
		check := func() (err error) {
			follow, err = a.checkOrigin(ctx, pr.store)
			return err
		}
		var err error
		if pr.feed != nil {
			err = pr.feed.reset(check)
		} else {
			err = check()
		}
		if err == nil && follow && pr.passed != nil {
			// Emptied for another stream, a copy starts that one anew.
			var last uint64
			if last, err = pr.store.LastSeq(ctx); err == nil {
				pr.passed.Store(last)
			}
		}
		if err == nil && follow {
			var cons *stream.Consumer
			if cons, err = a.projectorConsumer(ctx, pr, log); err == nil {
				if pr.feed != nil {
					pr.feed.held.Store(false)
				}
				return cons
			}
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("restart projection", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(a.originEvery):
		}
	}
}

// watchOrigin polls MEMORY until ctx ends (false) or the read model may
// not simply go on applying it (true): the stream is another. A missing
// stream is waited for: it is being recreated, or NATS is away.
func (a *App) watchOrigin(ctx context.Context, store *sqlite.Store, log *zap.Logger) bool {
	t := time.NewTicker(a.originEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		info, err := stream.MemoryInfo(cctx, a.js)
		if err != nil {
			cancel()
			log.Debug("check stream origin", zap.Error(err))
			continue
		}
		v, recorded, err := a.originOf(cctx, store, info)
		cancel()
		if err == nil && v != originSame {
			log.Warn("the MEMORY stream was replaced", zap.String(fieldWas, recorded), zap.String(fieldNow, stream.OriginOf(info)))
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
func recordOrigin(ctx context.Context, js stream.JetStream, livePath string, built *sqlite.Store, hadLive bool) error {
	if hadLive {
		live, err := sqlite.Open(ctx, livePath)
		if err != nil {
			return fmt.Errorf("live read model: %w", err)
		}
		recorded, err := live.Origin(ctx)
		quiet.Close(live) // only read
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
