package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// OpenOperator gives an operator command (rebuild, dlq, export, import)
// JetStream. With no cfg.NATS.URL it starts the embedded server on the
// data dir: the data dir's lock is held until closeFn, and the server
// listens in-process only, so nothing else can reach the store meanwhile.
// If engram is running on the data dir (the lock is taken), it connects to
// that engram's NATS listener (cfg.NATS.Listen) instead. With a URL it
// connects to that NATS, where engram may keep running. closeFn releases
// everything, in reverse order.
func OpenOperator(ctx context.Context, cfg config.Config, log *zap.Logger) (js stream.JetStream, closeFn func(), err error) {
	return openOperator(ctx, cfg, log, true, false)
}

// OpenOperatorCreate is OpenOperator for a command that may fill a new
// data dir (import): an embedded store is created when there is none.
func OpenOperatorCreate(ctx context.Context, cfg config.Config, log *zap.Logger) (js stream.JetStream, closeFn func(), err error) {
	return openOperator(ctx, cfg, log, false, true)
}

// openOperator is OpenOperator; without mustExist an embedded store is
// created when there is none yet (a migration's target); with create, the
// streams and buckets that are missing are made (stream.CreateMissing).
func openOperator(ctx context.Context, cfg config.Config, log *zap.Logger, mustExist, create bool) (js stream.JetStream, closeFn func(), err error) {
	unlock := func() {}
	if cfg.NATS.URL == "" {
		if unlock, err = LockDataDir(cfg.DataDir); err != nil {
			if cfg.NATS.Listen == "" {
				return nil, nil, err
			}
			// engram runs on this data dir: talk to it through its NATS
			// listener instead of opening the store beside it.
			lockErr := err
			cfg.NATS.URL = "nats://" + cfg.NATS.Listen
			if js, closeFn, err = openOperator(ctx, cfg, log, mustExist, create); err != nil {
				return nil, nil, fmt.Errorf("%w; and nothing answers on its NATS listener %s: %w", lockErr, cfg.NATS.URL, err)
			}
			return js, closeFn, nil
		}
		// An operator command must not start an empty store where the
		// data dir was mistyped.
		if _, err := os.Stat(cfg.JetStreamDir()); err != nil && mustExist {
			unlock()
			return nil, nil, fmt.Errorf("no JetStream store at %s (is ENGRAM_DATA_DIR right?): %w", cfg.JetStreamDir(), err)
		}
	}
	cfg.NATS.Listen = ""
	a := New(cfg, 0, log)
	a.busRole = stream.RoleOperator
	a.createStreams = create
	timeout := cfg.ShutdownTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	closeFn = func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		if err := a.Close(cctx); err != nil {
			log.Warn("close", zap.Error(err))
		}
		unlock()
	}
	if err := a.openNATS(ctx); err != nil {
		closeFn()
		return nil, nil, err
	}
	return a.op.js, closeFn, nil
}
