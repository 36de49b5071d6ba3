package app

import (
	"context"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// inOrder makes the projector apply MEMORY in order, skipping nothing the
// stream holds. A message JetStream lost on its way to the projector (a
// pull cut short when the node leading MEMORY dies) comes again only
// after its ack wait, and by then the projector has applied later ones:
// the read model, which takes what is behind its position as applied,
// would pass it over for good. So when a batch does not follow on from
// the read model's position, the messages the stream holds in between
// are read from it directly and applied first. Sequences the stream no
// longer has (a purge, a forgotten user) stay gaps.
func (a *App) inOrder(h stream.BatchHandler, log *zap.Logger) stream.BatchHandler {
	return a.inOrderOf(&projection{store: a.store}, h, log)
}

// inOrderOf is inOrder for pr: the position it follows on from is the last
// sequence pr applied or passed over, and what the stream holds in between
// that is not pr's to keep is handed over Passed.
func (a *App) inOrderOf(pr *projection, h stream.BatchHandler, log *zap.Logger) stream.BatchHandler {
	return func(ctx context.Context, msgs []*stream.Message) []error {
		if len(msgs) == 0 {
			return h(ctx, msgs)
		}
		last, err := pr.position(ctx)
		if err != nil {
			return h(ctx, msgs) // the projector reports the read model's trouble
		}
		missing, err := a.missing(ctx, pr, last, msgs)
		if err != nil {
			// Transient: the batch comes again, and so does the question.
			errs := make([]error, len(msgs))
			for i := range errs {
				errs[i] = memory.Errorf(memory.EUNAVAILABLE, "read the messages the consumer skipped: %v", err)
			}
			return errs
		}
		if len(missing) == 0 {
			return h(ctx, msgs)
		}
		log.Warn("the consumer passed messages the stream holds; applying them first, in order",
			zap.Int("missing", len(missing)), zap.Uint64(stream.FieldSeq, missing[0].Seq))
		all := make([]*stream.Message, 0, len(missing)+len(msgs))
		i := 0
		for _, m := range msgs {
			for i < len(missing) && missing[i].Seq < m.Seq {
				all = append(all, missing[i])
				i++
			}
			all = append(all, m)
		}
		all = append(all, missing[i:]...)
		errs := h(ctx, all)
		if errs == nil {
			return nil // all applied
		}
		out := make([]error, 0, len(msgs))
		for j, m := range all {
			if m.Delivered == 0 { // read here, not delivered: nothing to acknowledge
				if errs[j] != nil {
					log.Warn("apply a skipped message", zap.Uint64(stream.FieldSeq, m.Seq), zap.Error(errs[j]))
				}
				continue
			}
			out = append(out, errs[j])
		}
		return out
	}
}

// missing returns the messages MEMORY holds after last and before the
// batch's last one that the batch lacks, in order. In the common case —
// the batch starts at last+1 and has no holes — it asks nothing.
func (a *App) missing(ctx context.Context, pr *projection, last uint64, msgs []*stream.Message) ([]*stream.Message, error) {
	var out []*stream.Message
	prev := last
	for _, m := range msgs {
		if m.Seq <= prev {
			continue // behind the position, or out of order within the batch
		}
		for from := prev + 1; from < m.Seq; {
			got, err := a.nextStored(ctx, from)
			if err != nil {
				return nil, err
			}
			if got == nil || got.Seq >= m.Seq {
				break // a gap the stream has too
			}
			if pr.keep != nil && !pr.keep(got.Subject) {
				got.Passed = true
			}
			out = append(out, got)
			from = got.Seq + 1
		}
		prev = m.Seq
	}
	return out, nil
}

// nextStored reads the first message MEMORY holds at seq or after
// (stream.NextStored).
func (a *App) nextStored(ctx context.Context, seq uint64) (*stream.Message, error) {
	return stream.NextStored(ctx, a.js, seq, a.Config.HTTP.MaxEventBytes)
}
