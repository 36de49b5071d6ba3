package app

import (
	"context"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// minFreeBytes is the free space JetStream is started again with.
const minFreeBytes = 64 << 20

// healJetStream starts the embedded JetStream again after nats-server
// turned it off (out of disk space, say), once the store's disk has room:
// without it, ingest answered 503 until a restart. /healthz answers 503
// while it is off (Ready).
func (a *App) healJetStream(ctx context.Context) {
	every := a.healEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	log := a.Log.Named("jetstream")
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		a.healOnce(log)
	}
}

// healOnce starts JetStream again if it is off and the disk has room.
func (a *App) healOnce(log *zap.Logger) {
	if a.embedded.JetStreamEnabled() {
		return
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(a.Config.JetStreamDir(), &st); err != nil {
		log.Warn("jetstream is off; cannot read the store's free space", zap.Error(err))
		return
	}
	if free := st.Bavail * uint64(st.Bsize); free < minFreeBytes {
		log.Warn("jetstream is off; waiting for disk space", zap.Uint64("free_bytes", free))
		return
	}
	if err := a.embedded.ReenableJetStream(); err != nil {
		log.Warn("jetstream is off; starting it again failed", zap.Error(err))
		return
	}
	log.Info("jetstream started again")
}
