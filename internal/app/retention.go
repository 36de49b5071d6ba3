package app

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extraction"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// Retention ages raw turns out (config retention.raw_turns). Each run:
//
//  1. the cutoff is the first MEMORY sequence the stream stored within the
//     age (stream.SeqStoredAt): the stream's clock, which every read model
//     and a rebuild see alike, not an event's time, which a client sets;
//  2. per user, the turns the read model holds below it go, unless one of
//     them is not extracted yet: then that turn and every later one of the
//     user stay, and the extraction of the waiting turns is requested, so
//     a session idle past the age is extracted before its turns go;
//  3. what engram wrote word for word from them (an extractive episode,
//     the scratchpad, the days' logs) is published again without their
//     words and the versions it replaces are erased (retentionscrub.go);
//  4. their events leave the stream (stream.ExpireTurns), then a
//     turns.expired receipt with the same bound is published, which makes
//     every read model drop the same turns. A rebuild replays the receipt
//     over a stream that no longer has the events, and agrees.
//
// A crash between 4's two steps leaves the read model holding turns the
// stream dropped; the next run plans them again and publishes the receipt.

// retentionSource is the CloudEvents source of the receipts and of the
// extraction requests retention makes.
const retentionSource = "engram/retention"

// retentionEvery is how often retention runs for an age: a thirtieth of
// it (a day for 30 days), within [100 ms, 24 h].
func retentionEvery(age time.Duration) time.Duration {
	return min(max(age/30, 100*time.Millisecond), 24*time.Hour)
}

// RetentionRun is what one run of retention did.
type RetentionRun struct {
	Cutoff time.Time `json:"stored_before"`
	Users  int       `json:"users"`
	Turns  int       `json:"turns_expired"`
	// Requests are the extraction requests that aged out with the turns
	// they carried; Events counts both kinds of event, DeadLetters the
	// dead letters made of them.
	Requests    int `json:"requests_expired"`
	Events      int `json:"events_expired"`
	DeadLetters int `json:"dead_letters_expired"`
	Held        int `json:"turns_held"`
	Asked       int `json:"extractions_requested"`
}

// retainer runs retention for the users of partition part of parts;
// requested remembers when it last asked for each extraction, so a held
// session is asked for once an hour, not at every run.
type retainer struct {
	a           *App
	log         *zap.Logger
	requested   map[string]time.Time
	part, parts int
}

// mine reports whether a user is the retainer's.
func (r *retainer) mine(sc memory.Scope) bool {
	return r.parts <= 1 || stream.PartitionOf(sc.Namespace, sc.User, r.parts) == r.part
}

// openRetention runs retention, each user's in one consolidator: the
// instance that holds the user's partition of the "retention" group
// (partitions.go), so consolidators run apart share the work and never
// do it twice.
func (a *App) openRetention(ctx, runCtx context.Context) error {
	age := a.Config.Retention.RawTurns
	log := a.Log.Named("retention")
	log.Info("raw turns age out", zap.Duration("after", age), zap.Duration("checked_every", retentionEvery(age)))
	if a.op == nil {
		// Aged-out turns are erased from MEMORY: deleting messages is the
		// operator's alone, and a retention that cannot erase must not
		// look as if it ran.
		return fmt.Errorf("retention.raw_turns is %s, but expiring raw turns deletes messages from %s, which only the "+
			"operator may: give this consolidator the operator's seed (nats.operator_nkey, ENGRAM_NATS_OPERATOR_NKEY), "+
			"or run retention in engram serve", age, stream.MemoryStream)
	}
	return a.runPartitions(ctx, runCtx, stream.RoleConsolidator, stream.RetentionGroup, log, func(pctx context.Context, p, n int) error {
		r := &retainer{a: a, log: log.With(zap.Int("partition", p)), requested: map[string]time.Time{}, part: p, parts: n}
		a.waitCaughtUp(pctx, 2*time.Minute, r.log)
		r.loop(pctx, retentionEvery(age))
		return nil
	})
}

// loop runs retention every interval until ctx ends.
func (r *retainer) loop(ctx context.Context, every time.Duration) {
	for {
		run, err := r.run(ctx, time.Now())
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			r.log.Error("retention", zap.Error(err))
		case run.Turns > 0 || run.Requests > 0 || run.Asked > 0:
			r.log.Info("raw turns expired", zap.Int("users", run.Users), zap.Int("turns", run.Turns),
				zap.Int("requests", run.Requests), zap.Int("events", run.Events), zap.Int("dead_letters", run.DeadLetters),
				zap.Int("held_unextracted", run.Held), zap.Int("extractions_requested", run.Asked))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// run is one pass of retention at now.
func (r *retainer) run(ctx context.Context, now time.Time) (RetentionRun, error) {
	a := r.a
	run := RetentionRun{Cutoff: now.Add(-a.Config.Retention.RawTurns).UTC()}
	cutoff, err := stream.SeqStoredAt(ctx, a.bus(stream.RoleConsolidator).js, run.Cutoff)
	if err != nil {
		return run, err
	}
	// The plan and the scrub read a read model that has applied what is
	// stored now, the last run's replacements and receipts among them: one
	// that read the versions the last run replaced would publish and erase
	// them again, and its receipt would name what the read model never
	// applied.
	// A minute at most; the next run tries again.
	if err := r.a.passHead(ctx, time.Minute); err != nil {
		return run, fmt.Errorf("retention: %w", err)
	}
	// Only what the read model has applied is planned: a turn it has not
	// seen could be one waiting for extraction.
	pos, err := a.store.LastSeq(ctx)
	if err != nil {
		return run, fmt.Errorf("retention: %w", err)
	}
	cutoff = min(cutoff, pos+1)
	plan, err := a.store.PlanRetention(ctx, cutoff, now.Add(-extraction.RequestPatience))
	if err != nil {
		return run, err
	}
	var held []memory.Turn
	for _, t := range plan.Held {
		if r.mine(t.Scope) {
			held = append(held, t)
		}
	}
	run.Held = len(held)
	if err := r.requestHeld(ctx, held, now, &run); err != nil {
		return run, err
	}
	emit := a.emitter(stream.RoleConsolidator, retentionSource)
	for _, x := range plan.Expire {
		if !r.mine(x.Scope) {
			continue
		}
		// What engram wrote word for word from the turns goes with them.
		replaced, err := r.scrub(ctx, x, now.UTC())
		if err != nil {
			return run, err
		}
		gone, err := stream.ExpireTurns(ctx, a.op.js, x.Scope.Namespace, x.Scope.User, x.Before)
		run.Events += gone.Events
		run.DeadLetters += gone.DeadLetters
		if err != nil {
			return run, err
		}
		id := "expire-" + strconv.FormatUint(x.Before, 10)
		if err := emit(ctx, memory.Outgoing{Type: events.TypeTurnsExpired, ID: id, Scope: x.Scope, Time: now.UTC(),
			Data: &events.TurnsExpired{BeforeSeq: x.Before, StoredBefore: run.Cutoff, Replaced: replaced}}); err != nil {
			return run, fmt.Errorf("retention: publish the receipt: %w", err)
		}
		run.Users++
		run.Turns += x.Turns
		run.Requests += x.Requests
	}
	return run, nil
}

// requestHeld asks for the extraction of turns held back, under the
// batcher's request ids, so a request it made for the same turns is the
// same request.
func (r *retainer) requestHeld(ctx context.Context, held []memory.Turn, now time.Time, run *RetentionRun) error {
	for id, at := range r.requested {
		if now.Sub(at) >= time.Hour {
			delete(r.requested, id)
		}
	}
	var out []memory.Outgoing
	for _, o := range extractreq.Requests(held, events.ReasonSweep, "", 0, now) {
		if _, ok := r.requested[o.ID]; ok {
			continue
		}
		r.requested[o.ID] = now
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil
	}
	run.Asked = len(out)
	if err := r.a.emitter(stream.RoleConsolidator, retentionSource)(ctx, out...); err != nil {
		return fmt.Errorf("retention: request extraction of held turns: %w", err)
	}
	return nil
}
