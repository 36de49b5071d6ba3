package app

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/embedding"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
)

// embedSubjects are the events whose memory texts the embedder embeds.
var embedSubjects = []string{
	stream.SubjectPrefix + ".*.*." + events.TypeMemoryExtracted,
	stream.SubjectPrefix + ".*.*." + events.TypeMemoryAdded,
	stream.SubjectPrefix + ".*.*." + events.TypeMemoryUpdated,
	stream.SubjectPrefix + ".*.*." + events.TypeMemoriesMerged,
}

// llmClient is the memory model's chat endpoint (ENGRAM_LLM_*).
func (a *App) llmClient() (*llm.Client, error) {
	c, err := llm.New(llm.Config{BaseURL: a.Config.LLM.BaseURL, Model: a.Config.LLM.Model,
		APIKey: a.Config.LLM.APIKey, Timeout: a.Config.LLM.Timeout, Temperature: llm.DefaultTemperature,
		Observe: observeLLM},
		&http.Client{})
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	return c, nil
}

// embedClient is the embeddings endpoint, or nil when vectors are off.
func (a *App) embedClient() (*llm.Client, error) {
	ec := a.Config.Embed
	if ec.BaseURL == "" {
		return nil, nil
	}
	key := ec.APIKey
	if key == "" {
		key = a.Config.LLM.APIKey
	}
	c, err := llm.New(llm.Config{BaseURL: ec.BaseURL, Model: ec.Model, APIKey: key, Timeout: ec.Timeout,
		Observe: observeLLM}, &http.Client{})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return c, nil
}

// openEmbedder starts the embedder on its own durable consumer. A new
// consumer starts at the beginning of the stream, so turning vectors on
// embeds every memory already written.
func (a *App) openEmbedder(ctx, runCtx context.Context, client *llm.Client) error {
	log := a.Log.Named("embedder")
	cfg := embedding.DefaultConfig()
	cfg.Model, cfg.MaxEventBytes = a.Config.Embed.Model, a.Config.HTTP.MaxEventBytes
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	e := embedding.New(cfg, client, a.emitter(stream.RoleExtractor, embedding.Source), log)
	cons, err := stream.NewConsumer(ctx, a.bus(stream.RoleExtractor).js, stream.ConsumerConfig{
		Stream:         stream.MemoryStream,
		Durable:        "embedder",
		Description:    "engram embedder: embeds memories and episodes for semantic recall",
		FilterSubjects: embedSubjects,
		MaxDeliver:     a.Config.Extract.MaxAttempts * 2,
		AckWait:        2*a.Config.Embed.Timeout + 5*time.Second,
		Backoff:        a.extractBackoff,
		MaxEventBytes:  a.Config.HTTP.MaxEventBytes,
	}, log)
	if err != nil {
		return err
	}
	a.goWorker(runCtx, "embedder", func(ctx context.Context) error { return cons.Run(ctx, appliedBatches(e.Handle)) })
	return nil
}

// vectorsPause is how long the semantic path stays off after the
// embeddings endpoint fails, so that an endpoint that is down costs one
// request its timeout, not every request.
const vectorsPause = 30 * time.Second

// queryVectors is retrieval's semantic path: the query embedded by the
// same model as the memories, searched in the read model's per-user index.
type queryVectors struct {
	client  *llm.Client
	store   *sqlite.Store
	model   string
	timeout time.Duration

	mu        sync.Mutex
	downUntil time.Time
	downErr   error
}

func (v *queryVectors) SearchMemories(ctx context.Context, scope memory.Scope, query string, k int, also []string) ([]memory.MemoryHit, map[string]float64, error) {
	v.mu.Lock()
	until, downErr := v.downUntil, v.downErr
	v.mu.Unlock()
	if time.Now().Before(until) {
		return nil, nil, fmt.Errorf("embeddings endpoint paused until %s after: %w", until.Format(time.RFC3339), downErr)
	}
	ectx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	vecs, _, err := v.client.Embed(ectx, []string{query})
	if err != nil {
		if ctx.Err() == nil { // the endpoint failed, not the caller
			v.mu.Lock()
			v.downUntil, v.downErr = time.Now().Add(vectorsPause), err
			v.mu.Unlock()
		}
		return nil, nil, fmt.Errorf("embed the query: %w", err)
	}
	return v.store.SearchVectors(ctx, scope, v.model, vecs[0], k, also)
}
