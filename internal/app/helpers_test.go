package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// testConfig is a config for a test process: its own data dir, HTTP on a
// free port, NATS in-process only.
func testConfig(t *testing.T, dir string) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.Listen = ""
	cfg.ShutdownTimeout = 10 * time.Second
	return cfg
}

// startApp opens an App and closes it when the test ends.
func startApp(t *testing.T, cfg config.Config, roles Roles) *App {
	t.Helper()
	a := New(cfg, roles, zaptest.NewLogger(t))
	if err := a.Open(t.Context()); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	return a
}

// stopApp closes a; what NATS refused engram's own bus users meanwhile
// fails the test: each worker kind's permissions must cover what it does
// (the refusals are logged with their subjects).
func stopApp(t *testing.T, a *App) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
	if n := a.denied.Load(); n > 0 {
		t.Errorf("NATS refused %d operations of this process's bus users (logged as \"nats refused\")", n)
	}
}

// ce builds a structured-mode turn.recorded event.
func turnEvent(id, user, session string, index int, role, content string) map[string]any {
	return map[string]any{
		"specversion": "1.0", "id": id, "source": "test/agent", "type": "turn.recorded",
		"user": user, "time": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(index) * time.Second).Format(time.RFC3339Nano),
		"data": map[string]any{"session_id": session, "turn_index": index, "role": role, "content": content},
	}
}

type httpResult struct {
	Status int
	Body   map[string]any
	Raw    string
}

func do(t *testing.T, method, u, contentType string, body []byte, hdr map[string]string) httpResult {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v // the client sends this, not a Host in Header
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer quiet.Close(resp.Body)
	raw, _ := io.ReadAll(resp.Body)
	checkResponse(t, method, u, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return httpResult{Status: resp.StatusCode, Body: m, Raw: string(raw)}
}

func postEvent(t *testing.T, a *App, ev any) httpResult {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events", "application/cloudevents+json", b, nil)
}

func postBatch(t *testing.T, a *App, evs ...any) httpResult {
	t.Helper()
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events", "application/cloudevents-batch+json", b, nil)
}

func mustAccept(t *testing.T, r httpResult) {
	t.Helper()
	if r.Status != http.StatusAccepted {
		t.Fatalf("status %d, want 202: %s", r.Status, r.Raw)
	}
}

type searchHit struct {
	ID        string  `json:"id"`
	Kind      string  `json:"kind"`
	Content   string  `json:"content"`
	Score     float64 `json:"score"`
	SessionID string  `json:"session_id"`
	TurnIndex int     `json:"turn_index"`
}

func searchHTTP(t *testing.T, a *App, ns, user, q string) []searchHit {
	t.Helper()
	v := url.Values{"namespace": {ns}, "user": {user}, "q": {q}}
	r := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/search?"+v.Encode(), "", nil, nil)
	if r.Status != 200 {
		t.Fatalf("search %q: status %d: %s", q, r.Status, r.Raw)
	}
	var out struct{ Results []searchHit }
	if err := json.Unmarshal([]byte(r.Raw), &out); err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return out.Results
}

// waitProjected waits until the read model has applied seq.
func waitProjected(t *testing.T, a *App, seq uint64) {
	t.Helper()
	wait.For(t, fmt.Sprintf("projection of seq %d", seq), func() error {
		got, err := a.Store().LastSeq(t.Context())
		if err == nil && got < seq {
			err = fmt.Errorf("the read model is at seq %d", got)
		}
		return err
	})
}

func lastSeqOf(r httpResult) uint64 {
	var top uint64
	for _, res := range r.Body["results"].([]any) {
		if s, ok := res.(map[string]any)["seq"].(float64); ok {
			top = max(top, uint64(s))
		}
	}
	return top
}

func countTurns(t *testing.T, a *App, scope memory.Scope) int {
	t.Helper()
	st := userStore(a, scope)
	if st == nil {
		return 0 // a partitioned retriever keeping no copy of scope's partition yet
	}
	n, err := st.CountTurns(t.Context(), scope)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func removeIfExists(path string) error {
	err := os.Remove(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// waitSettled waits until nothing is in flight: every consumer has
// delivered and had acknowledged all it will get, and the read model has
// applied the end of the stream — and that has held for longer than any
// retry delay a test configures, so a nak'ed message waiting for its
// redelivery is not mistaken for calm.
func waitSettled(t *testing.T, a *App) uint64 {
	t.Helper()
	var last uint64
	var calmSince time.Time
	wait.Until(t, "workers to settle", func() bool {
		busy := func() bool { calmSince = time.Time{}; return false }
		s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
		if err != nil {
			return busy()
		}
		si, err := s.Info(t.Context())
		if err != nil {
			return busy()
		}
		for cons := range s.ListConsumers(t.Context()).Info() {
			if cons.NumPending > 0 || cons.NumAckPending > 0 || cons.NumRedelivered > 0 && cons.NumAckPending > 0 {
				return busy()
			}
		}
		if a.Store() != nil {
			got, err := a.Store().LastSeq(t.Context())
			if err != nil || got < si.State.LastSeq {
				return busy()
			}
		}
		if si.State.LastSeq != last {
			last = si.State.LastSeq
			return busy()
		}
		if calmSince.IsZero() {
			calmSince = time.Now()
		}
		return time.Since(calmSince) > 300*time.Millisecond
	})
	return last
}

// postMemory adds a memory through POST /v1/memories (a memory.added event).
func postMemory(t *testing.T, a *App, body string) {
	t.Helper()
	if r := do(t, "POST", "http://"+a.HTTPAddr()+"/v1/memories", "application/json", []byte(body), nil); r.Status != 202 {
		t.Fatalf("add memory: %d %s", r.Status, r.Raw)
	}
}

// jsOf is a's JetStream, for a test to read or change the streams with:
// the operator's when a holds that credential (its embedded server),
// else its main bus user's.
func jsOf(a *App) stream.JetStream {
	if a.op != nil {
		return a.op.js
	}
	return a.js
}
