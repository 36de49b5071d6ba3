package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"go.uber.org/zap"
)

// Publisher stores events durably and reports each one's outcome.
//
// datas, when not nil, holds for each event what events.Validate returned
// for it exactly as it is published (nil where unknown), so that this
// process need not decode and validate its own event again (its read
// model's feed); a Publisher that changes an event's data must change or
// clear its entry.
type Publisher interface {
	Publish(ctx context.Context, evs []event.Event, datas []any) []PublishResult
}

// PublishResult is what the stream said about one event.
type PublishResult struct {
	Seq       uint64
	Duplicate bool
	Err       error
}

// Server serves the HTTP API.
type Server struct {
	Publisher Publisher
	Searcher  memory.Searcher
	Memories  Memories
	Context   ContextEngine
	// Projected waits until the read model has applied a stream sequence
	// (for ?wait=true); nil when this process keeps no read model.
	Projected func(ctx context.Context, seq uint64) error
	// TurnMemories waits, until ctx ends, for the rules' reading of a
	// recorded turn and answers what it produced (for POST
	// /v1/events?wait=memories); nil when this process keeps no read
	// model.
	TurnMemories func(ctx context.Context, scope memory.Scope, turn *events.TurnRecorded) (TurnReading, error)
	// WaitMemories bounds the wait of ?wait=memories (2 s when zero).
	WaitMemories time.Duration
	// Ready reports whether engram can accept events (nil = ready); GET
	// /healthz answers with it.
	Ready func(ctx context.Context) error
	// Readiness reports whether engram can answer as it should: Ready, and
	// the read model caught up with the stream (nil = Ready alone). GET
	// /readyz answers with it.
	Readiness func(ctx context.Context) error
	// PartitionReadiness, when the read model is split into partitions
	// by user, reports whether some copy of partition p serves (GET
	// /readyz?partition=p), and which.
	PartitionReadiness func(ctx context.Context, p int) (string, error)
	// Tokens maps bearer tokens to the namespace each may use ("*" = all).
	// Empty means no authentication (loopback only; config enforces it).
	Tokens map[string]string
	// AllowedHosts are the Host names, beyond loopback ones, the API
	// answers to ("*": any); see edge.
	AllowedHosts   []string
	MaxEventBytes  int
	MaxBatchEvents int
	Log            *zap.Logger
	// Now stamps events that arrive without a time.
	Now func() time.Time

	// Forget erases a user (DELETE /v1/users/{user}); nil leaves the
	// route out.
	Forget func(ctx context.Context, scope memory.Scope, reason string) (any, error)

	// MaskSecrets says whether events of a namespace have their secrets
	// masked before they enter the stream; nil masks none.
	MaskSecrets func(namespace string) bool

	// Consolidation serves episodes, the scratchpad and the profile (and
	// the rules' confirm queue when it is also a RuleQueue); nil falls
	// back to Memories when the read model behind it can.
	Consolidation ConsolidationStore

	// Metrics serves GET /metrics; nil serves metrics.Default alone.
	Metrics http.Handler
	// MCP, when set, serves the MCP streamable HTTP transport at POST
	// /mcp, under the same tokens as the API.
	MCP http.Handler

	// Owner, when set, makes this a front of a read model split into
	// partitions by user (owner.go): every route that names a user is
	// answered by the copy of its partition, here or in another process.
	Owner Owner
	// Building, on the API of a partition's copy, says how far the copy
	// has come while it is still being built ("" once it serves): its
	// answers say so (DegradedHeader, and the degraded list of a context
	// or a search).
	Building func() string

	routes []string
}

// Handler returns the API's routes behind the edge's checks (edge), for
// the network.
func (s *Server) Handler() http.Handler { return s.observe(s.edge(s.mux())) }

// InProcess returns the API's routes without the edge's checks, for the
// requests this process makes on behalf of one that passed them: MCP's
// tools call the API through it.
func (s *Server) InProcess() http.Handler { return s.observe(s.mux()) }

// mux builds the routes.
func (s *Server) mux() *http.ServeMux {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.MaxEventBytes == 0 {
		s.MaxEventBytes = events.DefaultMaxEventBytes
	}
	if s.MaxBatchEvents == 0 {
		s.MaxBatchEvents = 1000
	}
	if s.MaskSecrets != nil && s.Publisher != nil {
		if _, ok := s.Publisher.(*maskingPublisher); !ok {
			s.Publisher = &maskingPublisher{next: s.Publisher, mask: s.MaskSecrets}
		}
	}
	mux := &router{ServeMux: http.NewServeMux()}
	mux.HandleFunc("GET /healthz", s.health)
	mux.HandleFunc("GET /readyz", s.ready)
	mux.HandleFunc("GET /openapi.json", serveOpenAPI)
	if s.Metrics == nil {
		s.Metrics = metrics.Default.Handler(nil)
	}
	mux.Handle("GET /metrics", s.Metrics)
	mux.Handle("GET /console/", consoleHandler())
	if s.Publisher != nil {
		mux.HandleFunc("POST /v1/events", s.auth(s.ingest))
	}
	if s.Forget != nil {
		mux.HandleFunc("DELETE /v1/users/{user}", s.auth(s.forgetUser))
	}
	if s.Owner != nil {
		s.frontRoutes(mux)
	} else {
		s.readRoutes(mux)
	}
	if s.MCP != nil {
		mux.HandleFunc("POST /mcp", s.auth(s.MCP.ServeHTTP))
	}
	mux.ServeMux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, memory.Errorf(memory.ENOTFOUND, "no route %s %s", r.Method, r.URL.Path))
	})
	s.routes = mux.patterns
	for _, p := range mux.patterns {
		metrics.Default.Route(p)
	}
	return mux.ServeMux
}

// readRoutes are the routes of a read model this process holds.
func (s *Server) readRoutes(mux *router) {
	if s.Searcher != nil {
		mux.HandleFunc("GET /v1/search", s.auth(s.search))
	}
	if s.Context != nil {
		mux.HandleFunc("POST /v1/context", s.auth(s.contextBlock))
	}
	if s.Memories != nil {
		mux.HandleFunc("GET /v1/memories", s.auth(s.listMemories))
		mux.HandleFunc("GET /v1/memories/{id}", s.auth(s.getMemory))
		mux.HandleFunc("GET /v1/pending", s.auth(s.listPending))
		if _, ok := s.Memories.(StatsReader); ok {
			mux.HandleFunc("GET /v1/stats", s.auth(s.stats))
		}
		if _, ok := s.Memories.(UsersReader); ok {
			mux.HandleFunc("GET /v1/users", s.auth(s.users))
		}
		if s.Publisher != nil {
			mux.HandleFunc("POST /v1/memories", s.auth(s.addMemory))
			mux.HandleFunc("PATCH /v1/memories/{id}", s.auth(s.patchMemory))
			mux.HandleFunc("DELETE /v1/memories/{id}", s.auth(s.deleteMemory))
			mux.HandleFunc("POST /v1/pending/{id}/{action}", s.auth(s.decidePending))
		}
	}
	s.consolidationRoutes(mux)
}

// frontRoutes are readRoutes on a front (Owner): the same patterns, each
// answered by its user's partition.
func (s *Server) frontRoutes(mux *router) {
	for _, pattern := range []string{"GET /v1/search", "POST /v1/context", "GET /v1/memories", "GET /v1/memories/{id}",
		"GET /v1/pending", "POST /v1/memories", "PATCH /v1/memories/{id}", "DELETE /v1/memories/{id}",
		"POST /v1/pending/{id}/{action}", "GET /v1/episodes", "GET /v1/scratchpad", "GET /v1/profile",
		"PUT /v1/scratchpad", "GET /v1/consolidation/pending", "POST /v1/consolidation/pending/{id}/{action}"} {
		mux.HandleFunc(pattern, s.auth(s.routed(pattern)))
	}
	mux.HandleFunc("GET /v1/stats", s.auth(s.statsAll))
}

// Routes are the patterns ("GET /v1/search") the last Handler serves.
func (s *Server) Routes() []string { return append([]string(nil), s.routes...) }

// router is a ServeMux that remembers its patterns, for the metrics and
// for the test that holds the OpenAPI document to them.
type router struct {
	*http.ServeMux
	patterns []string
}

func (r *router) HandleFunc(pattern string, h http.HandlerFunc) { r.Handle(pattern, h) }

func (r *router) Handle(pattern string, h http.Handler) {
	r.ServeMux.Handle(pattern, h)
	r.patterns = append(r.patterns, pattern)
}

// observe times each request by the route pattern it matched ("edge"
// for one the edge refused) and logs it at debug level: method, path,
// status, duration. Never the query (it carries search text) nor a body.
func (s *Server) observe(h http.Handler) http.Handler {
	log := s.Log
	if log == nil {
		log = zap.NewNop()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		// The mux sets r.Pattern on this very request; the edge hands it
		// on as it is.
		h.ServeHTTP(sw, r)
		d := time.Since(start)
		route := r.Pattern
		if route == "" {
			route = "edge"
		}
		metrics.Default.HTTPRequest(route, sw.status, d)
		if ce := log.Check(zap.DebugLevel, "http request"); ce != nil {
			ce.Write(zap.String("method", r.Method), zap.String("path", r.URL.Path),
				zap.Int("status", sw.status), zap.Duration("duration", d))
		}
	})
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Flush lets streamed responses through; Unwrap lets
// http.ResponseController reach the connection.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type ctxKey int

const allowedNamespaceKey ctxKey = 0

// auth checks the bearer token and remembers which namespace it may use.
func (s *Server) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if len(s.Tokens) == 0 {
			next(w, r)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			writeError(w, memory.Errorf(memory.EUNAUTHORIZED, "missing bearer token"))
			return
		}
		for known, ns := range s.Tokens {
			if subtle.ConstantTimeCompare([]byte(known), []byte(tok)) == 1 {
				next(w, r.WithContext(context.WithValue(r.Context(), allowedNamespaceKey, ns)))
				return
			}
		}
		writeError(w, memory.Errorf(memory.EUNAUTHORIZED, "unknown bearer token"))
	}
}

// checkNamespace refuses a namespace the caller's token does not cover.
func checkNamespace(ctx context.Context, ns string) error {
	allowed, ok := ctx.Value(allowedNamespaceKey).(string)
	if !ok || allowed == "*" || allowed == ns {
		return nil
	}
	return memory.Errorf(EFORBIDDEN, "token does not cover namespace %q", ns)
}

// EFORBIDDEN is an edge-only code: authenticated, but not for this namespace.
const EFORBIDDEN = "forbidden"

func (s *Server) health(w http.ResponseWriter, r *http.Request) { probe(w, r, s.Ready) }

func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if v := r.URL.Query().Get("partition"); v != "" {
		s.partitionReady(w, r, v)
		return
	}
	if s.Readiness != nil {
		probe(w, r, s.Readiness)
		return
	}
	probe(w, r, s.Ready)
}

// partitionReady: GET /readyz?partition=p — whether a copy of partition
// p serves: 200 naming the retriever whose copy does, 503 saying how far
// the one being built has come, or that none holds it.
func (s *Server) partitionReady(w http.ResponseWriter, r *http.Request, v string) {
	if s.PartitionReadiness == nil {
		writeError(w, memory.Errorf(memory.EINVALID, "partition: this engram's read model is not split into partitions"))
		return
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 0 {
		writeError(w, memory.Errorf(memory.EINVALID, "partition: %q is not a partition number", v))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	by, err := s.PartitionReadiness(ctx, p)
	if err != nil {
		if memory.ErrorCode(err) == memory.EINVALID {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "partition": p, "reason": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "partition": p, "served_by": by})
}

// probe answers 200 {"status":"ok"} when check passes (or is nil), 503
// with the reason otherwise.
func probe(w http.ResponseWriter, r *http.Request, check func(context.Context) error) {
	if check != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := check(ctx); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// errorStatus is the one table from application error codes to HTTP.
var errorStatus = map[string]int{
	memory.EINVALID:      http.StatusBadRequest,
	memory.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	memory.ENOTFOUND:     http.StatusNotFound,
	memory.ECONFLICT:     http.StatusConflict,
	memory.EUNAUTHORIZED: http.StatusUnauthorized,
	EFORBIDDEN:           http.StatusForbidden,
	ECROSSSITE:           http.StatusForbidden,
	EUNKNOWNHOST:         http.StatusMisdirectedRequest,
	EUNSUPPORTED:         http.StatusUnsupportedMediaType,
	memory.EUNAVAILABLE:  http.StatusServiceUnavailable,
	memory.EINTERNAL:     http.StatusInternalServerError,
}

// EUNSUPPORTED is an edge-only code: a content type engram does not read.
const EUNSUPPORTED = "unsupported_media_type"

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, err error) {
	code := memory.ErrorCode(err)
	status, ok := errorStatus[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeJSON(w, status, map[string]errorBody{"error": {Code: code, Message: memory.ErrorMessage(err)}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
