package app

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape reads /metrics, fails the test on anything promlint finds, and
// returns the families by name.
func scrape(t *testing.T, a *App) map[string]*dto.MetricFamily {
	t.Helper()
	r := do(t, "GET", "http://"+a.HTTPAddr()+"/metrics", "", nil, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics: status %d", r.Status)
	}
	problems, err := promlint.New(strings.NewReader(r.Raw)).Lint()
	if err != nil {
		t.Fatalf("lint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(r.Raw))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value is the counter, gauge or histogram count of the series of family
// name whose labels include all of labels ("k", "v", …); -1 when absent.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// /metrics is lint-clean and shows every series right after a start;
// events are counted by the path they came in by, requests by route and
// endpoint.
func TestMetrics(t *testing.T) {
	// Not parallel: it counts what the process-wide metrics gained, which
	// another test's requests would add to.
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	fams := scrape(t, a)
	for _, s := range [][]string{
		{"engram_projector_lag_events"},
		{"engram_consumer_pending_messages", "consumer", "projector-local"},
		{"engram_consumer_ack_pending_messages", "consumer", "extractor"},
		{"engram_dead_letters_messages"},
		{"engram_extraction_backlog_requests"},
		{"engram_events_accepted_total", "path", "http", "type", "turn.recorded"},
		{"engram_events_accepted_total", "path", "nats", "type", "turn.recorded"},
		{"engram_http_request_duration_seconds", "route", "POST /v1/events"},
		{"engram_nats_request_duration_seconds", "endpoint", "search"},
		{"engram_nats_request_duration_seconds", "endpoint", "consolidator_run"},
		{"engram_llm_requests_total", "op", "chat"},
		{"engram_llm_tokens_total", "op", "embed", "direction", "prompt"},
		{"engram_llm_request_duration_seconds", "op", "chat"},
		{"engram_state_up"},
		{"go_goroutines"},
		{"process_cpu_seconds_total"},
	} {
		if value(fams, s[0], s[1:]...) < 0 {
			t.Errorf("%v: no series right after start", s)
		}
	}
	if got := value(fams, "engram_state_up"); got != 1 {
		t.Errorf("engram_state_up = %v, want 1", got)
	}
	httpBefore := value(fams, "engram_events_accepted_total", "path", "http", "type", "turn.recorded")
	natsBefore := value(fams, "engram_events_accepted_total", "path", "nats", "type", "turn.recorded")
	postsBefore := value(fams, "engram_http_request_duration_seconds", "route", "POST /v1/events")
	searchBefore := value(fams, "engram_nats_request_duration_seconds", "endpoint", "search")

	r := postEvent(t, a, turnEvent("m-1", "ana", "s1", 0, "user", "over HTTP"))
	mustAccept(t, r)
	e, err := events.New("test/agent", events.TypeTurnRecorded, "default", "ana",
		events.TurnRecorded{SessionID: "s1", TurnIndex: 1, Role: "user", Content: "straight to NATS"})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.Encode(stream.EventSubject(e), e)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := jsOf(a).PublishMsg(t.Context(), msg)
	if err != nil {
		t.Fatal(err)
	}
	waitProjected(t, a, max(ack.Sequence, lastSeqOf(r)))
	if _, err := a.op.nc.Request(natsapi.SearchSubject("default"), []byte(`{"user":"ana","q":"NATS"}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}

	fams = scrape(t, a)
	checks := []struct {
		what      string
		got, want float64
	}{
		{"accepted over HTTP", value(fams, "engram_events_accepted_total", "path", "http", "type", "turn.recorded"), httpBefore + 1},
		{"accepted over NATS", value(fams, "engram_events_accepted_total", "path", "nats", "type", "turn.recorded"), natsBefore + 1},
		{"POST /v1/events timed", value(fams, "engram_http_request_duration_seconds", "route", "POST /v1/events"), postsBefore + 1},
		{"NATS search timed", value(fams, "engram_nats_request_duration_seconds", "endpoint", "search"), searchBefore + 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	// The lag comes back to 0 once the projector has applied what the
	// workers wrote after the turns (the rules' readings of them).
	waitSettled(t, a)
	wait.For(t, "the projector's lag to read 0", func() error {
		return wait.Equal(value(scrape(t, a), "engram_projector_lag_events"), 0)
	})
	if got := value(fams, "engram_http_requests_total", "route", "POST /v1/events", "code", "202"); got < 1 {
		t.Errorf("POST /v1/events 202 counted %v times", got)
	}
}

// Every metric deploy/grafana-dashboard.json queries is one engram serves.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	fams := scrape(t, a)
	name := regexp.MustCompile(`\b(engram|go|process)_[a-z_]+\b`)
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				n++
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
				if fams[base] == nil {
					t.Errorf("panel %q queries %s, which /metrics does not have", p.Title, m)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d metrics queried", n)
	}
}
