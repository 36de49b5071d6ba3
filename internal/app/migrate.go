package app

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/migrate"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// Systems engram migrates from.
const (
	SystemMyclaw    = "myclaw"
	SystemOpenAkita = "openakita"
)

// MigrateOptions says what to migrate and whose it becomes.
type MigrateOptions struct {
	System string // SystemMyclaw or SystemOpenAkita
	Dir    string
	migrate.Options
	// Progress receives a progress bar; nil for none.
	Progress io.Writer
}

// MigrateReport is what a migration read and what the stream kept.
type MigrateReport struct {
	migrate.Report
	Published  int // events the stream stored
	Duplicates int // events it already had (a re-run)
	Took       time.Duration
}

// migrateBatch is how many events are published together.
const migrateBatch = 256

// Migrate reads another memory system's store and publishes it as events,
// which every worker then sees as if agents had sent them: memories,
// daily summaries, turns. It runs with engram stopped (it starts the
// embedded JetStream on the data dir, creating it when new, so a
// migration can come before the first start) or against an external NATS
// (cfg.NATS.URL). Events have ids derived from what they were made from,
// so a second run publishes nothing new.
func Migrate(ctx context.Context, cfg config.Config, opts MigrateOptions, log *zap.Logger) (*MigrateReport, error) {
	start := time.Now()
	run := map[string]func(string, migrate.Options, func(event.Event) error) (*migrate.Report, error){
		SystemMyclaw: migrate.Myclaw, SystemOpenAkita: migrate.OpenAkita,
	}[opts.System]
	if run == nil {
		return nil, fmt.Errorf("migrate: unknown system %q (want %s or %s)", opts.System, SystemMyclaw, SystemOpenAkita)
	}
	// A dry pass counts the events, for the progress bar, and finds an
	// unreadable directory before anything is published.
	total := 0
	if _, err := run(opts.Dir, opts.Options, func(event.Event) error { total++; return nil }); err != nil {
		return nil, fmt.Errorf("migrate %s: %w", opts.System, err)
	}
	js, closeNATS, err := openOperator(ctx, cfg, log, false, true)
	if err != nil {
		return nil, err
	}
	defer closeNATS()

	rep := &MigrateReport{}
	bar := newProgress(opts.Progress, int64(total), "migrate "+opts.System)
	defer bar.Finish()
	done := int64(0)
	pub := stream.NewPublisher(js)
	var buf []event.Event
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		for i, r := range pub.PublishBatch(ctx, buf) {
			if r.Err != nil {
				return fmt.Errorf("publish %s %s: %w", buf[i].Type(), buf[i].ID(), r.Err)
			}
			if r.Ack.Duplicate {
				rep.Duplicates++
			} else {
				rep.Published++
			}
		}
		done += int64(len(buf))
		bar.Set(done)
		buf = buf[:0]
		return nil
	}
	read, err := run(opts.Dir, opts.Options, func(e event.Event) error {
		buf = append(buf, e)
		if len(buf) >= migrateBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if read != nil {
		rep.Report = *read
	}
	rep.Took = time.Since(start)
	if err != nil {
		return rep, fmt.Errorf("migrate %s: %w", opts.System, err)
	}
	return rep, nil
}
