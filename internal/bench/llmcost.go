package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram/internal/locomo"
	"github.com/engramhq/engram/internal/memory"
)

// chatServer is an OpenAI-compatible chat-completions endpoint for the
// benchmark. It answers with a few facts drawn from the turns it was
// shown, and reports usage the way a server does: tokens of the prompt it
// received and of the reply it sent (engram's CJK-aware estimate).
type chatServer struct {
	*httptest.Server
	// delay is the model's latency: every answer waits this long.
	delay              time.Duration
	mu                 sync.Mutex
	calls              int
	prompt, completion int
}

func newChatServer() *chatServer {
	cs := &chatServer{}
	cs.Server = httptest.NewServer(http.HandlerFunc(cs.serve))
	return cs
}

func (cs *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if cs.delay > 0 {
		select {
		case <-time.After(cs.delay):
		case <-r.Context().Done():
			return
		}
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct{ Role, Content string }
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	prompt := 0
	var turns []string
	for _, m := range req.Messages {
		prompt += 4 + memory.EstimateTokens(m.Content)
		if m.Role == "user" {
			for _, line := range strings.Split(m.Content, "\n") {
				if strings.HasPrefix(line, "[") && strings.Contains(line, "] user:") {
					turns = append(turns, line[strings.Index(line, ":")+1:])
				}
			}
		}
	}
	// One fact per five user turns, as a model that extracts sparingly does.
	type fact struct {
		Subject, Predicate, Content, Kind, Category string
		Importance, Confidence                      float64
	}
	var facts []fact
	for i := 0; i < len(turns); i += 5 {
		c := []rune(strings.TrimSpace(turns[i]))
		facts = append(facts, fact{"user", "note", string(c[:min(len(c), 80)]), "fact", "event", 0.5, 0.9})
	}
	content, _ := json.Marshal(map[string]any{"facts": facts})
	completion := memory.EstimateTokens(string(content))
	cs.mu.Lock()
	cs.calls++
	cs.prompt += prompt
	cs.completion += completion
	cs.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{ // a client gone is the bench's own to notice
		"id": "chatcmpl-bench", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(content)}, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
}

// LLMCost is what extraction cost per 1,000 turns.
type LLMCost struct {
	Turns                          int
	Calls, Prompt, Completion      int
	CallsPerK, PromptPerK, CompPer float64
}

// ExtractionCost loads LoCoMo with an LLM configured (the benchmark's own
// OpenAI-compatible server), ends every session as an agent would, waits
// until every turn is extracted, and reports the LLM calls and tokens.
func ExtractionCost(ctx context.Context, ds *locomo.Dataset) (*LLMCost, error) {
	cs := newChatServer()
	defer cs.Close()
	e, err := StartWith(ctx, func(c *Config) {
		c.LLM.BaseURL, c.LLM.Model = cs.URL+"/v1", "bench-model"
	})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	if err := LoadLoCoMo(ctx, e, ds, true); err != nil {
		return nil, err
	}
	if err := waitUnextracted(ctx, e); err != nil {
		return nil, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := ds.Stats.Turns
	k := float64(n) / 1000
	return &LLMCost{Turns: n, Calls: cs.calls, Prompt: cs.prompt, Completion: cs.completion,
		CallsPerK: float64(cs.calls) / k, PromptPerK: float64(cs.prompt) / k, CompPer: float64(cs.completion) / k}, nil
}
