package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// A worker loop (a consumer, the batcher's timers, a schedule, the access
// log, the HTTP server) runs until the process stops. One that ends
// before — returning, with an error or without, or panicking — has
// stopped doing its work while the process looks alive: it is logged,
// and readiness turns red naming it (stoppedWorkers) until a restart,
// which is the cure. A panic is recovered there rather than held by the
// wait group until shutdown, which hid it.

// stoppedWorkers are the worker loops that ended while the process ran.
type stoppedWorkers struct {
	mu  sync.Mutex
	why map[string]error
}

func (s *stoppedWorkers) add(name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.why == nil {
		s.why = map[string]error{}
	}
	s.why[name] = err
}

// err says which workers stopped and why, nil when none did.
func (s *stoppedWorkers) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.why) == 0 {
		return nil
	}
	names := make([]string, 0, len(s.why))
	for name := range s.why {
		names = append(names, name)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("worker %s stopped: %v", name, s.why[name])
	}
	return errors.New(strings.Join(parts, "; "))
}

// goWorker runs a worker loop in the App's wait group (runWorker).
func (a *App) goWorker(ctx context.Context, name string, run func(ctx context.Context) error) {
	a.wg.Go(func() { a.runWorker(ctx, name, run) })
}

// runWorker runs a worker loop until it returns. A loop is meant to end
// only when ctx does or the App closes; if it ends otherwise, or panics,
// it is logged and reported by Readiness.
func (a *App) runWorker(ctx context.Context, name string, run func(ctx context.Context) error) {
	err := memory.Recovered(func() error { return run(ctx) })
	var p *memory.PanicError
	panicked := errors.As(err, &p)
	if !panicked && (ctx.Err() != nil || a.closing.Load()) {
		return
	}
	if err == nil {
		err = errors.New("it returned")
	}
	fields := []zap.Field{zap.String("worker", name), zap.Error(err)}
	if panicked {
		fields = append(fields, zap.String("stack", p.Stack))
	}
	a.Log.Error("worker stopped", fields...)
	if ctx.Err() == nil && !a.closing.Load() {
		a.stopped.add(name, err)
	}
}
