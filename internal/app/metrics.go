package app

import (
	"context"
	"strings"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/stream"
)

// metricsState reads, at each scrape, what the gauges of /metrics show:
// the projector's lag behind MEMORY, each durable consumer's backlog, the
// dead letters held, and the extraction requests not yet done.
func (a *App) metricsState(ctx context.Context) (metrics.Snapshot, error) {
	s := metrics.Snapshot{StreamDrift: a.drift.kinds()}
	info, err := stream.MemoryInfo(ctx, a.js)
	if err != nil {
		return s, err
	}
	if a.store != nil {
		last, err := a.store.LastSeq(ctx)
		if err != nil {
			return s, err
		}
		lag := info.State.LastSeq - min(last, info.State.LastSeq)
		s.ProjectorLag = &lag
		q, err := a.store.Quality(ctx, "", "", 0)
		if err != nil {
			return s, err
		}
		s.Quality = &metrics.Quality{ConfirmationRate: q.ConfirmationRate, WrongWriteRate: q.WrongWriteRate}
	}
	if a.reads != nil {
		s.Partitions = a.reads.figures(info.State.LastSeq)
	}
	backlogs, err := stream.Backlogs(ctx, a.js)
	for _, b := range backlogs {
		c := metrics.Consumer{Name: b.Name, Pending: b.Pending, AckPending: b.AckPending}
		s.Consumers = append(s.Consumers, c)
		if c.Name == extractorDurable && a.Roles&RoleExtractor != 0 {
			backlog := c.Pending + c.AckPending
			s.ExtractionBacklog = &backlog
		}
	}
	if err != nil {
		return s, err
	}
	dead, err := stream.DeadLetters(ctx, a.js)
	if err != nil {
		return s, err
	}
	s.DeadLetters = &dead
	return s, nil
}

// observeLLM counts an LLM or embedding call in /metrics.
func observeLLM(c llm.Call) {
	metrics.Default.LLMCall(c.Op, c.Duration, c.Usage.PromptTokens, c.Usage.CompletionTokens, errKindLabel(c.ErrKind))
}

// errKindLabel is an llm.ErrorKind's name as a label value ("rate_limited").
func errKindLabel(kind string) string { return strings.ReplaceAll(kind, " ", "_") }

// declareMetrics makes the series whose label values engram knows exist
// from the start, so dashboards and alerts see zeros rather than nothing.
func declareMetrics() {
	metrics.Default.EventTypes(events.Types())
	for k := llm.RateLimited; k <= llm.Canceled; k++ {
		metrics.Default.LLMErrorKind(metrics.OpChat, errKindLabel(k.String()))
		metrics.Default.LLMErrorKind(metrics.OpEmbed, errKindLabel(k.String()))
	}
	for _, f := range retrieval.Falls {
		metrics.Default.DegradedStep(f[0], f[1])
	}
}

// countNATSAccepted counts the events a projector applied for the first
// time that came straight over NATS: not through the HTTP edge (which
// counts its own) and not derived by engram's workers.
func countNATSAccepted(msgs []*stream.Message, errs []error) {
	for i, m := range msgs {
		if (errs != nil && errs[i] != nil) || m.Delivered != 1 || m.Via != "" || m.Passed {
			continue
		}
		if strings.HasPrefix(m.Event.Source(), "engram/") {
			continue
		}
		metrics.Default.EventAccepted(metrics.PathNATS, m.Event.Type())
	}
}
