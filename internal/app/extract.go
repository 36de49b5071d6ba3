package app

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extraction"
	"github.com/engramhq/engram/internal/llmextract"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/secrets"
	"github.com/engramhq/engram/internal/stream"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
)

// emitter publishes a worker's derived events as CloudEvents from
// source, as bus user role.
func (a *App) emitter(role, source string) memory.Emitter {
	pub := stream.NewPublisher(a.bus(role).js)
	return func(ctx context.Context, outs ...memory.Outgoing) error {
		evs := make([]event.Event, len(outs))
		for i, o := range outs {
			e, err := events.NewDerived(source, o.Type, o.ID, o.Scope.Namespace, o.Scope.User, o.Time, o.Data)
			if err != nil {
				return fmt.Errorf("build %s %s: %w", o.Type, o.ID, err)
			}
			if o.Agent != "" {
				e.SetExtension(events.ExtAgent, o.Agent)
			}
			evs[i] = e
		}
		for _, r := range pub.PublishBatch(ctx, evs) {
			if r.Err != nil {
				return r.Err
			}
		}
		return nil
	}
}

// appliedBatches adapts a worker that handles batches of applied events
// to a consumer.
func appliedBatches(handle func(context.Context, []memory.Applied) []error) func(context.Context, []*stream.Message) []error {
	return func(ctx context.Context, msgs []*stream.Message) []error {
		batch := make([]memory.Applied, len(msgs))
		for i, m := range msgs {
			batch[i] = m.Applied()
		}
		return handle(ctx, batch)
	}
}

// extractorDurable is the extractor's consumer.
const extractorDurable = "extractor"

// openExtraction starts the batcher and the extractor on their own durable
// consumers.
func (a *App) openExtraction(ctx, runCtx context.Context) error {
	log := a.Log.Named("extraction")
	xc := a.Config.Extract
	bcfg := extraction.DefaultConfig()
	bcfg.QuietGap, bcfg.TokenCap, bcfg.SweepAt = xc.QuietGap, xc.TokenCap, xc.SweepAt
	if err := bcfg.Validate(); err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	// The rules' extract_now are the batcher's triggers (rules/extraction.yaml).
	current, err := a.openRules(runCtx, a.Log.Named("rules"))
	if err != nil {
		return err
	}
	if def := extraction.DefaultConfig(); xc.QuietGap != def.QuietGap || xc.TokenCap != def.TokenCap || xc.SweepAt != def.SweepAt {
		log.Warn("extract.quiet_gap, token_cap and sweep_at are set but the rules decide: change extract_when_quiet, "+
			"extract_at_token_cap and daily_sweep in the rules directory instead",
			zap.Duration("quiet_gap", xc.QuietGap), zap.Int("token_cap", xc.TokenCap), zap.String("sweep_at", xc.SweepAt))
	}
	x := &extraction.Extractor{Emit: a.emitter(stream.RoleExtractor, extraction.Source), Log: log.Named("extractor"),
		MaxRetryAfter: a.Config.LLM.MaxRetryAfter, AtOnce: xc.RulesAtOnce}
	if a.store != nil {
		x.Known = a.store
		x.Applied = a.store.Applied
		x.Extracted = a.store.AppliedAny
	}
	if xc.MaskSecrets {
		x.Mask = &secrets.Masker{}
	}
	if a.Config.LLM.BaseURL != "" {
		client, err := a.llmClient()
		if err != nil {
			return err
		}
		x.LLM = &llmextract.Extractor{Client: client}
	}
	bccfg := stream.ConsumerConfig{
		Stream:  stream.MemoryStream,
		Durable: "batcher",
		Description: "engram batcher: groups a session's turns and asks for extraction after a quiet gap, " +
			"a token cap, compression or the session's end",
		FilterSubjects: []string{
			stream.SubjectPrefix + ".*.*." + events.TypeTurnRecorded,
			stream.SubjectPrefix + ".*.*." + events.TypeContextCompressing,
			stream.SubjectPrefix + ".*.*." + events.TypeSessionEnded,
			// Requests a rule made elsewhere: those turns stop waiting.
			stream.SubjectPrefix + ".*.*." + events.TypeExtractionRequested,
			stream.SubjectPrefix + ".*.*." + events.TypeUserForgotten,
		},
		MaxEventBytes: a.Config.HTTP.MaxEventBytes,
		Recent:        a.recent,
		// A turn is handled at once; what a dead instance had taken comes
		// back about when its partition does.
		AckWait: max(a.leaseTTL, time.Second),
	}
	// A session's waiting turns live in the batcher of the one instance
	// that holds its user's partition (partitions.go).
	err = a.runPartitions(ctx, runCtx, stream.RoleExtractor, "extractor", log, func(pctx context.Context, p, n int) error {
		plog := log.With(zap.Int("partition", p))
		cons, floor := a.partitionConsumer(pctx, stream.RoleExtractor, bccfg, p, n, plog)
		if cons == nil {
			return nil
		}
		defer a.settle(stream.RoleExtractor, plog)
		// Turns left waiting by the instance that held the partition
		// before (or by this one before a restart) are read from the
		// read model, so it must first have them.
		var source memory.TurnSource
		if a.store != nil {
			a.waitCaughtUp(pctx, 2*time.Minute, plog)
			source = partitionTurns{a.store, p, n, floor}
		}
		batcher := extraction.NewBatcher(bcfg, a.emitter(stream.RoleExtractor, "engram/batcher"), plog.Named("batcher"))
		batcher.Rules = current
		// The rules read each turn of the user's as it arrives (the
		// batcher is the one worker that sees every turn once, in order).
		batcher.Read = x.ReadTurns
		if a.store != nil {
			batcher.Handled = a.store.HandledTurns
		}
		if source != nil {
			// Before the consumer: a session's end redelivered must find
			// the session's turns waiting.
			batcher.Recover(pctx, source)
		}
		// Two loops: each that stops is reported on its own, at once,
		// while the other may go on.
		var wg conc.WaitGroup
		wg.Go(func() {
			a.runWorker(pctx, fmt.Sprintf("batcher (partition %d)", p), func(ctx context.Context) error {
				return batcher.Run(ctx, source)
			})
		})
		wg.Go(func() {
			a.runWorker(pctx, fmt.Sprintf("batcher consumer (partition %d)", p), func(ctx context.Context) error {
				return cons.Run(ctx, onlyPartition(p, n, appliedBatches(batcher.Handle)))
			})
		})
		wg.Wait()
		return nil
	})
	if err != nil {
		return err
	}

	xcons, err := stream.NewConsumer(ctx, a.bus(stream.RoleExtractor).js, stream.ConsumerConfig{
		Stream:         stream.MemoryStream,
		Durable:        extractorDurable,
		Description:    "engram extractor: turns extraction requests into memories (LLM, or the rules without one)",
		FilterSubjects: []string{stream.SubjectPrefix + ".*.*." + events.TypeExtractionRequested},
		MaxDeliver:     xc.MaxAttempts,
		// One request at a time. A live instance keeps its requests however
		// long the model takes (stream.Consumer tells JetStream they are in
		// progress); AckWait is how soon a dead instance's request goes to
		// another: the LLM's timeout and then some, at most 30 s.
		Batch:         1,
		AckWait:       min(a.Config.LLM.Timeout+a.Config.LLM.Timeout/2, 30*time.Second),
		Backoff:       a.extractBackoff,
		MaxEventBytes: a.Config.HTTP.MaxEventBytes,
	}, log)
	if err != nil {
		return err
	}
	a.goWorker(runCtx, "extractor", func(ctx context.Context) error {
		if a.store != nil {
			// What was extracted before this start is known before a
			// request is taken: delivered again (a replay), it is not
			// sent to the model again.
			a.waitCaughtUp(ctx, 2*time.Minute, log)
		}
		return xcons.Run(ctx, func(ctx context.Context, msgs []*stream.Message) []error {
			errs := make([]error, len(msgs))
			for i, m := range msgs {
				errs[i] = x.Handle(ctx, memory.Delivery{Applied: m.Applied(), Attempt: m.Delivered,
					Final: m.Delivered >= xc.MaxAttempts, Redriven: m.Redriven()})
			}
			return errs
		})
	})
	return nil
}
