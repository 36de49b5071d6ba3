package httpapi

import (
	"context"
	"net/http"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/retrieval"
	"go.uber.org/zap"
)

// ContextEngine answers context requests.
type ContextEngine interface {
	Context(ctx context.Context, req retrieval.Request) (*retrieval.Response, error)
}

// contextBlock: POST /v1/context — the memory block for an agent's next prompt.
func (s *Server) contextBlock(w http.ResponseWriter, r *http.Request) {
	var req retrieval.Request
	if err := decodeBody(r, events.DefaultMaxEventBytes, &req); err != nil {
		writeError(w, err)
		return
	}
	if req.Namespace == "" {
		req.Namespace = events.DefaultNamespace
	}
	if err := checkNamespace(r.Context(), req.Namespace); err != nil {
		writeError(w, err)
		return
	}
	metrics.Default.ContextRequest()
	// Whether the copy is still being built is read before the query: a
	// copy that catches up while it answers answered from what it had.
	building := s.buildingNow()
	resp, err := s.Context.Context(r.Context(), req)
	if err != nil {
		if memory.ErrorCode(err) == memory.EINTERNAL {
			s.Log.Error("context failed", zap.Error(err))
		}
		writeError(w, err)
		return
	}
	if building != "" {
		resp.Degraded = append(resp.Degraded, building)
	}
	recordContext(req.Namespace, resp)
	writeJSON(w, http.StatusOK, resp)
}
