package llm_test

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llm/llmtest"
)

func TestEmbedReturnsVectorsInInputOrder(t *testing.T) {
	srv, c := newClient(t, func(cfg *llm.Config) { cfg.Model = "nomic-embed-text" })
	srv.SetDims(16)
	inputs := []string{"green tea", "black coffee", "用户喜欢绿茶"}
	srv.EnqueueEmbed(llmtest.Reversed())

	vecs, usage, err := c.Embed(t.Context(), inputs)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vecs) != len(inputs) {
		t.Fatalf("got %d vectors, want %d", len(vecs), len(inputs))
	}
	for i, in := range inputs {
		if want := llmtest.Embedding(in, 16); !slices.Equal(vecs[i], want) {
			t.Errorf("vector %d (%q)=%v, want %v", i, in, vecs[i], want)
		}
	}
	if got, want := usage, srv.Usage(); got != want || usage.PromptTokens == 0 {
		t.Errorf("usage=%+v, want the server's %+v", got, want)
	}
	req := srv.EmbedRequests()[0]
	if req.Model != "nomic-embed-text" || !slices.Equal(req.Input, inputs) {
		t.Errorf("request model=%q input=%q", req.Model, req.Input)
	}
}

func TestEmbedNothing(t *testing.T) {
	srv, c := newClient(t, nil)
	vecs, _, err := c.Embed(t.Context(), nil)
	if err != nil || vecs != nil {
		t.Fatalf("Embed(nil)=%v, %v, want nothing", vecs, err)
	}
	if srv.EmbedCalls() != 0 {
		t.Error("Embed(nil) sent a request")
	}
}

func TestEmbedAcceptsBase64(t *testing.T) {
	want := []float32{0.25, -0.5, 1}
	b := make([]byte, 12)
	for i, f := range want {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	srv, c := newClient(t, nil)
	srv.EnqueueEmbed(llmtest.Raw(200, "application/json",
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":"`+base64.StdEncoding.EncodeToString(b)+`"}],"usage":{"prompt_tokens":2,"total_tokens":2}}`))
	vecs, _, err := c.Embed(t.Context(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vecs[0], want) {
		t.Errorf("vector=%v, want %v", vecs[0], want)
	}
}

func TestEmbedBadResponses(t *testing.T) {
	cases := map[string]string{
		"too few":        `{"data":[{"index":0,"embedding":[1,0]}]}`,
		"repeated index": `{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]}`,
		"index too big":  `{"data":[{"index":0,"embedding":[1,0]},{"index":2,"embedding":[0,1]}]}`,
		"ragged":         `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1,0]}]}`,
		"empty vector":   `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`,
		"not numbers":    `{"data":[{"index":0,"embedding":{"a":1}},{"index":1,"embedding":[0,1]}]}`,
		"bad base64":     `{"data":[{"index":0,"embedding":"!!"},{"index":1,"embedding":[0,1]}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			srv, c := newClient(t, nil)
			srv.EnqueueEmbed(llmtest.Raw(200, "application/json", body))
			_, _, err := c.Embed(t.Context(), []string{"a", "b"})
			if e := asError(t, err); e.Kind != llm.BadResponse || e.Op != "embed" {
				t.Errorf("err=%v, want an embed BadResponse", err)
			}
		})
	}
}

func TestEmbedFailureKinds(t *testing.T) {
	srv, c := newClient(t, nil)
	srv.EnqueueEmbed(llmtest.RateLimit(2*time.Second), llmtest.CutShort())
	_, _, err := c.Embed(t.Context(), []string{"a"})
	if d, ok := llm.RetryAfter(err); !ok || d != 2*time.Second {
		t.Errorf("err=%v, want RateLimited with a 2s wait", err)
	}
	_, _, err = c.Embed(t.Context(), []string{"a"})
	if e := asError(t, err); e.Kind != llm.Transport {
		t.Errorf("err=%v, want Transport", err)
	}
}
