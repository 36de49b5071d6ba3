package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"time"

	"github.com/engramhq/engram/internal/llm/llmtest"
)

// embedDims is the length of the test embedding server's vectors.
const embedDims = 256

// newEmbedServer is an OpenAI-compatible embeddings endpoint answering
// with llmtest.Embedding: a hashed bag of the text's words (and of its
// Chinese characters and their pairs), L2-normalised. Its vectors encode
// which words a text shares with another, not what it means: a lexical
// stand-in that is deterministic, for checking that fusing vectors with
// full text never loses to either alone.
func newEmbedServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string          `json:"model"`
			Input json.RawMessage `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		var inputs []string
		if json.Unmarshal(req.Input, &inputs) != nil {
			var one string
			if json.Unmarshal(req.Input, &one) != nil {
				http.Error(w, `{"error":{"message":"input"}}`, http.StatusBadRequest)
				return
			}
			inputs = []string{one}
		}
		data := make([]map[string]any, len(inputs))
		for i, in := range inputs {
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": llmtest.Embedding(in, embedDims)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": len(inputs), "total_tokens": len(inputs)}})
	}))
}

// waitEmbedded waits until every consumer of the stream (the embedder
// among them) has acknowledged everything and the read model holds it,
// twice in a row a quarter of a second apart.
func waitEmbedded(ctx context.Context, e *Engram) error {
	calm := 0
	for calm < 2 {
		if err := ctx.Err(); err != nil {
			return err
		}
		backlogs, err := e.App.Backlogs(ctx)
		if err != nil {
			return err
		}
		busy := false
		for _, b := range backlogs {
			if b.Pending > 0 || b.AckPending > 0 {
				busy = true
			}
		}
		if err := e.App.WaitCaughtUp(ctx); err != nil {
			return err
		}
		if busy {
			calm = 0
		} else {
			calm++
		}
		time.Sleep(250 * time.Millisecond) // a benchmark's poll, not a test's
	}
	return nil
}

// vectorsAlone ranks a set's memories by the cosine of their vectors
// with the query's, as the semantic path alone would (it embeds the last
// utterance).
func vectorsAlone(s *RecallSet, query string) []string {
	q := llmtest.Embedding(query, embedDims)
	type scored struct {
		id  string
		cos float64
	}
	out := make([]scored, len(s.Memories))
	for i, m := range s.Memories {
		v := llmtest.Embedding(m.Content, embedDims)
		dot := 0.0
		for j := range v {
			dot += float64(v[j]) * float64(q[j])
		}
		out[i] = scored{m.ID, dot}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].cos > out[b].cos })
	ids := make([]string, len(out))
	for i, o := range out {
		ids[i] = o.id
	}
	return ids
}

// startWithVectors starts engram for the recall sets with the test
// embeddings endpoint configured.
func startWithVectors(ctx context.Context, sync, url string) (*Engram, error) {
	e, err := StartRoles(ctx, qualityRoles, func(c *Config) {
		if sync != "" {
			c.NATS.Sync = sync
		}
		c.Embed.BaseURL, c.Embed.Model = url+"/v1", "llmtest-embed"
	})
	if err != nil {
		return nil, fmt.Errorf("start with vectors: %w", err)
	}
	return e, nil
}
