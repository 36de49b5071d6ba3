package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/retrieval"
)

// StatsReader reads the counts and quality figures of a namespace, or of
// one of its users (user ""; all of them), from the read model; Memories
// serves GET /v1/stats when it is one.
type StatsReader interface {
	Quality(ctx context.Context, namespace, user string, window time.Duration) (memory.Stats, error)
}

// statsResponse is GET /v1/stats: the read model's figures, and what the
// context blocks this process served held.
type statsResponse struct {
	memory.Stats
	// ContextServed, RetrievalHitRate and MemoryTokenShare count the
	// context blocks this process served since it started.
	ContextServed    uint64  `json:"context_served"`
	RetrievalHitRate float64 `json:"retrieval_hit_rate"`
	MemoryTokenShare float64 `json:"memory_token_share"`
}

// stats: GET /v1/stats — a namespace's (or with user=, one user's) counts
// and seed 004 §9's quality figures. The context figures are the
// namespace's: they are counted per namespace where blocks are served.
func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ns := q.Get("namespace")
	if ns == "" {
		ns = events.DefaultNamespace
	}
	if err := checkNamespace(r.Context(), ns); err != nil {
		writeError(w, err)
		return
	}
	user := q.Get("user")
	if user != "" {
		if err := (memory.Scope{Namespace: ns, User: user}).Validate(); err != nil {
			writeError(w, err)
			return
		}
	}
	window := memory.DefaultWrongWriteWindow
	if v := q.Get("window_days"); v != "" {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || d <= 0 || d > 3650 {
			writeError(w, memory.Errorf(memory.EINVALID, "window_days: %q is not a number of days in (0, 3650]", v))
			return
		}
		window = time.Duration(d * float64(24*time.Hour))
	}
	st, err := s.Memories.(StatsReader).Quality(r.Context(), ns, user, window)
	if err != nil {
		writeError(w, err)
		return
	}
	c := metrics.Default.Context(ns)
	writeJSON(w, http.StatusOK, statsResponse{Stats: st, ContextServed: c.Served,
		RetrievalHitRate: c.HitRate(), MemoryTokenShare: c.MemoryTokenShare()})
}

// recordContext counts a served block for the retrieval hit rate and the
// memory-token share: a hit holds at least one memory or turn; memory
// tokens are the profile's and the memories'.
func recordContext(ns string, resp *retrieval.Response) {
	b := resp.Blocks
	mem := 0
	for _, items := range [][]retrieval.Item{b.Profile, b.Memories} {
		for _, it := range items {
			mem += it.Tokens
		}
	}
	metrics.Default.ContextServed(ns, len(b.Memories)+len(b.Turns) > 0, mem, resp.Tokens)
}
