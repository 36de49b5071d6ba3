package httpapi

import (
	"net/http"
	"strconv"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// search: GET /v1/search?namespace=&user=&q=&limit=
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q := memory.SearchQuery{
		Scope: memory.Scope{Namespace: v.Get("namespace"), User: v.Get("user")},
		Text:  v.Get("q"),
	}
	if q.Scope.Namespace == "" {
		q.Scope.Namespace = events.DefaultNamespace
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			writeError(w, memory.Errorf(memory.EINVALID, "limit: %q is not a number", l))
			return
		}
		q.Limit = n
	}
	if err := checkNamespace(r.Context(), q.Scope.Namespace); err != nil {
		writeError(w, err)
		return
	}
	if err := q.Normalize(); err != nil {
		writeError(w, err)
		return
	}
	building := s.buildingNow() // before the query, as contextBlock reads it
	res, err := s.Searcher.Search(r.Context(), q)
	if err != nil {
		s.Log.Error("search failed", zap.Error(err))
		writeError(w, err)
		return
	}
	out := map[string]any{"results": res}
	if building != "" {
		out["degraded"] = []string{building}
	}
	writeJSON(w, http.StatusOK, out)
}
