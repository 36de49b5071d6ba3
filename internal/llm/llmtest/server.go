package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm"
)

// DefaultModel is the model name Config uses.
const DefaultModel = "llmtest-model"

// DefaultDims is the length of embedding vectors unless SetDims or the
// request's "dimensions" says otherwise.
const DefaultDims = 256

// waitTimeout bounds WaitCalls, so a test that waits for a call that never
// comes fails instead of hanging.
const waitTimeout = 10 * time.Second

// Server is a running OpenAI-compatible test server.
type Server struct {
	// URL is the API base, including /v1, as llm.Config.BaseURL takes it.
	URL string

	t         testing.TB
	srv       *httptest.Server
	done      chan struct{} // closed when the server shuts down; releases stalls
	closeOnce sync.Once

	mu            sync.Mutex
	chatQueue     []Step
	embedQueue    []Step
	chatDefault   Step // nil: answer with reply
	embedDefault  Step // nil: deterministic vectors
	reply         func(ChatRequest) string
	apiKey        string
	rejected      []string
	dims          int
	calls         int
	embedCalls    int
	requests      []ChatRequest
	embedRequests []EmbedRequest
	usage         llm.Usage
	changed       chan struct{} // closed and replaced whenever a call arrives
}

// New starts a server and closes it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		t:       t,
		done:    make(chan struct{}),
		dims:    DefaultDims,
		reply:   func(ChatRequest) string { return "{}" },
		changed: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.handleChat)
	mux.HandleFunc("/v1/embeddings", s.handleEmbed)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "", "Unknown request URL: "+r.Method+" "+r.URL.Path)
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Close shuts the server down, releasing stalled requests first. Later
// requests fail to connect. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Config returns an llm.Config for this server with a timeout short enough
// for tests.
func (s *Server) Config() llm.Config {
	return llm.Config{BaseURL: s.URL, Model: DefaultModel, Timeout: 5 * time.Second, Temperature: llm.DefaultTemperature}
}

// HTTPClient returns a client whose idle connections are closed with the
// server.
func (s *Server) HTTPClient() *http.Client { return s.srv.Client() }

// Reply sets how chat requests are answered when nothing is queued: fn's
// result is the assistant's content. The default is "{}". fn is called from
// the server's goroutines, possibly at the same time.
func (s *Server) Reply(fn func(req ChatRequest) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply = fn
	s.chatDefault = nil
}

// Enqueue scripts the next chat requests: each takes one step, in order.
func (s *Server) Enqueue(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatQueue = append(s.chatQueue, steps...)
}

// EnqueueEmbed scripts the next embeddings requests.
func (s *Server) EnqueueEmbed(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedQueue = append(s.embedQueue, steps...)
}

// Always makes step the answer to every chat request once the queue is
// empty (a server that is down, say). nil restores normal answers.
func (s *Server) Always(step Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatDefault = step
}

// AlwaysEmbed is Always for embeddings.
func (s *Server) AlwaysEmbed(step Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedDefault = step
}

// Pending returns how many scripted steps (chat and embeddings) are unused.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.chatQueue) + len(s.embedQueue)
}

// RequireKey makes the server answer 401, as OpenAI does, to requests that
// do not carry "Authorization: Bearer key".
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// RejectParams makes the server refuse chat requests that carry any of the
// named fields ("response_format", "temperature", "max_tokens"), the way
// llama.cpp, older servers and OpenAI's reasoning models do.
func (s *Server) RejectParams(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejected = append(s.rejected, names...)
}

// SetDims sets the length of embedding vectors.
func (s *Server) SetDims(n int) {
	if n < 1 {
		s.t.Fatalf("llmtest: SetDims(%d): want at least 1", n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dims = n
}

// Calls returns how many chat requests arrived, valid or not.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// EmbedCalls returns how many embeddings requests arrived, valid or not.
func (s *Server) EmbedCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedCalls
}

// Requests returns the chat requests that could be decoded, in arrival order.
func (s *Server) Requests() []ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// EmbedRequests returns the embeddings requests that could be decoded.
func (s *Server) EmbedRequests() []EmbedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.embedRequests)
}

// Usage returns the sum of the usage the server reported in complete
// successful responses, chat and embeddings.
func (s *Server) Usage() llm.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

// WaitCalls blocks until at least n chat requests have arrived, failing the
// test after 10 s. Call it from the test's goroutine.
func (s *Server) WaitCalls(n int) {
	s.t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		got, changed := s.calls, s.changed
		s.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			s.t.Fatalf("llmtest: waited %s for %d chat calls, got %d", waitTimeout, n, got)
		}
	}
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls++
	s.notifyLocked()
	s.mu.Unlock()
	if !s.admit(w, r) {
		return
	}
	req, err := decodeChat(r)
	if err != nil {
		writeInvalid(w, err)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	rejected := slices.Clone(s.rejected)
	s.mu.Unlock()
	if rejectParam(w, req, rejected) {
		return
	}
	c := &Call{HTTP: r, Chat: &req, s: s}
	s.next(c)(w, c)
}

func (s *Server) handleEmbed(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.embedCalls++
	s.notifyLocked()
	s.mu.Unlock()
	if !s.admit(w, r) {
		return
	}
	req, err := decodeEmbed(r)
	if err != nil {
		writeInvalid(w, err)
		return
	}
	s.mu.Lock()
	s.embedRequests = append(s.embedRequests, req)
	s.mu.Unlock()
	c := &Call{HTTP: r, Embed: &req, s: s}
	s.next(c)(w, c)
}

// admit checks the method, content type and key, answering if they are wrong.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "",
			"Not allowed to "+r.Method+" on "+r.URL.Path+". (HINT: Perhaps you meant to use a different HTTP method?)")
		return false
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "",
			"Content-Type must be application/json, got "+fmt.Sprintf("%q", ct))
		return false
	}
	s.mu.Lock()
	key := s.apiKey
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "",
			"Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.")
		return false
	}
	return true
}

// next takes the step for c: the head of its queue, else the default.
func (s *Server) next(c *Call) Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	queue := &s.chatQueue
	if c.Embed != nil {
		queue = &s.embedQueue
	}
	if len(*queue) > 0 {
		step := (*queue)[0]
		*queue = (*queue)[1:]
		return step
	}
	return s.defaultLocked(c)
}

func (s *Server) defaultLocked(c *Call) Step {
	if c.Embed != nil {
		if s.embedDefault != nil {
			return s.embedDefault
		}
		return answer
	}
	if s.chatDefault != nil {
		return s.chatDefault
	}
	return answer
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Call is one request as a Step sees it: exactly one of Chat and Embed is set.
type Call struct {
	HTTP  *http.Request
	Chat  *ChatRequest
	Embed *EmbedRequest
	s     *Server
}

// wait holds the call for d, returning false early if the client goes away
// or the server shuts down.
func (c *Call) wait(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-c.HTTP.Context().Done():
		return false
	case <-c.s.done:
		return false
	}
}

// success builds the normal answer to c and the usage it reports.
func (c *Call) success() ([]byte, llm.Usage) {
	if c.Embed != nil {
		return c.s.embeddings(c.Embed, false)
	}
	c.s.mu.Lock()
	reply := c.s.reply
	c.s.mu.Unlock()
	return completion(c.Chat, reply(*c.Chat), "stop")
}

// deliver writes a complete successful response and counts its usage.
func (c *Call) deliver(w http.ResponseWriter, body []byte, u llm.Usage) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(body); err != nil {
		return // the client went away; it was not billed
	}
	c.s.mu.Lock()
	c.s.usage = c.s.usage.Add(u)
	c.s.mu.Unlock()
}

// misuse reports a step used on the wrong endpoint.
func (c *Call) misuse(w http.ResponseWriter, step string) {
	c.s.t.Errorf("llmtest: %s step used for a %s request", step, c.HTTP.URL.Path)
	writeError(w, http.StatusInternalServerError, "server_error", "", "", "llmtest: "+step+" step misused")
}

func completion(req *ChatRequest, content, finish string) ([]byte, llm.Usage) {
	u := llm.Usage{PromptTokens: Tokens(req.Prompt()), CompletionTokens: Tokens(content)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	model := req.Model
	body := map[string]any{
		"id":      "chatcmpl-llmtest",
		"object":  "chat.completion",
		"created": 1735689600,
		"model":   model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"logprobs":      nil,
			"finish_reason": finish,
		}},
		"usage": u,
	}
	data, err := json.Marshal(body)
	if err != nil {
		panic(err) // only strings and numbers: cannot fail
	}
	return data, u
}

// Tokens is how many tokens the server reports for s: one per four bytes,
// rounded up.
func Tokens(s string) int { return (len(s) + 3) / 4 }

// writeError writes OpenAI's error envelope.
func writeError(w http.ResponseWriter, status int, typ, code, param, message string) {
	e := map[string]any{"message": message, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	if param != "" {
		e["param"] = param
	}
	data, _ := json.Marshal(map[string]any{"error": e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data) // a client that hung up is what some tests make
}

// invalidError is a request the server refuses, naming the field.
type invalidError struct{ param, message string }

func (e *invalidError) Error() string { return e.message }

func writeInvalid(w http.ResponseWriter, err error) {
	var inv *invalidError
	if errors.As(err, &inv) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", inv.param, inv.message)
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", "", "", err.Error())
}

// decodeStrict decodes a request body, refusing unknown fields as OpenAI does.
func decodeStrict(r *http.Request, v any) error {
	body := http.MaxBytesReader(nil, r.Body, 32<<20)
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(body); err != nil {
		return &invalidError{"", "could not read the request body: " + err.Error()}
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			name = strings.Trim(name, `"`)
			return &invalidError{name, "Unrecognized request argument supplied: " + name}
		}
		return &invalidError{"", "We could not parse the JSON body of your request: " + err.Error()}
	}
	if dec.More() {
		return &invalidError{"", "We could not parse the JSON body of your request: trailing data"}
	}
	return nil
}
