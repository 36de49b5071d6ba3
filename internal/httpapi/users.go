package httpapi

import (
	"net"
	"net/http"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// forgetUser: DELETE /v1/users/{user}?namespace=&reason= — erase a user
// (app.Forget). Operators only: a token for every namespace ("*"), or,
// with no tokens configured, a caller on loopback.
func (s *Server) forgetUser(w http.ResponseWriter, r *http.Request) {
	if !isOperator(r) {
		writeError(w, memory.Errorf(EFORBIDDEN, "forgetting a user takes an operator: a token for every namespace (\"*\"), or a caller on loopback when no tokens are set"))
		return
	}
	scope := memory.Scope{Namespace: r.URL.Query().Get("namespace"), User: r.PathValue("user")}
	if scope.Namespace == "" {
		scope.Namespace = events.DefaultNamespace
	}
	if err := scope.Validate(); err != nil {
		writeError(w, err)
		return
	}
	reason := r.URL.Query().Get("reason")
	if len(reason) > events.MaxReasonBytes {
		writeError(w, memory.Errorf(memory.EINVALID, "reason: %d bytes, over the limit of %d", len(reason), events.MaxReasonBytes))
		return
	}
	rep, err := s.Forget(r.Context(), scope, reason)
	if err != nil {
		s.Log.Warn("forget failed", zap.Error(err))
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

func isOperator(r *http.Request) bool {
	allowed, authed := r.Context().Value(allowedNamespaceKey).(string)
	if authed {
		return allowed == "*"
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}
