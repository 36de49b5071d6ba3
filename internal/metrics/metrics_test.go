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
	r.ContextServed("default", true, 30, 100)
	state := func(context.Context) (Snapshot, error) {
		return Snapshot{ProjectorLag: u64(3), DeadLetters: u64(1), ExtractionBacklog: u64(2),
			Consumers:  []Consumer{{Name: "batcher", Pending: 5, AckPending: 1}},
			Quality:    &Quality{ConfirmationRate: 0.5, WrongWriteRate: 0.25},
			Partitions: []PartitionCopy{{Partition: 3, Serving: true, Held: true, Lag: 2, Progress: 1, Users: 4, Rows: map[string]int64{"turns": 9}, Bytes: 4096}}}, nil
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
		"engram_context_served_total", "engram_context_tokens_total",
		"engram_memory_confirmation_ratio", "engram_memory_wrong_write_ratio",
		"engram_read_partition_serving", "engram_read_partition_lag_events", "engram_read_partition_rows",
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

// The context figures add up per namespace, and the counters over all.
func TestContextServed(t *testing.T) {
	r := New()
	r.ContextServed("a", true, 30, 100)
	r.ContextServed("a", false, 0, 40)
	r.ContextServed("b", true, 10, 10)
	a := r.Context("a")
	if a.Served != 2 || a.Hits != 1 || a.HitRate() != 0.5 || a.MemoryTokens != 30 || a.TotalTokens != 140 {
		t.Errorf("namespace a = %+v", a)
	}
	if got, want := a.MemoryTokenShare(), 30.0/140; got != want {
		t.Errorf("memory-token share = %v, want %v", got, want)
	}
	if got := r.Context("none"); got.HitRate() != 0 || got.MemoryTokenShare() != 0 {
		t.Errorf("empty namespace = %+v", got)
	}
	if got := testutil.ToFloat64(r.contextServed.WithLabelValues("hit")); got != 2 {
		t.Errorf("hits = %v, want 2", got)
	}
	if got := testutil.ToFloat64(r.contextTokens.WithLabelValues("memory")); got != 40 {
		t.Errorf("memory tokens = %v, want 40", got)
	}
}
