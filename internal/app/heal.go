package app

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// The embedded JetStream can stop storing while engram runs, and does not
// start again by itself: a full disk leaves a write error on the stream
// that met it (nats-server then answers none of the publishes to it, so
// they time out, however much room there is since), and a permission
// error turns JetStream off. healJetStream watches for it. While events
// cannot be stored, /healthz and /readyz answer 503 with the reason
// (Ready), and ingest answers 503 at once instead of after a publish's
// timeout (storeDown); once the disk has room, JetStream is loaded again
// from its files, without a restart of engram.

// maxFreeNeeded is the free space JetStream is started again with, on a
// disk larger than four times it; on a smaller one, a quarter of the disk.
const maxFreeNeeded = 64 << 20

// healEveryDefault is how often the store's health is looked at.
const healEveryDefault = time.Second

// healJetStream looks at the embedded JetStream every healEvery until ctx
// ends, and starts it again when it cannot store and the disk has room.
func (a *App) healJetStream(ctx context.Context) {
	every := a.healEvery
	if every <= 0 {
		every = healEveryDefault
	}
	h := &healer{a: a, log: a.Log.Named("jetstream")}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		h.once()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// healer is the state of healJetStream between two looks: what it last
// logged, so that an outage is logged when it starts and ends, not every
// second.
type healer struct {
	a     *App
	log   *zap.Logger
	since time.Time // when JetStream was first seen unable to store
	said  string    // the last warning logged in this outage
	// A restart that did not help is tried again after backoff, doubled
	// each time up to a minute: a store that fails for another reason
	// than room is not restarted every second.
	backoff time.Duration
	next    time.Time
}

// warn logs a warning of the outage once, not at every look.
func (h *healer) warn(msg string, fields ...zap.Field) {
	if h.said != msg {
		h.said = msg
		h.log.Warn(msg, fields...)
	}
}

// once looks at JetStream once and starts it again if it cannot store and
// the disk has room.
func (h *healer) once() {
	a := h.a
	err := a.embedded.StoreHealth()
	if err == nil {
		if a.storeDown.Swap(nil) != nil {
			h.log.Info("jetstream stores again", zap.Duration("after", time.Since(h.since)))
		}
		h.since, h.said, h.backoff, h.next = time.Time{}, "", 0, time.Time{}
		return
	}
	reason := a.cannotStore(err)
	if a.storeDown.Swap(&reason) == nil {
		h.since = time.Now()
		h.log.Error("jetstream cannot store events", zap.Error(err))
	}
	free, total, serr := diskSpace(a.embedded.StoreDir())
	if serr != nil {
		h.warn("jetstream cannot store; the store's free space cannot be read", zap.Error(serr))
		return
	}
	if need := min(maxFreeNeeded, total/4); free < need {
		h.warn("jetstream cannot store; waiting for disk space", zap.Uint64("free_bytes", free), zap.Uint64("needed_bytes", need))
		return
	}
	start := time.Now()
	if start.Before(h.next) {
		return
	}
	err = a.embedded.RestartJetStream()
	if err == nil {
		err = a.embedded.StoreHealth()
	}
	if err != nil {
		h.backoff = min(max(2*h.backoff, time.Second), time.Minute)
		h.next = time.Now().Add(h.backoff)
		h.warn("jetstream cannot store; starting it again did not help", zap.Error(err), zap.Duration("next_try_in", h.backoff))
		return
	}
	a.storeDown.Store(nil)
	h.log.Info("jetstream started again: it stores again", zap.Duration("restart", time.Since(start)),
		zap.Duration("after", time.Since(h.since)))
	h.since, h.said, h.backoff, h.next = time.Time{}, "", 0, time.Time{}
}

// cannotStore is the error that says events cannot be stored, because of
// cause, and how much room the store's disk has.
func (a *App) cannotStore(cause error) error {
	room := ""
	if free, _, err := diskSpace(a.embedded.StoreDir()); err == nil {
		room = fmt.Sprintf("; %.1f MiB free on the disk of %s", float64(free)/(1<<20), a.Config.DataDir)
	}
	return memory.Errorf(memory.EUNAVAILABLE, "events cannot be stored (%v)%s: engram stores again by itself within seconds once there is room",
		cause, room)
}

// storeDownErr is why events cannot be stored as healJetStream last saw
// it, nil when they can (or when NATS is not embedded).
func (a *App) storeDownErr() error {
	if p := a.storeDown.Load(); p != nil {
		return *p
	}
	return nil
}

// diskSpace is the free space (for an unprivileged writer) and the size
// of the file system that holds dir.
func diskSpace(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}
