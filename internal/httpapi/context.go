package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/retrieval"
)

// ContextEngine answers context requests.
type ContextEngine interface {
	Context(ctx context.Context, req retrieval.Request) (*retrieval.Response, error)
}

// contextBlock: POST /v1/context — the memory block for an agent's next prompt.
func (s *Server) contextBlock(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r, 1<<20)
	if err != nil {
		writeError(w, err)
		return
	}
	var req retrieval.Request
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, memory.Errorf(memory.EINVALID, "body: %v", err))
		return
	}
	if req.Namespace == "" {
		req.Namespace = "default"
	}
	if err := checkNamespace(r.Context(), req.Namespace); err != nil {
		writeError(w, err)
		return
	}
	metrics.Default.Inc("engram_context_requests_total")
	resp, err := s.Context.Context(r.Context(), req)
	if err != nil {
		if memory.ErrorCode(err) == memory.EINTERNAL {
			s.Log.Error("context failed", zapErr(err))
		}
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
