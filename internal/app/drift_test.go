package app

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/config"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
)

// The context response's budget uses snake_case keys like every other key,
// and an empty scratchpad has no zero "updated" time.
func TestResponseKeys(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	base := "http://" + a.HTTPAddr()
	r := do(t, "POST", base+"/v1/context", "application/json", []byte(`{"user":"ana","query":"what do I like","force":true}`), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("context: %d %s", r.Status, r.Raw)
	}
	budget, _ := json.Marshal(r.Body["budget"])
	for _, key := range []string{`"total"`, `"profile"`, `"recent"`, `"long_term"`, `"reserve"`} {
		if !strings.Contains(string(budget), key) {
			t.Errorf("budget %s has no %s key", budget, key)
		}
	}
	r = do(t, "GET", base+"/v1/scratchpad?user=ana", "", nil, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("scratchpad: %d %s", r.Status, r.Raw)
	}
	if pad, _ := r.Body["scratchpad"].(map[string]any); pad == nil || pad["updated"] != nil {
		t.Errorf("empty scratchpad: %s, want no updated", r.Raw)
	}
}

// Every durable consumer says what it is for (`nats consumer info`).
func TestConsumerDescriptions(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.Embed.BaseURL, cfg.Embed.Model = "http://127.0.0.1:1/v1", "test-embed"
	a := startApp(t, cfg, RoleAll)
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	// The batcher's and consolidator's durables are made once their
	// partitions are taken, a moment after start.
	var infos []*jetstream.ConsumerInfo
	wait.Until(t, "projector, batcher, extractor, embedder and consolidator consumers", func() bool {
		infos = infos[:0]
		for ci := range s.ListConsumers(t.Context()).Info() {
			infos = append(infos, ci)
		}
		return len(infos) >= 5
	})
	for _, ci := range infos {
		if ci.Config.Description == "" {
			t.Errorf("consumer %s has no description", ci.Name)
		}
	}
}

// deploy/nats.conf keeps its JetStream store apart from the embedded
// server's (engram serve's <data_dir>/nats), so a nats-server started with
// it never opens engram serve's stream.
func TestDeployNATSStoreApart(t *testing.T) {
	t.Parallel()
	opts, _ := deployNATS(t)
	cfg := config.Default()
	got, _ := filepath.Abs(filepath.Join("../..", opts.StoreDir))
	engram, _ := filepath.Abs(filepath.Join("../..", cfg.JetStreamDir()))
	if rel, err := filepath.Rel(engram, got); err == nil && !strings.HasPrefix(rel, "..") {
		t.Fatalf("deploy/nats.conf store_dir %q is inside engram's own store %q", opts.StoreDir, cfg.JetStreamDir())
	}
}

// A worker's -h shows its own defaults: the retriever listens on 7421.
func TestWorkerHelpDefaults(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	code := serve("retriever", RoleRetriever, []string{"-h"}, WorkerDefaults(config.Default(), "127.0.0.1:7421"), &out)
	if code != 2 {
		t.Fatalf("-h exit %d, want 2", code)
	}
	help := out.String()
	if !strings.Contains(help, "default 127.0.0.1:7421") || strings.Contains(help, "7420") ||
		!strings.Contains(help, "nats://127.0.0.1:4222") {
		t.Fatalf("retriever -h:\n%s", help)
	}
}
