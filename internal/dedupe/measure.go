package dedupe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
)

// MeasureSeed is the seed of the set Measure generates.
const MeasureSeed = 2025

// Report is one Measure run: LSH clustering against the pairwise baseline
// on the same set, in the same process.
type Report struct {
	Items      int // generated
	Clustered  int // in partitions of at least MinPartition
	Partitions int
	Threshold  float64

	LSHTime      time.Duration
	PairwiseTime time.Duration
	Speedup      float64 // PairwiseTime / LSHTime

	// Exact similarities computed: the LSH candidates, and every pair
	// (which is also the LLM calls the seed's pairwise dedupe would make).
	LSHCompared      int
	PairwiseCompared int

	Clusters         int // found by Clusters, singletons included
	MultiClusters    int // of those, with two members or more
	MergedAway       int // memories folded into another
	PairwiseClusters int
	// Recall is the share of same-cluster pairs of Pairwise that Clusters
	// also has; Precision the reverse. Exact says the clusters are equal.
	Recall, Precision float64
	Exact             bool

	// LLM calls a Rewriter made over every plan, counted by an
	// OpenAI-compatible server in the process, and the tokens it billed
	// (estimated with memory.EstimateTokens).
	LLMCalls    int
	LLMUsage    llm.Usage
	RewriteTime time.Duration
}

// Measure generates Synthetic(n, MeasureSeed), clusters it with Clusters
// and with Pairwise at memory.MergeSimilarity and MinPartition, compares
// the two, plans the merges and runs a Rewriter over every plan against a
// counting model server in the process.
func Measure(n int) (Report, error) {
	items := Synthetic(n, MeasureSeed)
	r := Report{Items: n, Threshold: memory.MergeSimilarity}

	start := time.Now()
	lsh, lshStats := clusterLSH(items, r.Threshold, MinPartition)
	r.LSHTime = time.Since(start)
	start = time.Now()
	truth, pairStats := clusterPairwise(items, r.Threshold, MinPartition)
	r.PairwiseTime = time.Since(start)
	if r.LSHTime > 0 {
		r.Speedup = float64(r.PairwiseTime) / float64(r.LSHTime)
	}
	r.Clustered, r.Partitions = lshStats.Items, lshStats.Partitions
	r.LSHCompared, r.PairwiseCompared = lshStats.Compared, pairStats.Compared
	r.Clusters, r.PairwiseClusters = len(lsh), len(truth)
	for _, c := range lsh {
		if len(c.Members) > 1 {
			r.MultiClusters++
			r.MergedAway += len(c.Members) - 1
		}
	}
	r.Recall, r.Precision = PairRecall(lsh, truth), PairRecall(truth, lsh)
	r.Exact = reflect.DeepEqual(lsh, truth)

	byID := make(map[string]Item, len(items))
	for _, it := range items {
		byID[it.ID] = it
	}
	plans := Plan(lsh, byID)
	srv, calls := countingModel()
	defer srv.Close()
	client, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "measure", Timeout: 10 * time.Second}, srv.Client())
	if err != nil {
		return r, fmt.Errorf("measure: model client: %w", err)
	}
	start = time.Now()
	st, err := Rewriter{Client: client}.RewriteAll(context.Background(), plans, byID)
	r.RewriteTime = time.Since(start)
	if err != nil {
		return r, fmt.Errorf("measure: %w", err)
	}
	if st.Failed > 0 {
		return r, fmt.Errorf("measure: %d of %d rewrites failed", st.Failed, st.Calls)
	}
	r.LLMCalls, r.LLMUsage = int(calls.Load()), st.Usage
	return r, nil
}

// countingModel is an OpenAI-compatible chat endpoint that counts its calls
// and answers each merge with the first (kept) member.
func countingModel() (*httptest.Server, *atomic.Int64) {
	calls := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Messages []llm.Message `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		prompt := 0
		for _, m := range req.Messages {
			prompt += memory.EstimateTokens(m.Content)
		}
		user := req.Messages[len(req.Messages)-1].Content
		_, first, _ := strings.Cut(user, "\n1. ")
		first, _, _ = strings.Cut(first, "\n")
		content, _ := json.Marshal(map[string]string{"content": first})
		completion := memory.EstimateTokens(string(content))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{ // a client gone is the caller's own to notice
			"object":  "chat.completion",
			"model":   "measure",
			"choices": []any{map[string]any{"index": 0, "message": map[string]string{"role": "assistant", "content": string(content)}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
		})
	}))
	return srv, calls
}

// String is the report as `make bench` prints it.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "dedupe: %d memories (%d in %d partitions of ≥ %d), similarity > %g\n", r.Items, r.Clustered, r.Partitions, MinPartition, r.Threshold)
	fmt.Fprintf(&b, "  LSH clusters:      %v, %d exact comparisons\n", r.LSHTime.Round(time.Millisecond), r.LSHCompared)
	fmt.Fprintf(&b, "  pairwise baseline: %v, %d exact comparisons (the seed's LLM calls)\n", r.PairwiseTime.Round(time.Millisecond), r.PairwiseCompared)
	fmt.Fprintf(&b, "  speedup:           %.1fx\n", r.Speedup)
	fmt.Fprintf(&b, "  clusters:          %d (%d with ≥ 2 members, %d memories merged away); pairwise %d\n", r.Clusters, r.MultiClusters, r.MergedAway, r.PairwiseClusters)
	fmt.Fprintf(&b, "  LSH vs pairwise:   pair recall %.4f, precision %.4f, identical %v\n", r.Recall, r.Precision, r.Exact)
	fmt.Fprintf(&b, "  LLM merge calls:   %d (≤ %d clusters), ~%d tokens, %v\n", r.LLMCalls, r.Clusters, r.LLMUsage.TotalTokens, r.RewriteTime.Round(time.Millisecond))
	return b.String()
}
