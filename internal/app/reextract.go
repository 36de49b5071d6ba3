package app

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extraction"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
)

// ReextractOptions selects the turns to extract again.
type ReextractOptions struct {
	Since, Until    time.Time // Until zero: now
	Namespace, User string    // empty: every namespace, every user
	// Generation names the run in the requests' ids; empty: the time.
	Generation string
}

// ReextractReport counts what Reextract asked for.
type ReextractReport struct {
	Turns    int `json:"turns"`
	Requests int `json:"requests"`
}

// maxReextractTurns bounds one run; a larger range is run in parts.
const maxReextractTurns = 200000

// Reextract asks for the turns of a period to be extracted again with the
// model configured now: it reads them from the read model at readModel
// and publishes extraction.requested events (reason manual) under new ids.
// The extractor answers them like any request; its memory.extracted
// results are recorded on the stream, so the new memories merge with or
// supersede the old ones (with history) the same way live and in a
// rebuild, which reads the recorded results and never calls the model.
func Reextract(ctx context.Context, js stream.JetStream, readModel string, opt ReextractOptions) (ReextractReport, error) {
	var rep ReextractReport
	now := time.Now().UTC()
	if opt.Until.IsZero() {
		opt.Until = now
	}
	if !opt.Since.Before(opt.Until) {
		return rep, fmt.Errorf("reextract: --since %s is not before --until %s", opt.Since.Format(time.RFC3339), opt.Until.Format(time.RFC3339))
	}
	if opt.Generation == "" {
		opt.Generation = now.Format("20060102T150405Z")
	}
	turns, err := sqlite.ReadTurns(ctx, readModel, opt.Namespace, opt.User, opt.Since, opt.Until, maxReextractTurns)
	if err != nil {
		return rep, fmt.Errorf("reextract: %w", err)
	}
	if len(turns) == maxReextractTurns {
		return rep, fmt.Errorf("reextract: more than %d turns in the period; run it in parts", maxReextractTurns)
	}
	rep.Turns = len(turns)
	outs := extraction.Reextract(turns, opt.Generation, 0, now)
	evs := make([]event.Event, len(outs))
	for i, o := range outs {
		e, err := events.NewDerived("engram/operator", o.Type, o.ID, o.Scope.Namespace, o.Scope.User, o.Time, o.Data)
		if err != nil {
			return rep, fmt.Errorf("reextract: %w", err)
		}
		if o.Agent != "" {
			e.SetExtension(events.ExtAgent, o.Agent)
		}
		evs[i] = e
	}
	pub := stream.NewPublisher(js)
	for len(evs) > 0 {
		chunk := evs[:min(len(evs), 512)]
		evs = evs[len(chunk):]
		for i, res := range pub.PublishBatch(ctx, chunk) {
			if res.Err != nil {
				return rep, fmt.Errorf("reextract: request %s: %w (%d published; run again with --generation %s: nothing is published twice)",
					chunk[i].ID(), res.Err, rep.Requests, opt.Generation)
			}
			rep.Requests++
		}
	}
	return rep, nil
}
