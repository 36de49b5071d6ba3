package httpapi

import "net/http"

// consolidationRoutes adds the consolidation read/write endpoints
// (episodes, scratchpad, profile).
func (s *Server) consolidationRoutes(mux *http.ServeMux) {}
