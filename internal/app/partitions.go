package app

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// Work that keeps state per user (the batcher's waiting sessions, the
// consolidator's episodes and scratchpad, which must see one user's
// events in order) is split into Config.Partitions partitions by user.
// Each instance holds a fair share of them through expiring leases in a
// key-value bucket (stream.Leases), and runs, for each partition it holds,
// a durable consumer of its own (stream.PartitionDurable) that handles
// that partition's users and passes over the others. When an instance
// dies its leases expire and another takes the partitions: it waits for
// its read model to have the stream, recovers what was waiting from it,
// and its consumer starts again after what the dead one acknowledged.
//
// The extraction requests need no partition: a request carries all it
// needs, and the one shared durable consumer already gives each to one
// instance and gives it again when that one dies before its ack.

// runPartitions holds this instance's share of group's partitions until
// ctx ends, running work for each one held; role is the bus user whose
// group it is.
func (a *App) runPartitions(ctx, runCtx context.Context, role, group string, log *zap.Logger,
	work func(ctx context.Context, p, n int) error) error {
	n := a.Config.Partitions
	leases, err := stream.OpenLeases(ctx, a.bus(role).js, stream.LeaseConfig{Group: group, Instance: a.Config.Instance, N: n}, log)
	if err != nil {
		return err
	}
	a.goWorker(runCtx, group+" partitions", func(ctx context.Context) error {
		leases.Run(ctx, func(pctx context.Context, p int) {
			a.runWorker(pctx, fmt.Sprintf("%s (partition %d)", group, p), func(ctx context.Context) error { return work(ctx, p, n) })
		})
		return nil
	})
	return nil
}

// partitionConsumer creates partition p's durable consumer of cfg.Durable,
// trying again until ctx ends (a partition held must not sit idle), and
// returns it with its ack floor: every message of the stream up to floor
// was handled by whoever held the partition before, and the consumer
// delivers everything after it. A durable made for the first time starts
// where the group's other durables have all handled to, so changing the
// number of partitions neither loses nor replays the stream: its first
// partition starts after what the old consumers acknowledged.
func (a *App) partitionConsumer(ctx context.Context, role string, cfg stream.ConsumerConfig, p, n int, log *zap.Logger) (*stream.Consumer, uint64) {
	base := cfg.Durable
	cfg.Durable = stream.PartitionDurable(base, p, n)
	// known is the ack floor an attempt read before it deleted the
	// consumer to make it again: an attempt after one that failed in
	// between starts there, not where a new durable would.
	var known *uint64
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		c, floor, err := stream.CreatePartitionConsumer(ctx, a.bus(role).js, cfg, base, &known, a.Log.Named("partition"))
		if err == nil {
			return c, floor
		}
		if ctx.Err() != nil {
			return nil, 0
		}
		log.Warn("partition consumer; trying again", zap.String("durable", cfg.Durable), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil, 0
		case <-time.After(wait):
		}
	}
}

// settle sends what a partition's consumer, bus user role's, acknowledged
// before the partition is let go: the next holder starts after the ack
// floor it reads.
func (a *App) settle(role string, log *zap.Logger) {
	if err := a.bus(role).nc.FlushTimeout(5 * time.Second); err != nil {
		log.Warn("partition: acknowledgements not confirmed before letting go", zap.Error(err))
	}
}

// onlyPartition hands h the messages of partition p's users; the others
// are another partition's, and pass (acknowledged) here.
func onlyPartition(p, n int, h func(context.Context, []*stream.Message) []error) func(context.Context, []*stream.Message) []error {
	if n <= 1 {
		return h
	}
	return func(ctx context.Context, msgs []*stream.Message) []error {
		errs := make([]error, len(msgs))
		var mine []*stream.Message
		var at []int
		for i, m := range msgs {
			sc := m.Envelope().Scope
			if stream.PartitionOf(sc.Namespace, sc.User, n) == p {
				mine, at = append(mine, m), append(at, i)
			}
		}
		if len(mine) == 0 {
			return errs
		}
		for j, err := range h(ctx, mine) {
			errs[at[j]] = err
		}
		return errs
	}
}

// partitionTurns is what the batcher of partition p recovers from the
// read model: its users' unextracted turns, less those of requests still
// on their way to an extractor (which the instance before asked for).
type partitionTurns struct {
	store *sqlite.Store
	p, n  int
	// through is the batcher consumer's ack floor when the partition was
	// taken: turns written after it the consumer delivers itself.
	through uint64
}

func (s partitionTurns) Unextracted(ctx context.Context, before time.Time, limit int) ([]memory.Turn, error) {
	// Requests first: one answered between the two reads has marked its
	// turns extracted by the second, while turns read first and a request
	// answered after would look waiting and unrequested, and be asked for
	// twice.
	requested, err := s.store.RequestedTurns(ctx)
	if err != nil {
		return nil, err
	}
	turns, err := s.store.UnextractedThrough(ctx, before, s.through, limit)
	if err != nil {
		return nil, err
	}
	out := turns[:0]
	for _, t := range turns {
		if stream.PartitionOf(t.Scope.Namespace, t.Scope.User, s.n) == s.p && !requested[t.Scope][t.SessionID][t.TurnIndex] {
			out = append(out, t)
		}
	}
	return out, nil
}

// PartitionsHeld counts, per instance, the partitions of group
// ("extractor", "consolidator") that it holds now, as this process's
// operator, or its main bus user, reads them.
func (a *App) PartitionsHeld(ctx context.Context, group string) (map[string]int, error) {
	js := a.js
	if a.op != nil {
		js = a.op.js
	}
	return countHeld(ctx, js, group)
}

// countHeld is PartitionsHeld as js reads it: the operator's or the
// group's worker's.
func countHeld(ctx context.Context, js stream.JetStream, group string) (map[string]int, error) {
	held, err := stream.Held(ctx, js, group)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, instance := range held {
		out[instance]++
	}
	return out, nil
}

// SetLeaseTTL sets how long a dead instance's partitions wait for another
// (stream.DefaultLeaseTTL unless set), for tests and harnesses that kill
// instances. Call it before Open; every instance of a group needs the same.
func (a *App) SetLeaseTTL(d time.Duration) { a.leaseTTL = d }
