package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// Engram is one engram process for a benchmark, in its own temp dir.
type Engram struct {
	App  *app.App
	Dir  string
	base string
	hc   *http.Client
}

// Config is engram's configuration, for StartWith's callers.
type Config = config.Config

// Start opens an engram with every role, in-process NATS, default
// durability unless sync says otherwise.
func Start(ctx context.Context, sync string) (*Engram, error) {
	return StartWith(ctx, func(c *Config) {
		if sync != "" {
			c.NATS.Sync = sync
		}
	})
}

// StartQuality is Start for the runs that score recall: every role but
// the consolidator, whose schedules (the daily jobs at 03:00, the weekly
// at 04:00 Monday) would otherwise fire in a run that crosses them —
// extracting every turn, decaying, archiving and filling the profile
// halfway through the questions, as one run at 03:00 did (Chinese dev
// 0.832 → 0.789 at 5). The extractor stays: -locomo-ended's memories are
// its.
func StartQuality(ctx context.Context, sync string) (*Engram, error) {
	return StartRoles(ctx, qualityRoles, func(c *Config) {
		if sync != "" {
			c.NATS.Sync = sync
		}
	})
}

// qualityRoles are the workers the quality runs start: all but the
// consolidator, whose daily jobs could fire halfway through the questions.
const qualityRoles = app.RoleIngest | app.RoleRetriever | app.RoleExtractor

// StartWith opens an engram in a temp dir with the changes set makes to
// the default config.
func StartWith(ctx context.Context, set func(*Config)) (*Engram, error) {
	return StartRoles(ctx, app.RoleAll, set)
}

// StartRoles is StartWith for a process with only roles: app.RoleIngest
// is the ingest worker apart, with no read model of its own.
func StartRoles(ctx context.Context, roles app.Roles, set func(*Config)) (*Engram, error) {
	dir, err := os.MkdirTemp("", "engram-bench-")
	if err != nil {
		return nil, err
	}
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.Listen = ""
	set(&cfg)
	if cfg.NATS.URL != "" {
		// Workers may not create the streams: the operator sets them up.
		if _, err := app.ApplyStreams(ctx, cfg, zap.NewNop()); err != nil {
			return nil, err
		}
	}
	a := app.New(cfg, roles, zap.NewNop())
	if err := a.Open(ctx); err != nil {
		return nil, err
	}
	return &Engram{App: a, Dir: dir, base: "http://" + a.HTTPAddr(),
		hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}, nil
}

// Close stops engram and removes its data.
func (e *Engram) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = e.App.Close(ctx)
	_ = os.RemoveAll(e.Dir)
}

type postResult struct {
	Accepted int `json:"accepted"`
	Results  []struct {
		Seq uint64 `json:"seq"`
	} `json:"results"`
}

// Post sends a body to /v1/events and returns the highest seq acknowledged.
func (e *Engram) Post(ctx context.Context, contentType string, body []byte) (uint64, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", e.base+"/v1/events", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := e.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer quiet.Close(resp.Body)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return 0, fmt.Errorf("ingest: %d %s", resp.StatusCode, raw)
	}
	var pr postResult
	if err := json.Unmarshal(raw, &pr); err != nil {
		return 0, err
	}
	var top uint64
	for _, r := range pr.Results {
		top = max(top, r.Seq)
	}
	return top, nil
}

// WaitProjected waits until the read model has applied seq.
func (e *Engram) WaitProjected(ctx context.Context, seq uint64) error {
	return e.App.WaitProjected(ctx, seq)
}

// Search calls /v1/search and returns the decoded results.
func (e *Engram) Search(ctx context.Context, ns, user, q string, limit int) ([]memory.SearchResult, error) {
	v := url.Values{"namespace": {ns}, "user": {user}, "q": {q}, "limit": {fmt.Sprint(limit)}}
	req, err := http.NewRequestWithContext(ctx, "GET", e.base+"/v1/search?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer quiet.Close(resp.Body)
	var out struct {
		Results []memory.SearchResult `json:"results"`
	}
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("search: %d %s", resp.StatusCode, raw)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// turnEvents makes n turn.recorded events for one user as structured
// CloudEvents JSON, and the same turns as the projector would apply them.
func turnEvents(c *corpus, ns, user string, start, n int, at time.Time) ([]json.RawMessage, []memory.Applied) {
	raws := make([]json.RawMessage, n)
	applied := make([]memory.Applied, n)
	for i := range n {
		idx := start + i
		d := &events.TurnRecorded{SessionID: fmt.Sprintf("s%d", idx/20), TurnIndex: idx % 20,
			Role: []string{"user", "assistant"}[idx%2], Content: c.sentence()}
		id := fmt.Sprintf("%s-%d", user, idx)
		t := at.Add(time.Duration(idx) * time.Second)
		raws[i], _ = json.Marshal(map[string]any{"specversion": "1.0", "id": id, "source": "bench",
			"type": events.TypeTurnRecorded, "namespace": ns, "user": user, "time": t.Format(time.RFC3339Nano),
			"subject": d.SessionID, "data": d})
		applied[i] = memory.Applied{Envelope: memory.Envelope{Seq: uint64(idx + 1), Source: "bench", ID: id,
			Type: events.TypeTurnRecorded, Scope: memory.Scope{Namespace: ns, User: user}, Subject: d.SessionID, Time: t}, Data: d}
	}
	return raws, applied
}

// Latency is a distribution summary in milliseconds.
type Latency struct {
	N                  int
	P50, P95, P99, Max float64
}

func summarize(d []time.Duration) Latency {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	q := func(p float64) float64 {
		return float64(d[min(int(p*float64(len(d))), len(d)-1)].Microseconds()) / 1000
	}
	return Latency{N: len(d), P50: q(0.50), P95: q(0.95), P99: q(0.99), Max: q(1)}
}

// AckLatency posts n single events one after another and times each 202.
func AckLatency(ctx context.Context, e *Engram, n int) (Latency, error) {
	d := make([]time.Duration, n)
	for i, raw := range ackEvents(n) {
		start := time.Now()
		if _, err := e.Post(ctx, "application/cloudevents+json", raw); err != nil {
			return Latency{}, err
		}
		d[i] = time.Since(start)
	}
	return summarize(d), nil
}

// AckLatencyOf starts a fresh engram of roles with sync policy (""
// for the default), times n single events with AckLatency, stops it, and
// returns the latencies with the policy it ran under.
func AckLatencyOf(ctx context.Context, roles app.Roles, sync string, n int) (Latency, string, error) {
	e, err := StartRoles(ctx, roles, func(c *Config) {
		if sync != "" {
			c.NATS.Sync = sync
		}
	})
	if err != nil {
		return Latency{}, "", err
	}
	defer e.Close()
	l, err := AckLatency(ctx, e, n)
	return l, e.App.Config.NATS.Sync, err
}

// JetStreamAckLatency publishes AckLatency's events one after another
// straight to a JetStream of its own with sync policy and times each
// acknowledgement: the floor engram's ack latency stands on.
func JetStreamAckLatency(ctx context.Context, sync stream.Sync, n int) (Latency, error) {
	r, err := stream.OpenRateStream(ctx, sync, nil, 1)
	if err != nil {
		return Latency{}, err
	}
	defer r.Close()
	d := make([]time.Duration, n)
	for i, raw := range ackEvents(n) {
		if d[i], err = r.Publish(ctx, [][]byte{raw}); err != nil {
			return Latency{}, err
		}
	}
	return summarize(d), nil
}

// ackEvents are the single events the ack latencies are timed with.
func ackEvents(n int) []json.RawMessage {
	raws, _ := turnEvents(newCorpus(2), "ack", "u1", 0, n, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
	return raws
}
