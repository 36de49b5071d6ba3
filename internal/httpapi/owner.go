package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
)

// When the users' read model is split into partitions across retrievers
// (docs/scale.md), every route that names a user is answered by a copy of
// that user's partition: the API of this process's copy when it has one
// that answers, another process's otherwise. The front checks the token
// and the namespace, finds the partition and hands the request on as it
// came (Owner); the copy answers it with its own routes and handlers, so
// the answer is the one the single binary gives for the same data.

// Owner finds the copy of a user's partition that answers.
type Owner interface {
	// Partition is the partition of scope's user.
	Partition(scope memory.Scope) int
	// Partitions is how many partitions there are.
	Partitions() int
	// Local is the API of partition p's copy in this process (its
	// Server's CopyAPI), kept open until release, when this process
	// answers for it; nil when it does not.
	Local(p int) (api http.Handler, release func())
	// Forward has the copy of partition p that answers, in another
	// process, answer req as a caller whose rights cover namespace.
	Forward(ctx context.Context, namespace string, p int, req Forwarded) (Answer, error)
}

// Forwarded is a request handed to a partition's copy in another process.
type Forwarded struct {
	Method string
	URL    string // path and query
	Header http.Header
	Body   []byte
	// ByUser says the request names its user, so that any front answers
	// it from the user's partition: it may be sent to the API of the
	// instance whose copy answers (Relay). A request for partition p's
	// copy alone (its part of the stats) goes over the bus only.
	ByUser bool
}

// Answer is what the copy answered, written back as it is.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// DegradedHeader says, on an answer from a partition's copy still being
// built (no copy has caught up yet), how far it has come: the answer may
// lack what the stream holds past that.
const DegradedHeader = "Engram-Degraded"

// scoped routes name their user in the query, or, for these, in the body.
var bodyScoped = map[string]bool{"POST /v1/context": true, "POST /v1/memories": true}

// routed is the handler of a route that names a user, on a front: it
// finds the user's partition and has its copy answer.
func (s *Server) routed(pattern string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		scope := memory.Scope{Namespace: r.URL.Query().Get("namespace"), User: r.URL.Query().Get("user")}
		var body []byte
		if bodyScoped[pattern] {
			limit := int64(s.MaxEventBytes)
			if pattern == "POST /v1/context" {
				limit = events.DefaultMaxEventBytes
			}
			var err error
			if body, err = readBody(r, limit); err != nil {
				writeError(w, err)
				return
			}
			var who struct {
				Namespace string `json:"namespace"`
				User      string `json:"user"`
			}
			// An unreadable body goes to the partition of no user, whose
			// copy answers with the error it deserves.
			_ = json.Unmarshal(body, &who)
			scope = memory.Scope{Namespace: who.Namespace, User: who.User}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if scope.Namespace == "" {
			scope.Namespace = events.DefaultNamespace
		}
		if err := checkNamespace(r.Context(), scope.Namespace); err != nil {
			writeError(w, err)
			return
		}
		p := s.Owner.Partition(scope)
		if local, release := s.Owner.Local(p); local != nil {
			defer release()
			local.ServeHTTP(w, r)
			return
		}
		if !bodyScoped[pattern] {
			var err error
			if body, err = readBody(r, int64(s.MaxEventBytes)); err != nil {
				writeError(w, err)
				return
			}
		}
		ans, err := s.Owner.Forward(r.Context(), scope.Namespace, p,
			Forwarded{Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, ByUser: true})
		if err != nil {
			writeError(w, err)
			return
		}
		for k, v := range ans.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(ans.Status)
		_, _ = w.Write(ans.Body)
	}
}

// CopyAPI is the API of a partition's copy: its routes without the edge
// and without the tokens, for a front that has checked both.
func (s *Server) CopyAPI() http.Handler {
	s.Tokens = nil
	return s.building(s.mux())
}

// buildingNow is Building's answer, "" without one.
func (s *Server) buildingNow() string {
	if s.Building == nil {
		return ""
	}
	return s.Building()
}

// building marks the answers of a copy still being built (Building).
func (s *Server) building(h http.Handler) http.Handler {
	if s.Building == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b := s.Building(); b != "" {
			w.Header().Set(DegradedHeader, b)
		}
		h.ServeHTTP(w, r)
	})
}

// AnswerForwarded has api, a copy's API (CopyAPI), answer a request a
// front in another process forwarded, as a caller whose rights cover
// namespace alone.
func AnswerForwarded(ctx context.Context, api http.Handler, namespace string, req Forwarded) Answer {
	ctx = context.WithValue(ctx, allowedNamespaceKey, namespace)
	r, err := http.NewRequestWithContext(ctx, req.Method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		rec := newRecorder()
		writeError(rec, memory.Errorf(memory.EINVALID, "forwarded request: %v", err))
		return rec.answer()
	}
	r.Header = req.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	r.RemoteAddr = "forwarded"
	rec := newRecorder()
	api.ServeHTTP(rec, r)
	return rec.answer()
}

// recorder keeps an answer to send on.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) answer() Answer {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return Answer{Status: r.status, Header: r.header, Body: r.body.Bytes()}
}

// statsAll: GET /v1/stats on a front: the figures of every partition's
// copy, added up, and the context blocks this process served.
func (s *Server) statsAll(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("namespace")
	if ns == "" {
		ns = events.DefaultNamespace
	}
	if err := checkNamespace(r.Context(), ns); err != nil {
		writeError(w, err)
		return
	}
	var sum memory.Stats
	sum.Namespace, sum.Memories = ns, map[string]int{}
	for p := range s.Owner.Partitions() {
		var ans Answer
		if local, release := s.Owner.Local(p); local != nil {
			rec := newRecorder()
			local.ServeHTTP(rec, r)
			release()
			ans = rec.answer()
		} else {
			var err error
			ans, err = s.Owner.Forward(r.Context(), ns, p, Forwarded{Method: r.Method, URL: r.URL.RequestURI(), Header: r.Header.Clone()})
			if err != nil {
				writeError(w, err)
				return
			}
		}
		if ans.Status != http.StatusOK {
			for k, v := range ans.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(ans.Status)
			_, _ = w.Write(ans.Body)
			return
		}
		var st memory.Stats
		if err := json.Unmarshal(ans.Body, &st); err != nil {
			writeError(w, memory.Errorf(memory.EINTERNAL, "stats of partition %d: %v", p, err))
			return
		}
		sum.Users += st.Users
		sum.Turns += st.Turns
		sum.Episodes += st.Episodes
		for k, n := range st.Memories {
			sum.Memories[k] += n
		}
		sum.Confirmed += st.Confirmed
		sum.Ignored += st.Ignored
		sum.Written += st.Written
		sum.WrongWrites += st.WrongWrites
		sum.WindowDays = st.WindowDays
	}
	sum.ConfirmationRate = memory.Ratio(float64(sum.Confirmed), float64(sum.Confirmed+sum.Ignored))
	sum.WrongWriteRate = memory.Ratio(float64(sum.WrongWrites), float64(sum.Written))
	c := metrics.Default.Context(ns)
	writeJSON(w, http.StatusOK, statsResponse{Stats: sum, ContextServed: c.Served,
		RetrievalHitRate: c.HitRate(), MemoryTokenShare: c.MemoryTokenShare()})
}
