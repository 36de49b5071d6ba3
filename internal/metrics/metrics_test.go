package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func u64(n uint64) *uint64 { return &n }

// Every metric has help text, a unit-bearing name and a type the linter
// accepts, including the gauges read at scrape.
func TestLint(t *testing.T) {
	r := New()
	r.EventTypes([]string{"turn.recorded"})
	r.Route("GET /v1/search")
	r.Endpoint("search")
	r.HTTPRequest("GET /v1/search", 200, time.Millisecond)
	r.NATSRequest("search", "invalid", time.Millisecond)
	r.LLMCall(OpChat, time.Second, 100, 20, "rate_limited")
	r.Degraded("fts", "recent")
	r.DeadLettered("extractor")
	r.ContextRequest()
	state := func(context.Context) (Snapshot, error) {
		return Snapshot{ProjectorLag: u64(3), DeadLetters: u64(1), ExtractionBacklog: u64(2),
			Consumers: []Consumer{{Name: "batcher", Pending: 5, AckPending: 1}}}, nil
	}
	g := r.Gatherer(state)
	problems, err := testutil.GatherAndLint(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range families {
		seen[f.GetName()] = true
		if f.GetHelp() == "" {
			t.Errorf("%s has no help text", f.GetName())
		}
	}
	for _, name := range []string{"engram_projector_lag_events", "engram_consumer_pending_messages",
		"engram_dead_letters_messages", "engram_extraction_backlog_requests", "engram_llm_tokens_total",
		"engram_http_request_duration_seconds", "engram_nats_request_duration_seconds",
		"go_goroutines", "process_resident_memory_bytes"} {
		if !seen[name] {
			t.Errorf("%s missing", name)
		}
	}
	if got := testutil.ToFloat64(r.llmTokens.WithLabelValues(OpChat, "prompt")); got != 100 {
		t.Errorf("prompt tokens = %v, want 100", got)
	}
	if got := testutil.ToFloat64(r.llmErrors.WithLabelValues(OpChat, "rate_limited")); got != 1 {
		t.Errorf("errors = %v, want 1", got)
	}
}

// A state that cannot be read says so in engram_state_up and leaves the
// other gauges out rather than reporting zeros.
func TestStateDown(t *testing.T) {
	r := New()
	g := r.Gatherer(func(context.Context) (Snapshot, error) { return Snapshot{}, errors.New("nats down") })
	want := "# HELP engram_state_up 1 when the last scrape could read the stream's state, 0 when it could not.\n" +
		"# TYPE engram_state_up gauge\nengram_state_up 0\n"
	if err := testutil.GatherAndCompare(g, strings.NewReader(want), "engram_state_up", "engram_projector_lag_events"); err != nil {
		t.Fatal(err)
	}
}
