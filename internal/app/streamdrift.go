package app

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// Drift is the MEMORY stream changed under engram by someone else: no
// worker may change it (their bus users are refused), so it is the
// operator, by hand or by mistake. engram says so (an error logged once,
// /healthz and /readyz 503 with the reason, engram_stream_drift), keeps
// the read model's copy, and never "repairs" anything by itself: an
// operator decides (docs/nats.md, "When the stream changed under engram").
//
// Kinds, the values of engram_stream_drift's kind label:
const (
	// driftConfig: MEMORY or DEADLETTER is configured to drop or refuse
	// events (a limit, a narrower subject…). Events are refused at ingest
	// meanwhile: acknowledged, they would be lost.
	driftConfig = "config"
	// driftTruncated: the read model holds events MEMORY no longer has,
	// below its first sequence, that engram did not erase.
	driftTruncated = "truncated"
	// driftRecreated: MEMORY is not the stream the read model was built from.
	driftRecreated = "recreated"
	// driftMissing: there is no MEMORY stream.
	driftMissing = "missing"
)

// driftKinds are every kind, as /metrics shows them.
var driftKinds = []string{driftConfig, driftMissing, driftRecreated, driftTruncated}

// streamDrift is what is wrong with the streams now, by kind.
type streamDrift struct {
	mu  sync.Mutex
	now map[string]string
	// memoryLoses is set while MEMORY itself drops or refuses events.
	memoryLoses bool
	// settings is the last difference of settings warned of.
	settings string
	// judged is the last first sequence of MEMORY found to leave no
	// event of the read model's behind.
	judged uint64
}

// judgedFirst is the last first sequence of MEMORY judged clean.
func (d *streamDrift) judgedFirst() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.judged
}

// judgedClean records that MEMORY's first sequence first leaves no event
// of the read model's behind, and ends a report of truncation.
func (d *streamDrift) judgedClean(log *zap.Logger, first uint64) {
	d.mu.Lock()
	d.judged = first
	d.mu.Unlock()
	d.clear(log, driftTruncated)
}

// set reports drift of kind, logging it once (again when the reason
// changes).
func (d *streamDrift) set(log *zap.Logger, kind, reason string) {
	d.mu.Lock()
	if d.now == nil {
		d.now = map[string]string{}
	}
	old := d.now[kind]
	d.now[kind] = reason
	d.mu.Unlock()
	if old != reason {
		log.Error("the stream changed under engram", zap.String("drift", kind), zap.String("reason", reason))
	}
}

// clear ends drift of kind.
func (d *streamDrift) clear(log *zap.Logger, kind string) {
	d.mu.Lock()
	_, was := d.now[kind]
	delete(d.now, kind)
	if kind == driftConfig {
		d.memoryLoses = false
	}
	d.mu.Unlock()
	if was {
		log.Info("stream drift resolved", zap.String("drift", kind))
	}
}

// err is every drift reported now, nil when there is none.
func (d *streamDrift) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.now) == 0 {
		return nil
	}
	kinds := make([]string, 0, len(d.now))
	for k := range d.now {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	reasons := make([]string, len(kinds))
	for i, k := range kinds {
		reasons[i] = k + ": " + d.now[k]
	}
	return errors.New("stream drift: " + strings.Join(reasons, "; "))
}

// refusesWrites is why ingest must not store events now: MEMORY drops or
// refuses them.
func (d *streamDrift) refusesWrites() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.memoryLoses {
		return nil
	}
	return memory.Errorf(memory.EUNAVAILABLE, "events are not accepted while %s", d.now[driftConfig])
}

// writesDownErr is why ingest must not store events now: the store is
// down (storeDownErr), or MEMORY would drop them (refusesWrites).
func (a *App) writesDownErr() error {
	if err := a.storeDownErr(); err != nil {
		return err
	}
	return a.drift.refusesWrites()
}

// kinds says, for each kind, whether it is reported now.
func (d *streamDrift) kinds() map[string]bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]bool, len(driftKinds))
	for _, k := range driftKinds {
		_, out[k] = d.now[k]
	}
	return out
}

// firstWatch follows MEMORY's first sequence from one check to the next.
type firstWatch struct {
	first uint64    // the first sequence being judged
	since time.Time // when it was first seen
	// mark is the stream's last sequence once the grace had passed: the
	// first sequence is judged once the read model has applied it.
	mark  uint64
	clean bool // judged: the read model holds no event below it
	// judgedAt is the read model's position and the accepted first
	// sequence when it was last judged: only a change to either can
	// change the verdict, so the read model is not counted again before.
	judgedAt, acceptedAt uint64
}

// defaultTruncationGrace is how long a first sequence that moved waits
// to be judged: engram's own erasures (forget, retention) delete events
// before every read model has applied the receipt that drops them
// (retention's comes after the deletes), and a user with thousands of
// turns takes a while.
const defaultTruncationGrace = 2 * time.Minute

// watchStreams looks at the streams every originEvery until ctx ends.
func (a *App) watchStreams(ctx context.Context, w *firstWatch) {
	log := a.Log.Named("streams")
	t := time.NewTicker(a.originEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		a.checkStreams(cctx, w, log)
		cancel()
	}
}

// checkStreams is one look: MEMORY is there, MEMORY and DEADLETTER keep
// what engram gives them, and, with a read model, MEMORY is its stream
// and still holds every event it applied (but those engram erased).
func (a *App) checkStreams(ctx context.Context, w *firstWatch, log *zap.Logger) {
	info, err := stream.MemoryInfo(ctx, a.js)
	if errors.Is(err, stream.ErrStreamNotFound) {
		a.drift.set(log, driftMissing, fmt.Sprintf("there is no %s stream: events cannot be stored; if it was deleted, "+
			"restore it from a backup, or make an empty one with `engram streams apply` (the read model then keeps "+
			"what it has until `engram streams accept`)", stream.MemoryStream))
		return
	}
	if err != nil {
		log.Debug("read the stream", zap.Error(err))
		return
	}
	a.drift.clear(log, driftMissing)
	a.checkConfig(ctx, info.Config, log)
	if a.store == nil {
		return
	}
	v, recorded, err := a.originOf(ctx, a.store, info)
	if err != nil {
		log.Debug("read the read model's origin", zap.Error(err))
		return
	}
	switch v {
	case originForeign:
		a.drift.set(log, driftRecreated, recreatedReason(recorded, stream.OriginOf(info)))
		return
	case originSame:
		a.drift.clear(log, driftRecreated)
		a.checkTruncated(ctx, info, w, log)
	}
	// Adopted or accepted: the projector takes it up (origin.go).
}

// checkConfig compares the streams' configuration with engram's: what
// drops or refuses events is drift; settings this process's config
// would give otherwise (replicas, the duplicate window) are warned of.
func (a *App) checkConfig(ctx context.Context, memCfg stream.StreamConfig, log *zap.Logger) {
	want, _ := stream.StreamConfigOf(stream.MemoryStream, a.streamsConfig())
	diffs := stream.Differences(memCfg, want)
	memoryLoses := false
	for _, d := range diffs {
		memoryLoses = memoryLoses || d.Loses
	}
	if dl, err := stream.DeadLetterDifferences(ctx, a.js, a.streamsConfig()); err == nil {
		diffs = append(diffs, dl...)
	}
	var loses, settings []string
	for _, d := range diffs {
		if d.Loses {
			loses = append(loses, d.String())
		} else {
			settings = append(settings, d.String())
		}
	}
	if len(loses) > 0 {
		a.drift.set(log, driftConfig, strings.Join(loses, ", ")+": events are dropped or refused; put engram's "+
			"configuration back with `engram streams apply` (as the operator)")
	} else {
		a.drift.clear(log, driftConfig)
	}
	a.drift.mu.Lock()
	a.drift.memoryLoses = memoryLoses
	warn := strings.Join(settings, ", ")
	if warn == a.drift.settings {
		warn = ""
	} else {
		a.drift.settings = warn
	}
	a.drift.mu.Unlock()
	if warn != "" {
		log.Warn("the streams' settings differ from this process's config; `engram streams apply` with the config "+
			"sets them", zap.String("differences", warn))
	}
}

// checkTruncated reports the events the read model applied that MEMORY
// no longer has, below its first sequence, unless an operator accepted
// their loss (engram streams accept). engram's own erasures drop the
// read model's rows too, so rows left below the first sequence, once the
// grace has passed and the read model has caught up, were taken by
// someone else: a purge, a limit.
func (a *App) checkTruncated(ctx context.Context, info *stream.StreamInfo, w *firstWatch, log *zap.Logger) {
	accepted := stream.AcceptedOf(info.Config).FirstSeq
	first := info.State.FirstSeq
	if first != w.first {
		*w = firstWatch{first: first, since: time.Now()}
	}
	if first <= max(accepted, 1) {
		w.clean = true
		a.drift.judgedClean(log, first)
		return
	}
	if w.clean || time.Since(w.since) < a.truncationGrace {
		return
	}
	if w.mark == 0 {
		w.mark = info.State.LastSeq
	}
	last, err := a.store.LastSeq(ctx)
	if err != nil || last < w.mark || w.judgedAt == last && w.acceptedAt == accepted {
		return
	}
	w.judgedAt, w.acceptedAt = last, accepted
	n, lowest, err := a.store.AppliedBetween(ctx, accepted, first)
	if err != nil {
		log.Warn("count the read model's events below the stream's first sequence", zap.Error(err))
		return
	}
	if n == 0 {
		w.clean = true
		a.drift.judgedClean(log, first)
		return
	}
	a.drift.set(log, driftTruncated, fmt.Sprintf("%s no longer holds %d events the read model applied (from sequence %d; "+
		"its first is now %d): they were purged or aged out by a limit, not erased by engram. The read model keeps "+
		"them and serves them; `engram streams accept` accepts their loss (a rebuild from the stream would not have "+
		"them), or restore the stream from a backup", stream.MemoryStream, n, lowest, first))
}
