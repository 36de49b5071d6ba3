package llmtest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/quiet"
)

// These tests speak to the server with plain net/http, not the llm client.

type wireResponse struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

const chatBody = `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello there"}],"response_format":{"type":"json_object"},"temperature":0.3,"max_tokens":50}`

func post(t *testing.T, srv *llmtest.Server, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer quiet.Close(resp.Body)
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp, data
}

func decode(t *testing.T, data []byte) wireResponse {
	t.Helper()
	var r wireResponse
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("decode %q: %v", data, err)
	}
	return r
}

func TestChatFollowsWireFormat(t *testing.T) {
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string { return `{"echo":"` + req.LastUser() + `"}` })

	resp, data := post(t, srv, "/chat/completions", chatBody)
	if got, want := resp.StatusCode, http.StatusOK; got != want {
		t.Fatalf("status=%d, want %d: %s", got, want, data)
	}
	if got, want := resp.Header.Get("Content-Type"), "application/json"; got != want {
		t.Errorf("Content-Type=%q, want %q", got, want)
	}
	r := decode(t, data)
	if got, want := r.Object, "chat.completion"; got != want {
		t.Errorf("object=%q, want %q", got, want)
	}
	if got, want := r.Model, "m"; got != want {
		t.Errorf("model=%q, want %q", got, want)
	}
	if len(r.Choices) != 1 {
		t.Fatalf("choices=%d, want 1", len(r.Choices))
	}
	c := r.Choices[0]
	if got, want := c.Message.Content, `{"echo":"hello there"}`; got != want {
		t.Errorf("content=%q, want %q", got, want)
	}
	if c.Message.Role != "assistant" || c.FinishReason != "stop" || c.Index != 0 {
		t.Errorf("choice=%+v, want assistant, stop, index 0", c)
	}
	wantPrompt := llmtest.Tokens("be brief\nhello there")
	wantCompletion := llmtest.Tokens(c.Message.Content)
	if r.Usage.PromptTokens != wantPrompt || r.Usage.CompletionTokens != wantCompletion ||
		r.Usage.TotalTokens != wantPrompt+wantCompletion {
		t.Errorf("usage=%+v, want prompt %d completion %d", r.Usage, wantPrompt, wantCompletion)
	}
	if got, want := srv.Usage().TotalTokens, r.Usage.TotalTokens; got != want {
		t.Errorf("server Usage().TotalTokens=%d, want %d", got, want)
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("Requests()=%d, want 1", len(reqs))
	}
	req := reqs[0]
	if !req.JSONMode() || req.System() != "be brief" || *req.Temperature != 0.3 || *req.MaxTokens != 50 {
		t.Errorf("recorded request=%+v", req)
	}
}

func TestChatRejectsInvalidRequests(t *testing.T) {
	cases := []struct {
		name, body, param string
	}{
		{"no model", `{"messages":[{"role":"user","content":"x"}]}`, "model"},
		{"no messages", `{"model":"m","messages":[]}`, "messages"},
		{"unknown field", `{"model":"m","messages":[{"role":"user","content":"x"}],"temprature":1}`, "temprature"},
		{"bad role", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role"},
		{"bad response format", `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"yaml"}}`, "response_format.type"},
		{"temperature too high", `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":3}`, "temperature"},
		{"streaming", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`, "stream"},
		{"not json", `{"model":`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(llmtest.OK("unused"))
			resp, data := post(t, srv, "/chat/completions", tc.body)
			if got, want := resp.StatusCode, http.StatusBadRequest; got != want {
				t.Fatalf("status=%d, want %d: %s", got, want, data)
			}
			r := decode(t, data)
			if r.Error == nil || r.Error.Type != "invalid_request_error" || r.Error.Message == "" {
				t.Fatalf("error body=%s, want an invalid_request_error", data)
			}
			if tc.param != "" && (r.Error.Param == nil || *r.Error.Param != tc.param) {
				t.Errorf("param=%v, want %q", r.Error.Param, tc.param)
			}
			if got, want := srv.Pending(), 1; got != want {
				t.Errorf("Pending()=%d, want %d: an invalid request must not use a step", got, want)
			}
			if got, want := srv.Calls(), 1; got != want {
				t.Errorf("Calls()=%d, want %d", got, want)
			}
		})
	}
}

func TestRoutingMethodAndContentType(t *testing.T) {
	srv := llmtest.New(t)
	if resp, _ := post(t, srv, "/completions", chatBody); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: status=%d, want 404", resp.StatusCode)
	}
	resp, err := srv.HTTPClient().Get(srv.URL + "/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	quiet.Close(resp.Body)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status=%d, want 405", resp.StatusCode)
	}
	resp, err = srv.HTTPClient().Post(srv.URL+"/chat/completions", "text/plain", strings.NewReader(chatBody))
	if err != nil {
		t.Fatal(err)
	}
	quiet.Close(resp.Body)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("text/plain: status=%d, want 400", resp.StatusCode)
	}
}

func TestQueueRunsInOrderThenDefault(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(
		llmtest.Status(http.StatusServiceUnavailable, ""),
		llmtest.RateLimit(1500*time.Millisecond),
		llmtest.Completion("cut", "length"),
	)
	resp, data := post(t, srv, "/chat/completions", chatBody)
	if resp.StatusCode != 503 || decode(t, data).Error.Type != "server_error" {
		t.Errorf("first: %d %s, want 503 server_error", resp.StatusCode, data)
	}
	resp, data = post(t, srv, "/chat/completions", chatBody)
	if got, want := resp.Header.Get("Retry-After"), "2"; resp.StatusCode != 429 || got != want {
		t.Errorf("second: %d Retry-After=%q, want 429 %q: %s", resp.StatusCode, got, want, data)
	}
	_, data = post(t, srv, "/chat/completions", chatBody)
	if c := decode(t, data).Choices[0]; c.Message.Content != "cut" || c.FinishReason != "length" {
		t.Errorf("third: %+v, want cut/length", c)
	}
	_, data = post(t, srv, "/chat/completions", chatBody)
	if got, want := decode(t, data).Choices[0].Message.Content, "{}"; got != want {
		t.Errorf("default content=%q, want %q", got, want)
	}
	srv.Always(llmtest.Status(http.StatusBadGateway, "down"))
	if resp, _ := post(t, srv, "/chat/completions", chatBody); resp.StatusCode != http.StatusBadGateway {
		t.Errorf("Always: status=%d, want 502", resp.StatusCode)
	}
	if got, want := srv.Calls(), 5; got != want {
		t.Errorf("Calls()=%d, want %d", got, want)
	}
	// Only the two complete successes count.
	if got, want := srv.Usage().CompletionTokens, llmtest.Tokens("cut")+llmtest.Tokens("{}"); got != want {
		t.Errorf("Usage().CompletionTokens=%d, want %d", got, want)
	}
}

func TestRequireKeyAndRejectParams(t *testing.T) {
	srv := llmtest.New(t)
	srv.RequireKey("sk-test")
	if resp, data := post(t, srv, "/chat/completions", chatBody); resp.StatusCode != 401 || *decode(t, data).Error.Code != "invalid_api_key" {
		t.Fatalf("no key: %d %s, want 401 invalid_api_key", resp.StatusCode, data)
	}

	srv = llmtest.New(t)
	srv.RejectParams("response_format", "max_tokens")
	resp, data := post(t, srv, "/chat/completions", chatBody)
	if r := decode(t, data); resp.StatusCode != 400 || *r.Error.Param != "response_format" {
		t.Fatalf("status=%d body=%s, want 400 naming response_format", resp.StatusCode, data)
	}
	resp, data = post(t, srv, "/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":5}`)
	if r := decode(t, data); resp.StatusCode != 400 || !strings.Contains(r.Error.Message, "max_completion_tokens") {
		t.Fatalf("status=%d body=%s, want 400 pointing at max_completion_tokens", resp.StatusCode, data)
	}
	if resp, data := post(t, srv, "/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":5}`); resp.StatusCode != 200 {
		t.Fatalf("status=%d body=%s, want 200", resp.StatusCode, data)
	}
}

func TestBrokenJSONIsCompleteButInvalid(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.BrokenJSON())
	resp, data := post(t, srv, "/chat/completions", chatBody)
	if resp.StatusCode != 200 || json.Valid(data) || len(data) == 0 {
		t.Fatalf("status=%d valid=%v len=%d, want 200 with invalid JSON", resp.StatusCode, json.Valid(data), len(data))
	}
}

func TestCutShortEndsTheConnectionMidBody(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.CutShort())
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(chatBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("headers should arrive: %v", err)
	}
	defer quiet.Close(resp.Body)
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read body: err=%v, want io.ErrUnexpectedEOF", err)
	}
}

func TestStallLetsGoWhenClientGivesUp(t *testing.T) {
	for _, step := range []struct {
		name string
		step llmtest.Step
	}{{"Stall", llmtest.Stall(time.Hour)}, {"StallMidBody", llmtest.StallMidBody(time.Hour)}} {
		t.Run(step.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(step.step)
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(chatBody))
			req.Header.Set("Content-Type", "application/json")
			resp, err := srv.HTTPClient().Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				quiet.Close(resp.Body)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err=%v, want context.DeadlineExceeded", err)
			}
			// Cleanup's Close must not wait out the hour.
		})
	}
}

func TestStallReleasedByClose(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Stall(time.Hour))
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(chatBody))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			quiet.Close(resp.Body)
		}
		errc <- err
	}()
	srv.WaitCalls(1)
	closed := make(chan struct{})
	go func() {
		srv.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close is blocked by a stalled request")
	}
	if err := <-errc; err != nil { // any outcome will do, as long as it comes
		t.Logf("the stalled request ended with %v", err)
	}
}

func TestStallThenAnswers(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Stall(time.Millisecond))
	srv.Reply(func(llmtest.ChatRequest) string { return "late" })
	_, data := post(t, srv, "/chat/completions", chatBody)
	if got, want := decode(t, data).Choices[0].Message.Content, "late"; got != want {
		t.Fatalf("content=%q, want %q", got, want)
	}
}

// Latency as the Always step answers every request normally, none before
// its latency.
func TestLatencyAlways(t *testing.T) {
	srv := llmtest.New(t)
	srv.Reply(func(llmtest.ChatRequest) string { return "slow" }) // before Always: Reply clears it
	srv.Always(llmtest.Latency(30 * time.Millisecond))
	for range 2 {
		start := time.Now()
		_, data := post(t, srv, "/chat/completions", chatBody)
		if took := time.Since(start); took < 30*time.Millisecond {
			t.Fatalf("answered in %s, before the latency", took)
		}
		if got, want := decode(t, data).Choices[0].Message.Content, "slow"; got != want {
			t.Fatalf("content=%q, want %q", got, want)
		}
	}
}

func TestConcurrentRequests(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.Status(500, ""), llmtest.Status(500, ""))
	const n = 16
	var wg sync.WaitGroup
	codes := make(chan int, n)
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(chatBody))
			req.Header.Set("Content-Type", "application/json")
			resp, err := srv.HTTPClient().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body) // only to let the connection be reused
			quiet.Close(resp.Body)
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	failed := 0
	for c := range codes {
		if c == 500 {
			failed++
		}
	}
	if got, want := failed, 2; got != want {
		t.Errorf("500s=%d, want %d (one per queued step)", got, want)
	}
	if got, want := srv.Calls(), n; got != want {
		t.Errorf("Calls()=%d, want %d", got, want)
	}
	if got, want := len(srv.Requests()), n; got != want {
		t.Errorf("Requests()=%d, want %d", got, want)
	}
}

type embedWire struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func TestEmbeddingsWireFormat(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetDims(32)
	srv.EnqueueEmbed(llmtest.Reversed())
	resp, data := post(t, srv, "/embeddings", `{"model":"e","input":["tea with milk","green tea"]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status=%d: %s", resp.StatusCode, data)
	}
	var r embedWire
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Object != "list" || len(r.Data) != 2 || r.Data[0].Index != 1 || r.Data[1].Index != 0 {
		t.Fatalf("body=%s, want a list in reverse index order", data)
	}
	var v []float32
	if err := json.Unmarshal(r.Data[1].Embedding, &v); err != nil {
		t.Fatal(err)
	}
	if got, want := v, llmtest.Embedding("tea with milk", 32); !equal(got, want) {
		t.Errorf("vector for index 0=%v, want %v", got, want)
	}
	if got, want := r.Usage.PromptTokens, llmtest.Tokens("tea with milk")+llmtest.Tokens("green tea"); got != want {
		t.Errorf("prompt_tokens=%d, want %d", got, want)
	}

	// A single string, base64, and a requested size.
	_, data = post(t, srv, "/embeddings", `{"model":"e","input":"green tea","encoding_format":"base64","dimensions":8}`)
	r = embedWire{}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(r.Data[0].Embedding, &s); err != nil {
		t.Fatalf("embedding=%s, want a base64 string", r.Data[0].Embedding)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 8*4 {
		t.Fatalf("base64 decodes to %d bytes (err %v), want 32", len(b), err)
	}
	if got, want := math.Float32frombits(binary.LittleEndian.Uint32(b)), llmtest.Embedding("green tea", 8)[0]; got != want {
		t.Errorf("first component=%v, want %v", got, want)
	}
	if got, want := srv.EmbedCalls(), 2; got != want {
		t.Errorf("EmbedCalls()=%d, want %d", got, want)
	}
	if reqs := srv.EmbedRequests(); len(reqs) != 2 || len(reqs[1].Input) != 1 || reqs[1].Dimensions != 8 {
		t.Errorf("EmbedRequests()=%+v", reqs)
	}
}

func TestEmbeddingsFailuresAndValidation(t *testing.T) {
	srv := llmtest.New(t)
	srv.EnqueueEmbed(llmtest.Status(503, ""))
	if resp, _ := post(t, srv, "/embeddings", `{"model":"e","input":["x"]}`); resp.StatusCode != 503 {
		t.Errorf("queued failure: status=%d, want 503", resp.StatusCode)
	}
	for _, body := range []string{`{"model":"e","input":[]}`, `{"model":"e","input":[""]}`, `{"input":["x"]}`, `{"model":"e","input":[1,2]}`} {
		if resp, data := post(t, srv, "/embeddings", body); resp.StatusCode != 400 {
			t.Errorf("%s: status=%d, want 400: %s", body, resp.StatusCode, data)
		}
	}
	srv.AlwaysEmbed(llmtest.RateLimit(time.Second))
	if resp, _ := post(t, srv, "/embeddings", `{"model":"e","input":["x"]}`); resp.StatusCode != 429 {
		t.Errorf("AlwaysEmbed: status=%d, want 429", resp.StatusCode)
	}
}

func TestEmbeddingSimilarity(t *testing.T) {
	const dims = llmtest.DefaultDims
	cases := []struct {
		a, b, c string // a is closer to b than to c
	}{
		{"the user prefers green tea", "user likes green tea in the morning", "deploy the kubernetes cluster"},
		{"用户喜欢喝绿茶", "用户每天早上喝绿茶", "部署服务器集群"},
		{"Project Engram uses NATS", "engram project: nats jetstream", "the cat sat on the mat"},
	}
	for _, tc := range cases {
		a, b, c := llmtest.Embedding(tc.a, dims), llmtest.Embedding(tc.b, dims), llmtest.Embedding(tc.c, dims)
		if ab, ac := cosine(a, b), cosine(a, c); ab <= ac+0.2 {
			t.Errorf("cos(%q, %q)=%.2f not clearly above cos(…, %q)=%.2f", tc.a, tc.b, ab, tc.c, ac)
		}
		if n := cosine(a, a); math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: |v|²=%v, want 1", tc.a, n)
		}
	}
	if !equal(llmtest.Embedding("Green TEA", dims), llmtest.Embedding("green tea", dims)) {
		t.Error("Embedding is not case-insensitive")
	}
	if n := cosine(llmtest.Embedding("", dims), llmtest.Embedding("...", dims)); math.Abs(n-1) > 1e-5 {
		t.Errorf("texts with no words: cosine=%v, want the same unit vector", n)
	}
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func equal(a, b []float32) bool {
	return bytes.Equal(floatBytes(a), floatBytes(b))
}

func floatBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}
