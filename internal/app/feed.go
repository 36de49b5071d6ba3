package app

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// feed hands the events this process's ingest has just stored straight to
// its own read model, so they are searchable as soon as JetStream has them.
//
// Why: under sync "always" the stream holds its store's lock through each
// fsync, so while events pour in a consumer reads about one message per
// fsync and the projector falls behind until the flood stops; the events
// themselves are already here, in the process that published them.
//
// It never decides anything the stream does not: an event is offered only
// once JetStream has acknowledged it, with the sequence it was stored at,
// and a run of them is applied only when it starts right after the read
// model's position and every event of it applies (sqlite.ApplyNext), all
// or nothing. Whatever it declines or drops (a gap, a failing event, a
// full buffer, a restart) the projector's consumer delivers in its turn,
// and Apply skips what the feed already applied. So the read model is the
// same as without it, event for event.
type feed struct {
	ctx      context.Context // the process's run context, for done
	store    *sqlite.Store
	maxBytes int
	log      *zap.Logger

	// gate is held while a run is applied, so that a rebuild never runs
	// beside one (reset).
	gate    sync.Mutex
	mu      sync.Mutex
	pending map[uint64]stream.Stored
	// applied is the read model's position as of the feed's last run:
	// every event up to it is in the read model.
	applied atomic.Uint64
	wake    chan struct{}
	// held stops runs from being applied while the read model does not
	// follow MEMORY (a stream it was not built from: origin.go).
	held atomic.Bool
}

// feedMax bounds the events held back waiting for a gap to close; past it
// offers are dropped and left to the consumer.
const feedMax = 1 << 16

// feedRun is the most events applied in one transaction.
const feedRun = 1024

func newFeed(ctx context.Context, store *sqlite.Store, maxBytes int, log *zap.Logger) *feed {
	return &feed{ctx: ctx, store: store, maxBytes: maxBytes, log: log,
		pending: map[uint64]stream.Stored{}, wake: make(chan struct{}, 1)}
}

// offer is the publisher's Stored hook. It never blocks on the read model.
func (f *feed) offer(stored []stream.Stored) {
	f.mu.Lock()
	for _, s := range stored {
		if len(f.pending) >= feedMax {
			break
		}
		f.pending[s.Seq] = s
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// reset runs rebuild with no run being applied, and forgets every event
// offered before it ends: a read model rebuilt from a recreated stream
// must not take events at the old stream's sequences.
func (f *feed) reset(rebuild func() error) error {
	f.gate.Lock()
	defer f.gate.Unlock()
	f.applied.Store(0)
	err := rebuild()
	f.mu.Lock()
	clear(f.pending)
	f.mu.Unlock()
	return err
}

// run applies offered events until ctx ends.
func (f *feed) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
		for ctx.Err() == nil && f.step(ctx) {
		}
	}
}

// step applies the run of offered events that follows the read model's
// position, if there is one, and reports whether it applied anything.
func (f *feed) step(ctx context.Context) bool {
	f.gate.Lock()
	defer f.gate.Unlock()
	if f.held.Load() {
		return false
	}
	last, err := f.store.Position(ctx)
	if err != nil {
		return false
	}
	f.mu.Lock()
	for seq := range f.pending {
		if seq <= last {
			delete(f.pending, seq)
		}
	}
	var run []stream.Stored
	for seq := last + 1; len(run) < feedRun; seq++ {
		s, ok := f.pending[seq]
		if !ok {
			break
		}
		delete(f.pending, seq)
		run = append(run, s)
	}
	f.mu.Unlock()
	if len(run) == 0 {
		return false
	}
	batch := make([]memory.Applied, 0, len(run))
	for _, s := range run {
		e, data := s.Event, s.Data
		if data == nil {
			// Not known decoded: decoded from the stored bytes as the
			// consumer would, so the two paths apply the very same event.
			var err error
			if e, data, err = stream.Decode(s.Msg.Subject, s.Msg.Header, s.Msg.Data, f.maxBytes); err != nil {
				break // the consumer dead-letters it
			}
		}
		// Otherwise this process validated the event and published it as
		// it is (stream.Stored): decoding it again would give the same.
		if e.Time().IsZero() {
			break // the consumer stamps its stored time
		}
		m := stream.Message{Event: e, Data: data, Subject: s.Msg.Subject, Seq: s.Seq}
		batch = append(batch, m.Applied())
	}
	if len(batch) == 0 {
		return false
	}
	ok, err := f.store.ApplyNext(ctx, batch)
	switch {
	case err != nil:
		// An event that does not apply, or the database away: the
		// consumer delivers these in their turn and decides their fate.
		f.log.Debug("feed: left to the consumer", zap.Int("events", len(batch)), zap.Error(err))
		return false
	case !ok:
		// The consumer moved the position meanwhile: offer them again,
		// and what it already applied is pruned at the next step.
		f.mu.Lock()
		for _, s := range run {
			f.pending[s.Seq] = s
		}
		f.mu.Unlock()
		return true
	}
	f.applied.Store(batch[len(batch)-1].Seq)
	return len(batch) == len(run)
}

// done is the projector consumer's Done: the events the feed has applied
// need not be decoded again. A message that arrives while its event is
// still waiting here is applied here first, with the run it belongs to,
// so that the two paths do not both decode and apply the same events.
func (f *feed) done(seq uint64) bool {
	if seq <= f.applied.Load() {
		return true
	}
	f.mu.Lock()
	_, offered := f.pending[seq]
	f.mu.Unlock()
	for offered && seq > f.applied.Load() && f.ctx.Err() == nil && f.step(f.ctx) {
	}
	return seq <= f.applied.Load()
}
