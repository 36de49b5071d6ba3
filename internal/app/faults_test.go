package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
)

// A reply with a NUL in a subject and an ESC in a project costs those
// bytes, not the request: the facts are stored, nothing is dead-lettered.
func TestControlCharactersInAReplyHeal(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	srv.Reply(func(llmtest.ChatRequest) string {
		return `{"facts":[{"subject":"us` + "\\u0000" + `er","predicate":"likes","content":"likes green tea",` +
			`"kind":"preference","category":"config","project":"at` + "\\u001b" + `[31mlas","importance":0.6,"confidence":0.95}]}`
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	a := startApp(t, cfg, RoleAll)
	mustAccept(t, postBatch(t, a, turnEvent("c-0", "lu", "s1", 0, "user", "I like green tea"), endEvent("c-e", "lu", "s1", 1)))
	waitSettled(t, a)
	mems := listMemories(t, a, "lu", "")
	if len(mems) != 1 || mems[0].Subject != "user" || strings.ContainsAny(mems[0].Project, "\x00\x1b") {
		t.Fatalf("memories = %+v", mems)
	}
	if dls, err := stream.ListDeadLetters(t.Context(), jsOf(a), stream.DLQFilter{}); err != nil || len(dls) != 0 {
		t.Fatalf("dead letters: %+v, %v", dls, err)
	}
}

// A Retry-After of an hour is capped: the request is tried again within
// the configured cap, not an hour later.
func TestRetryAfterIsCapped(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	srv.Enqueue(llmtest.RateLimit(time.Hour))
	srv.Reply(func(llmtest.ChatRequest) string {
		return `{"facts":[{"subject":"user","predicate":"likes","content":"likes oolong","kind":"preference","category":"config","importance":0.6,"confidence":0.95}]}`
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	cfg.LLM.MaxRetryAfter = 50 * time.Millisecond
	a := startApp(t, cfg, RoleAll)
	mustAccept(t, postBatch(t, a, turnEvent("r-0", "lu", "s1", 0, "user", "I like oolong"), endEvent("r-e", "lu", "s1", 1)))
	wait.For(t, "the model's memory after a capped Retry-After", func() error {
		mems := listMemories(t, a, "lu", "")
		if len(mems) == 1 && mems[0].Source == "llm" {
			return nil
		}
		return fmt.Errorf("memories %+v, want one from the model", mems)
	})
	if got := srv.Calls(); got != 2 {
		t.Fatalf("%d LLM calls, want 2 (one rate-limited)", got)
	}
}
