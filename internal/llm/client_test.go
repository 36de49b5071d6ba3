package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llm/llmtest"
)

// newClient starts a test server and a Client for it, after letting edit
// adjust the Config.
func newClient(t *testing.T, edit func(*llm.Config)) (*llmtest.Server, *llm.Client) {
	t.Helper()
	srv := llmtest.New(t)
	cfg := srv.Config()
	if edit != nil {
		edit(&cfg)
	}
	c, err := llm.New(cfg, srv.HTTPClient())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return srv, c
}

var prompt = []llm.Message{
	{Role: llm.RoleSystem, Content: "Extract facts as JSON."},
	{Role: llm.RoleUser, Content: "I moved to Lisbon last spring and I drink green tea."},
}

// asError fails the test unless err is an *llm.Error.
func asError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err=%v (%T), want *llm.Error", err, err)
	}
	return e
}

func TestChatSuccess(t *testing.T) {
	srv, c := newClient(t, func(cfg *llm.Config) { cfg.MaxTokens = 512 })
	srv.Reply(func(req llmtest.ChatRequest) string {
		if strings.Contains(req.LastUser(), "Lisbon") {
			return `{"facts":["lives in Lisbon"]}`
		}
		return `{"facts":[]}`
	})

	resp, err := c.Chat(t.Context(), prompt, true)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if got, want := resp.Content, `{"facts":["lives in Lisbon"]}`; got != want {
		t.Errorf("Content=%q, want %q", got, want)
	}
	if got, want := resp.Usage, srv.Usage(); got != want {
		t.Errorf("Usage=%+v, want what the server reported, %+v", got, want)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Errorf("Usage=%+v, want non-zero and consistent", resp.Usage)
	}
	if resp.Model != llmtest.DefaultModel || resp.FinishReason != "stop" {
		t.Errorf("Model=%q FinishReason=%q, want %q stop", resp.Model, resp.FinishReason, llmtest.DefaultModel)
	}

	req := srv.Requests()[0]
	if !req.JSONMode() {
		t.Error("jsonMode=true did not send response_format json_object")
	}
	if req.Model != llmtest.DefaultModel || len(req.Messages) != 2 || req.Messages[1] != prompt[1] {
		t.Errorf("request model=%q messages=%+v", req.Model, req.Messages)
	}
	if req.Temperature == nil || *req.Temperature != llm.DefaultTemperature {
		t.Errorf("temperature=%v, want %v", req.Temperature, llm.DefaultTemperature)
	}
	if req.MaxTokens == nil || *req.MaxTokens != 512 || req.MaxCompletionTokens != nil {
		t.Errorf("max_tokens=%v max_completion_tokens=%v, want 512 and none", req.MaxTokens, req.MaxCompletionTokens)
	}
	if got, want := req.Header.Get("User-Agent"), "engram"; got != want {
		t.Errorf("User-Agent=%q, want %q", got, want)
	}

	if _, err := c.Chat(t.Context(), prompt, false); err != nil {
		t.Fatal(err)
	}
	if req := srv.Requests()[1]; req.ResponseFormat != nil || req.MaxTokens == nil {
		t.Errorf("jsonMode=false: response_format=%+v, want none", req.ResponseFormat)
	}
}

func TestChatOmitsMaxTokensWhenZero(t *testing.T) {
	srv, c := newClient(t, nil)
	if _, err := c.Chat(t.Context(), prompt, false); err != nil {
		t.Fatal(err)
	}
	if req := srv.Requests()[0]; req.MaxTokens != nil || req.MaxCompletionTokens != nil {
		t.Errorf("max_tokens=%v, want none when MaxTokens is 0", req.MaxTokens)
	}
}

func TestBaseURLTrailingSlash(t *testing.T) {
	srv, c := newClient(t, func(cfg *llm.Config) { cfg.BaseURL += "/" })
	if _, err := c.Chat(t.Context(), prompt, false); err != nil {
		t.Fatalf("Chat with trailing slash: %v", err)
	}
	if got, want := srv.Calls(), 1; got != want {
		t.Errorf("Calls()=%d, want %d", got, want)
	}
}

func TestAuthorizationHeader(t *testing.T) {
	t.Run("no key, no header", func(t *testing.T) {
		srv, c := newClient(t, nil)
		if _, err := c.Chat(t.Context(), prompt, false); err != nil {
			t.Fatal(err)
		}
		if h, ok := srv.Requests()[0].Header["Authorization"]; ok {
			t.Errorf("Authorization=%q sent without a key", h)
		}
	})
	t.Run("key as bearer", func(t *testing.T) {
		srv, c := newClient(t, func(cfg *llm.Config) { cfg.APIKey = "sk-right" })
		srv.RequireKey("sk-right")
		if _, err := c.Chat(t.Context(), prompt, false); err != nil {
			t.Fatalf("Chat with the right key: %v", err)
		}
		if got, want := srv.Requests()[0].Header.Get("Authorization"), "Bearer sk-right"; got != want {
			t.Errorf("Authorization=%q, want %q", got, want)
		}
	})
	t.Run("wrong key is Auth", func(t *testing.T) {
		srv, c := newClient(t, func(cfg *llm.Config) { cfg.APIKey = "sk-wrong" })
		srv.RequireKey("sk-right")
		_, err := c.Chat(t.Context(), prompt, false)
		if e := asError(t, err); e.Kind != llm.Auth || e.Temporary() {
			t.Errorf("err=%v, want a permanent Auth error", err)
		}
	})
}

func TestJSONModeFallback(t *testing.T) {
	srv, c := newClient(t, nil)
	srv.RejectParams("response_format")
	srv.Reply(func(req llmtest.ChatRequest) string { return `{"ok":true}` })

	resp, err := c.Chat(t.Context(), prompt, true)
	if err != nil {
		t.Fatalf("Chat against a server without JSON mode: %v", err)
	}
	if got, want := resp.Content, `{"ok":true}`; got != want {
		t.Errorf("Content=%q, want %q", got, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[0].JSONMode() || reqs[1].ResponseFormat != nil {
		t.Fatalf("requests=%d, want one with response_format then one without", len(reqs))
	}

	// The Client remembers: the next call goes straight through.
	if _, err := c.Chat(t.Context(), prompt, true); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.Calls(), 3; got != want {
		t.Errorf("Calls()=%d, want %d", got, want)
	}
}

func TestJSONModeFallbackLlamaCppMessage(t *testing.T) {
	srv, c := newClient(t, nil)
	srv.Enqueue(llmtest.Status(http.StatusBadRequest, `response_format type must be one of "text" or "json_object", but got: json_object`))
	if _, err := c.Chat(t.Context(), prompt, true); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[1].ResponseFormat != nil {
		t.Fatalf("requests=%+v, want a retry without response_format", reqs)
	}
}

func TestJSONModeKeptWhenPromptLacksTheWordJSON(t *testing.T) {
	srv, c := newClient(t, nil)
	srv.Enqueue(llmtest.Status(http.StatusBadRequest,
		"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."))
	_, err := c.Chat(t.Context(), prompt, true)
	if e := asError(t, err); e.Kind != llm.BadRequest {
		t.Fatalf("err=%v, want BadRequest", err)
	}
	if got, want := srv.Calls(), 1; got != want {
		t.Errorf("Calls()=%d, want %d: this 400 is the caller's to fix", got, want)
	}
	if _, err := c.Chat(t.Context(), prompt, true); err != nil {
		t.Fatal(err)
	}
	if !srv.Requests()[1].JSONMode() {
		t.Error("JSON mode was dropped for good after an unrelated 400")
	}
}

func TestReasoningModelFallbacks(t *testing.T) {
	srv, c := newClient(t, func(cfg *llm.Config) { cfg.MaxTokens = 100 })
	srv.RejectParams("temperature", "max_tokens")
	if _, err := c.Chat(t.Context(), prompt, true); err != nil {
		t.Fatalf("Chat against a reasoning model: %v", err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if last.Temperature != nil || last.MaxTokens != nil || last.MaxCompletionTokens == nil || *last.MaxCompletionTokens != 100 {
		t.Errorf("last request temperature=%v max_tokens=%v max_completion_tokens=%v, want none, none, 100",
			last.Temperature, last.MaxTokens, last.MaxCompletionTokens)
	}
	if got, want := len(reqs), 3; got != want {
		t.Errorf("requests=%d, want %d (one refusal per field)", got, want)
	}
	if _, err := c.Chat(t.Context(), prompt, true); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.Calls(), 4; got != want {
		t.Errorf("Calls()=%d, want %d: the Client should remember", got, want)
	}
}

func TestConcurrentChats(t *testing.T) {
	srv, c := newClient(t, nil)
	srv.RejectParams("response_format")
	srv.Reply(func(req llmtest.ChatRequest) string { return req.LastUser() })
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			msg := strings.Repeat("x", i+1)
			resp, err := c.Chat(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: msg}}, true)
			if err != nil {
				t.Error(err)
				return
			}
			if resp.Content != msg {
				t.Errorf("Content=%q, want %q", resp.Content, msg)
			}
		})
	}
	wg.Wait()
	if got := srv.Calls(); got < 17 || got > 32 {
		t.Errorf("Calls()=%d, want 16 plus a retry for each request sent before the fallback was learned", got)
	}
}

func TestChatNoMessages(t *testing.T) {
	srv, c := newClient(t, nil)
	_, err := c.Chat(t.Context(), nil, false)
	if e := asError(t, err); e.Kind != llm.BadRequest {
		t.Errorf("err=%v, want BadRequest", err)
	}
	if srv.Calls() != 0 {
		t.Error("an empty conversation was sent")
	}
}

func TestChatCanceledByCaller(t *testing.T) {
	srv, c := newClient(t, nil)
	srv.Enqueue(llmtest.Stall(time.Hour))
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Chat(ctx, prompt, false)
		errc <- err
	}()
	srv.WaitCalls(1)
	cancel()
	err := <-errc
	if e := asError(t, err); e.Kind != llm.Canceled || !e.Temporary() {
		t.Errorf("err=%v, want a Canceled error that is Temporary", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(err, context.Canceled)=false for %v", err)
	}
}

func TestNew(t *testing.T) {
	if _, err := llm.New(llm.Default(), nil); !errors.Is(err, llm.ErrDisabled) {
		t.Errorf("New(Default())=%v, want ErrDisabled", err)
	}
	var ce *llm.ConfigError
	if _, err := llm.New(llm.Config{BaseURL: "http://localhost:11434/v1"}, nil); !errors.As(err, &ce) || ce.Field != "Model" {
		t.Errorf("New without a model: %v, want a ConfigError naming Model", err)
	}
}
