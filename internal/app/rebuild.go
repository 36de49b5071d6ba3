package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// RebuildOptions configures Rebuild.
type RebuildOptions struct {
	// Out is the new read model's path; default <data dir>/engram.db.rebuild.
	Out string
	// Replace swaps the rebuilt file in for the live one when they agree
	// (or when there is no live one).
	Replace bool
	// Progress receives a progress bar; nil for none.
	Progress io.Writer
	// Partition, when set, rebuilds a partitioned retriever's copy of that
	// partition of the users (of the config's Partitions): from the
	// partition's events alone, compared with the copy in the data dir.
	Partition *int
}

// RebuildReport says what Rebuild did.
type RebuildReport struct {
	Out         string
	Target      uint64 // the stream position rebuilt to
	Read        int    // events read
	Skipped     int    // events the projector would dead-letter too
	HadLive     bool
	LiveErr     string // why the live read model could not be read, when it could not
	Live, Built sqlite.TableSums
	Diff        []string // tables that differ
	Took        time.Duration
}

// Rebuild replays the MEMORY stream into a fresh read model and compares it
// with the live one at the live one's position. It runs with the server
// stopped (it starts the embedded JetStream on the data dir) or against an
// external NATS (cfg.NATS.URL).
func Rebuild(ctx context.Context, cfg config.Config, opts RebuildOptions, log *zap.Logger) (*RebuildReport, error) {
	start := time.Now()
	livePath := cfg.ReadModelPath()
	var keep func(subject string) bool
	if p := opts.Partition; p != nil {
		if *p < 0 || *p >= cfg.Partitions || cfg.Partitions < 2 {
			return nil, fmt.Errorf("partition %d: the users are in %d partitions (ENGRAM_PARTITIONS), numbered from 0", *p, cfg.Partitions)
		}
		livePath = cfg.ReadPartitionPath(*p, cfg.Partitions)
		keep = stream.KeepPartition(*p, cfg.Partitions)
	}
	if opts.Out == "" {
		opts.Out = livePath + ".rebuild"
	}
	rep := &RebuildReport{Out: opts.Out}
	js, closeNATS, err := OpenOperator(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	defer closeNATS()

	var live *sqlite.Store
	if _, err := os.Stat(livePath); err == nil {
		live, err = sqlite.Open(ctx, livePath)
		if err != nil {
			// A live read model that cannot be read (corrupt, say) is
			// rebuilt from the whole stream; --replace swaps the new one
			// in whatever state the old one is in.
			var ce *sqlite.CorruptError
			if !errors.As(err, &ce) {
				return nil, fmt.Errorf("live read model: %w", err)
			}
			rep.LiveErr = err.Error()
			live = nil
		}
	}
	if live != nil {
		var err error
		rep.Live, rep.Target, err = live.Checksum(ctx)
		quiet.Close(live) // only read
		if err != nil {
			return nil, fmt.Errorf("live read model: %w", err)
		}
		rep.HadLive = true
	} else {
		head, err := stream.Head(ctx, js)
		if err != nil {
			return nil, fmt.Errorf("stream info: %w", err)
		}
		rep.Target = head
	}

	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(opts.Out + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("remove old %s: %w", opts.Out+suffix, err)
		}
	}
	built, err := sqlite.Open(ctx, opts.Out)
	if err != nil {
		return nil, err
	}
	defer quiet.Close(built) // on a failing path; the success path closes it below
	if err := replayInto(ctx, js, built, rep, cfg.HTTP.MaxEventBytes, keep, opts.Progress); err != nil {
		return nil, err
	}
	if err := recordOrigin(ctx, js, livePath, built, rep.HadLive); err != nil {
		return nil, err
	}
	if rep.Built, _, err = built.Checksum(ctx); err != nil {
		return nil, err
	}
	if rep.HadLive {
		rep.Diff = rep.Live.Diff(rep.Built)
	}
	rep.Took = time.Since(start)
	if err := built.Close(); err != nil {
		return nil, fmt.Errorf("close rebuilt read model: %w", err)
	}
	if opts.Replace && len(rep.Diff) == 0 {
		if err := os.Rename(opts.Out, livePath); err != nil {
			return nil, fmt.Errorf("replace live read model: %w", err)
		}
		for _, suffix := range []string{"-wal", "-shm"} {
			_ = os.Remove(livePath + suffix)
		}
		rep.Out = livePath
	}
	return rep, nil
}

// replayInto applies the stream up to rep.Target to store exactly as the
// projector does: same batches' semantics, same skips.
// A partition's copy (keep set) applies its partition's events only, and
// its projector never decodes the others: they are passed over here too.
func replayInto(ctx context.Context, js stream.JetStream, store *sqlite.Store, rep *RebuildReport, maxEventBytes int,
	keep func(subject string) bool, progress io.Writer) error {
	bar := newProgress(progress, int64(rep.Target), "rebuild")
	defer bar.Finish()
	return stream.ReplayKept(ctx, js, rep.Target, 1024, maxEventBytes, keep, func(b stream.ReplayBatch) error {
		rep.Read += len(b.Messages) + len(b.Undecodable)
		rep.Skipped += len(b.Undecodable)
		batch := make([]memory.Applied, len(b.Messages))
		for i, m := range b.Messages {
			batch[i] = m.Applied()
		}
		if len(batch) == 0 {
			bar.Set(int64(b.Last))
			return nil
		}
		for i, err := range store.Apply(ctx, batch) {
			switch {
			case err == nil:
			case memory.ErrorCode(err) == memory.EUNAVAILABLE:
				return fmt.Errorf("apply seq %d: %w", batch[i].Seq, err)
			default:
				rep.Skipped++
			}
		}
		bar.Set(int64(b.Last))
		return nil
	})
}
