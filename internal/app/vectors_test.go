package app

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/retrieval"
	"go.uber.org/zap/zaptest"
)

func memoryItem(items []retrieval.Item, content string) (retrieval.Item, bool) {
	for _, it := range items {
		if strings.Contains(it.Content, content) {
			return it, true
		}
	}
	return retrieval.Item{}, false
}

// With an embeddings endpoint, memories are embedded as events, /v1/context
// finds by meaning what full text cannot, only in the asker's own memory;
// when the endpoint fails the answer falls back to full text and says so;
// and a rebuild takes the vectors from the stream without calling it.
func TestVectors(t *testing.T) {
	t.Parallel()
	emb := llmtest.New(t)
	cfg := testConfig(t, t.TempDir())
	cfg.Embed.BaseURL, cfg.Embed.Model = emb.URL, "test-embed"
	a := startApp(t, cfg, RoleAll)
	add := func(body string) { t.Helper(); postMemory(t, a, body) }
	add(`{"user":"ana","kind":"fact","category":"identity","subject":"user","predicate":"lives_in","content":"用户住在北京","importance":0.6}`)
	add(`{"user":"ana","kind":"preference","category":"config","subject":"user","predicate":"drink","content":"prefers oolong tea","importance":0.5}`)
	add(`{"user":"bob","kind":"preference","category":"config","subject":"user","predicate":"drink","content":"prefers black coffee","importance":0.5}`)
	waitSettled(t, a)
	if emb.EmbedCalls() == 0 {
		t.Fatal("the embedder never called the embeddings endpoint")
	}

	// 京北 is not a word of 用户住在北京, so full text misses it; the
	// characters are shared, so the (bag of characters) embedding finds it.
	ask := func(user, q string) retrieval.Response {
		return contextHTTP(t, a, map[string]any{"user": user, "query": q, "force": true, "explain": true})
	}
	t.Run("by meaning", func(t *testing.T) {
		resp := ask("ana", "京北")
		it, ok := memoryItem(resp.Blocks.Memories, "北京")
		if !ok {
			t.Fatalf("memories = %+v, degraded %v", resp.Blocks.Memories, resp.Degraded)
		}
		if it.Signals["semantic"] <= 0 || it.Signals["text"] != 0 {
			t.Fatalf("signals = %v, want a semantic hit full text did not find", it.Signals)
		}
	})
	t.Run("only the asker's vectors", func(t *testing.T) {
		resp := ask("bob", "oolong tea 北京")
		for _, it := range allItems(resp.Blocks) {
			if strings.Contains(it.Content, "oolong") || strings.Contains(it.Content, "北京") {
				t.Fatalf("bob got ana's %+v", it)
			}
		}
	})
	t.Run("endpoint down falls back to full text", func(t *testing.T) {
		emb.AlwaysEmbed(llmtest.Status(500, "embedding backend down"))
		defer emb.AlwaysEmbed(nil)
		before := emb.EmbedCalls()
		for range 3 {
			resp := ask("ana", "oolong tea")
			if _, ok := memoryItem(resp.Blocks.Memories, "oolong"); !ok {
				t.Fatalf("memories = %+v", resp.Blocks.Memories)
			}
			if !strings.Contains(strings.Join(resp.Degraded, ","), "vectors->fts") {
				t.Fatalf("degraded = %v, want vectors->fts", resp.Degraded)
			}
		}
		// The first failure pauses the path: one call, not one per request.
		if n := emb.EmbedCalls() - before; n != 1 {
			t.Fatalf("%d calls to a failing endpoint for 3 requests, want 1", n)
		}
	})

	seq := waitSettled(t, a)
	stopApp(t, a)
	calls := emb.EmbedCalls()
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq {
		t.Fatalf("rebuild: diff %v, target %d (want %d)", rep.Diff, rep.Target, seq)
	}
	if n := emb.EmbedCalls(); n != calls {
		t.Fatalf("rebuild called the embeddings endpoint %d times", n-calls)
	}
	if rep.Built["embeddings"] == "0:"+emptySum {
		t.Fatal("the rebuilt read model has no embeddings")
	}
}
