package llm_test

import (
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llm/llmtest"
)

// Observe sees each call once, with its tokens, or with the kind of its
// failure.
func TestObserve(t *testing.T) {
	var mu sync.Mutex
	var calls []llm.Call
	srv, c := newClient(t, func(cfg *llm.Config) {
		cfg.Observe = func(c llm.Call) { mu.Lock(); calls = append(calls, c); mu.Unlock() }
	})
	if _, err := c.Chat(t.Context(), prompt, false); err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.RateLimit(time.Second))
	if _, err := c.Chat(t.Context(), prompt, false); err == nil {
		t.Fatal("rate limited chat succeeded")
	}
	if _, _, err := c.Embed(t.Context(), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 3 {
		t.Fatalf("%d calls observed, want 3: %+v", len(calls), calls)
	}
	if c := calls[0]; c.Op != "chat" || c.ErrKind != "" || c.Usage.PromptTokens == 0 || c.Duration <= 0 {
		t.Errorf("chat = %+v", c)
	}
	if c := calls[1]; c.Op != "chat" || c.ErrKind != llm.RateLimited.String() {
		t.Errorf("rate-limited chat = %+v", c)
	}
	if c := calls[2]; c.Op != "embed" || c.ErrKind != "" || c.Usage.PromptTokens == 0 {
		t.Errorf("embed = %+v", c)
	}
}
