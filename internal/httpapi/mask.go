package httpapi

import (
	"context"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/secrets"
)

// maskingPublisher masks secrets in every event's data before the event
// enters the stream: raw turns, tool calls and results, memories added
// by hand, the scratchpad. The stream is the source of truth and is
// replayed, exported and read by every worker, so a secret masked
// anywhere later would still be kept there.
type maskingPublisher struct {
	next Publisher
	mask func(namespace string) bool
	m    secrets.Masker
}

func (p *maskingPublisher) Publish(ctx context.Context, evs []event.Event, datas []any) []PublishResult {
	var bad []PublishResult
	for i := range evs {
		if !p.mask(events.Namespace(evs[i])) {
			continue
		}
		masked, data, err := p.maskOne(&evs[i])
		if masked && datas != nil {
			datas[i] = data // the masked event's, or nil
		}
		if err != nil {
			if bad == nil {
				bad = make([]PublishResult, len(evs))
			}
			bad[i].Err = err
		}
	}
	if bad != nil {
		// Nothing is published: a batch is all or nothing.
		for i := range bad {
			if bad[i].Err == nil {
				bad[i].Err = memory.Errorf(memory.EINVALID, "not published: another event of the batch is invalid")
			}
		}
		return bad
	}
	return p.next.Publish(ctx, evs, datas)
}

// maskOne masks e's data; when it changed anything it reports so, with
// the masked event's data as events.Validate decodes it.
func (p *maskingPublisher) maskOne(e *event.Event) (changed bool, decoded any, err error) {
	data := e.Data()
	if len(data) == 0 {
		return false, nil, nil
	}
	out, changed, err := p.m.MaskJSON(data)
	if err != nil {
		return true, nil, memory.Errorf(memory.EINVALID, "data: %v", err)
	}
	if !changed {
		return false, nil, nil
	}
	masked := e.Clone()
	masked.DataEncoded = out
	decoded, err = events.Validate(masked)
	if err != nil {
		return true, nil, memory.Errorf(memory.EINVALID, "with its secrets masked, the event is not valid: %v", err)
	}
	*e = masked
	return true, decoded, nil
}
