package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Each class of bad input gets its own 4xx with an error that names what
// is wrong, and nothing of a rejected request reaches the stream.
func TestBadInputIsRefusedWithANamedError(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.HTTP.MaxEventBytes = 4096
	cfg.HTTP.MaxBatchEvents = 3
	a := startApp(t, cfg, RoleAll)
	url := "http://" + a.HTTPAddr() + "/v1/events"
	good := func() map[string]any { return turnEvent("g-1", "hal", "s1", 0, "user", "hello") }
	enc := func(v any) []byte { b, _ := json.Marshal(v); return b }
	without := func(key string) []byte { e := good(); delete(e, key); return enc(e) }
	with := func(key string, v any) []byte { e := good(); e[key] = v; return enc(e) }

	cases := []struct {
		name        string
		contentType string
		body        []byte
		headers     map[string]string
		status      int
		mention     string // the error message must name this
	}{
		{"missing id", ctCE, without("id"), nil, 400, "id"},
		{"missing source", ctCE, without("source"), nil, 400, "source"},
		{"missing type", ctCE, without("type"), nil, 400, "type"},
		{"missing specversion", ctCE, without("specversion"), nil, 400, "specversion"},
		{"missing user", ctCE, without("user"), nil, 400, "user"},
		{"wrong specversion", ctCE, with("specversion", "0.3"), nil, 400, "specversion"},
		{"unknown type", ctCE, with("type", "turn.deleted"), nil, 400, "type"},
		{"worker-only type", ctCE, enc(map[string]any{"specversion": "1.0", "id": "x", "source": "s", "type": "memory.extracted", "user": "hal",
			"data": map[string]any{"request_id": "r", "session_id": "s", "extractor": "llm", "usage": map[string]int{"prompt_tokens": 0, "completion_tokens": 0},
				"calls": 0, "turns": []int{0}, "candidates": []any{}}}), nil, 400, "workers"},
		{"bad data field", ctCE, with("data", map[string]any{"session_id": "s", "turn_index": 0, "role": "robot", "content": "x"}), nil, 400, "data.role"},
		{"oversized", ctCE, with("data", map[string]any{"session_id": "s", "turn_index": 0, "role": "user", "content": strings.Repeat("长", 2000)}), nil, 413, "limit"},
		{"invalid utf-8", ctCE, []byte(`{"specversion":"1.0","id":"u","source":"s","type":"turn.recorded","user":"hal","data":{"session_id":"s","turn_index":0,"role":"user","content":"` + "\xff\xfe" + `"}}`), nil, 400, "UTF-8"},
		{"bad json", ctCE, []byte(`{"specversion":"1.0",`), nil, 400, "JSON"},
		{"batch not an array", ctBatchCE, enc(good()), nil, 400, "array"},
		{"batch with one bad event", ctBatchCE, enc([]any{good(), turnEvent("g-2", "hal", "s1", 1, "user", ""), turnEvent("g-3", "hal", "s1", 2, "user", "ok")}), nil, 400, "1 of 3"},
		{"batch too long", ctBatchCE, enc([]any{good(), good(), good(), good()}), nil, 413, "limit"},
		{"plain json", "application/json", enc(good()), nil, 415, "cloudevents"},
		{"binary mode missing ce-id", "application/json", []byte(`{"session_id":"s","turn_index":0,"role":"user","content":"x"}`),
			map[string]string{"ce-specversion": "1.0", "ce-source": "s", "ce-type": "turn.recorded", "ce-user": "hal"}, 400, "id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "POST", url, tc.contentType, tc.body, tc.headers)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Raw)
			}
			e, ok := r.Body["error"].(map[string]any)
			if !ok || e["code"] == "" {
				t.Fatalf("no {\"error\":{\"code\",\"message\"}} in %s", r.Raw)
			}
			if msg, _ := e["message"].(string); !strings.Contains(strings.ToLower(msg), strings.ToLower(tc.mention)) {
				t.Fatalf("message %q does not mention %q", msg, tc.mention)
			}
		})
	}

	t.Run("a batch's results name the bad event", func(t *testing.T) {
		r := do(t, "POST", url, ctBatchCE, enc([]any{good(), with("type", "nope")}), nil)
		results := r.Body["results"].([]any)
		if got := results[1].(map[string]any)["status"]; got != "invalid" {
			t.Fatalf("results[1].status = %v", got)
		}
		if got := results[0].(map[string]any)["status"]; got != "ok" {
			t.Fatalf("results[0].status = %v, want ok (valid, not published)", got)
		}
	})

	t.Run("nothing rejected reached the stream", func(t *testing.T) {
		info, err := jsOf(a).Stream(t.Context(), "MEMORY")
		if err != nil {
			t.Fatal(err)
		}
		si, err := info.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if si.State.Msgs != 0 {
			t.Fatalf("stream holds %d messages after only rejected requests", si.State.Msgs)
		}
	})

	t.Run("binary mode is accepted", func(t *testing.T) {
		r := do(t, "POST", url, "application/json", []byte(`{"session_id":"s","turn_index":0,"role":"user","content":"二进制模式"}`),
			map[string]string{"ce-specversion": "1.0", "ce-id": "b-1", "ce-source": "agent", "ce-type": "turn.recorded", "ce-user": "hal"})
		if r.Status != http.StatusAccepted {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
		waitProjected(t, a, lastSeqOf(r))
		if hits := searchHTTP(t, a, "default", "hal", "模式"); len(hits) != 1 {
			t.Fatalf("binary-mode event not searchable")
		}
	})

	t.Run("search without user", func(t *testing.T) {
		r := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/search?q=x", "", nil, nil)
		if r.Status != 400 || !strings.Contains(r.Raw, "user") {
			t.Fatalf("status %d: %s", r.Status, r.Raw)
		}
	})
	t.Run("hostile search strings are searched as text", func(t *testing.T) {
		for _, q := range []string{`c++`, `-foo`, `AND`, `content:x`, `*`, `"unbalanced`, `NEAR(a b)`, `a OR`, `)(`, "\x00"} {
			r := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/search?user=hal&q="+urlQuery(q), "", nil, nil)
			if r.Status != 200 {
				t.Fatalf("q=%q: status %d: %s", q, r.Status, r.Raw)
			}
		}
	})
}

const (
	ctCE      = "application/cloudevents+json"
	ctBatchCE = "application/cloudevents-batch+json"
)

func urlQuery(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		b.WriteString("%")
		b.WriteString(strings.ToUpper(string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])))
	}
	return b.String()
}
