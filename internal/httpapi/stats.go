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

// UsersReader lists a namespace's users; Memories serves GET /v1/users
// when it is one.
type UsersReader interface {
	Users(ctx context.Context, namespace, prefix string, limit int) ([]memory.UserSummary, error)
}

// users: GET /v1/users?namespace=&prefix=&limit= — a namespace's users with
// their counts, the most recently seen first, for the console: an
// operator need not know an id to look at someone's memory. A token
// reaches only the users of its namespace.
func (s *Server) users(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ns := q.Get("namespace")
	if ns == "" {
		ns = events.DefaultNamespace
	}
	if err := checkNamespace(r.Context(), ns); err != nil {
		writeError(w, err)
		return
	}
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, memory.Errorf(memory.EINVALID, "limit: %q is not a number from 1 to 1000", v))
			return
		}
		limit = n
	}
	users, err := s.Memories.(UsersReader).Users(r.Context(), ns, q.Get("prefix"), limit)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespace": ns, "users": users})
}
