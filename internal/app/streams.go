package app

import (
	"context"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// The operator's commands on the streams themselves (engram streams):
// workers may neither create nor change a stream, so setting them up, and
// deciding what happens after one changed under engram, is the
// operator's.

// ApplyStreams is `engram streams apply`: it creates MEMORY, DEADLETTER
// and the key-value buckets where they are missing and sets every field
// of theirs that engram sets back to engram's value (a limit an operator
// put on MEMORY goes). What the streams lost meanwhile stays lost: that is
// AcceptStreams' to record.
func ApplyStreams(ctx context.Context, cfg config.Config, log *zap.Logger) ([]stream.StreamReport, error) {
	js, closeFn, err := openOperator(ctx, cfg, log, false, false)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	return applyStreams(ctx, js, streamsConfigOf(cfg))
}

// applyStreams sets the streams up, asking again while the bus does not answer (stream.NotReady), up
// to busPatience: a cluster that has just formed answers late while it
// elects its leaders.
func applyStreams(ctx context.Context, js stream.JetStream, cfg stream.StreamsConfig) ([]stream.StreamReport, error) {
	deadline := time.Now().Add(busPatience)
	for {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		reps, err := stream.SetupStreams(actx, js, cfg, stream.Restore)
		cancel()
		if err == nil || !stream.NotReady(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return reps, err
		}
		select {
		case <-ctx.Done():
			return reps, err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// AcceptStreams is `engram streams accept`: MEMORY as it is now becomes
// what read models follow. A read model built from another MEMORY is
// emptied and applies this one from its start; events a read model
// applied that are gone from below the stream's first sequence stop
// being reported (the read model keeps them).
func AcceptStreams(ctx context.Context, cfg config.Config, log *zap.Logger) (stream.Accepted, error) {
	js, closeFn, err := OpenOperator(ctx, cfg, log)
	if err != nil {
		return stream.Accepted{}, err
	}
	defer closeFn()
	return stream.AcceptMemory(ctx, js)
}

// StreamsStatus is what `engram streams status` shows.
type StreamsStatus struct {
	// Differences are the streams' fields that are not engram's.
	Differences []stream.Difference
	// Origin, FirstSeq and LastSeq are MEMORY's now.
	Origin            string
	FirstSeq, LastSeq uint64
	// Accepted is what an operator last accepted of MEMORY.
	Accepted stream.Accepted
}

// StreamsStatusOf reads the streams as they are, changing nothing.
func StreamsStatusOf(ctx context.Context, cfg config.Config, log *zap.Logger) (StreamsStatus, error) {
	var st StreamsStatus
	js, closeFn, err := OpenOperator(ctx, cfg, log)
	if err != nil {
		return st, err
	}
	defer closeFn()
	info, err := stream.MemoryInfo(ctx, js)
	if err != nil {
		return st, err
	}
	st.Origin, st.FirstSeq, st.LastSeq = stream.OriginOf(info), info.State.FirstSeq, info.State.LastSeq
	st.Accepted = stream.AcceptedOf(info.Config)
	want, _ := stream.StreamConfigOf(stream.MemoryStream, streamsConfigOf(cfg))
	st.Differences = stream.Differences(info.Config, want)
	dl, err := stream.DeadLetterDifferences(ctx, js, streamsConfigOf(cfg))
	if err != nil {
		return st, err
	}
	st.Differences = append(st.Differences, dl...)
	return st, nil
}

// streamsConfigOf is the streams and buckets as cfg sizes them.
func streamsConfigOf(cfg config.Config) stream.StreamsConfig {
	return stream.StreamsConfig{Replicas: cfg.NATS.Replicas, DuplicateWindow: cfg.NATS.DuplicateWindow}
}
