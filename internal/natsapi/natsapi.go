// Package natsapi serves engram's read API over NATS request-reply, as a
// nats micro service (so `nats micro ls` lists it and `nats micro stats`
// reports it). Requests are JSON, like the HTTP API; errors carry the same
// codes in the Nats-Service-Error-Code header and in a JSON body.
//
// The namespace is a token of the request subject
// (engram.v1.<namespace>.search), so NATS permissions can confine an agent
// to its namespace; a request whose body names another namespace is refused.
package natsapi

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"go.uber.org/zap"
)

// SubjectPrefix starts every request subject.
const SubjectPrefix = stream.ServicePrefix

// SearchSubject is where a namespace's search requests go.
func SearchSubject(namespace string) string {
	return SubjectPrefix + "." + stream.EncodeToken(namespace) + ".search"
}

// SearchRequest is the body of a search request.
type SearchRequest struct {
	Namespace string `json:"namespace,omitempty"`
	User      string `json:"user"`
	Q         string `json:"q"`
	Limit     int    `json:"limit,omitempty"`
}

// ErrorBody is the body of an error reply.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ContextSubject is where a namespace's context requests go.
func ContextSubject(namespace string) string {
	return SubjectPrefix + "." + stream.EncodeToken(namespace) + ".context"
}

// ContextEngine answers context requests.
type ContextEngine interface {
	Context(ctx context.Context, req retrieval.Request) (*retrieval.Response, error)
}

// Serve starts the retriever service on nc: search; context when engine
// is not nil; and, when digest is not nil, the digest of a stored event
// (stream.DigestSubject), which an ingest that may not read MEMORY asks
// to tell a retry from a reused id.
func Serve(nc *nats.Conn, searcher memory.Searcher, engine ContextEngine, digest stream.StoredDigest, version string, log *zap.Logger) (micro.Service, error) {
	svc, err := micro.AddService(nc, micro.Config{
		Name:        "engram-retriever",
		Version:     version,
		Description: "engram memory search (JSON request-reply)",
	})
	if err != nil {
		return nil, err
	}
	h := handler(log, func(ctx context.Context, subject string, data []byte) (any, error) {
		res, err := searchAt(ctx, searcher, subject, data, 4)
		if err != nil {
			return nil, err
		}
		return map[string]any{"results": res}, nil
	})
	if err := svc.AddEndpoint("search", Timed("search", Recovered("search", log, h)), micro.WithEndpointSubject(SubjectPrefix+".*.search")); err != nil {
		quiet.Do(svc.Stop) // on a path that fails with its own error
		return nil, err
	}
	if engine != nil {
		ch := handler(log, func(ctx context.Context, subject string, data []byte) (any, error) {
			return contextAt(ctx, engine, subject, data, 4)
		})
		if err := svc.AddEndpoint("context", Timed("context", Recovered("context", log, ch)), micro.WithEndpointSubject(SubjectPrefix+".*.context")); err != nil {
			quiet.Do(svc.Stop) // on a path that fails with its own error
			return nil, err
		}
	}
	if err := addDigest(svc, digest, log); err != nil {
		quiet.Do(svc.Stop) // on a path that fails with its own error
		return nil, err
	}
	return svc, nil
}

// addDigest adds the digest endpoint to svc when digest is set: any
// retriever answers it, partitioned or not, since it reads the stream.
func addDigest(svc micro.Service, digest stream.StoredDigest, log *zap.Logger) error {
	if digest == nil {
		return nil
	}
	dh := handler(log, func(ctx context.Context, subject string, data []byte) (any, error) {
		return digestReq(ctx, digest, subject, data)
	})
	return svc.AddEndpoint("digest", Timed("digest", Recovered("digest", log, dh)), micro.WithEndpointSubject(SubjectPrefix+".*.digest"))
}

// digestReq answers with the digest of the event stored at the request's
// sequence, only if it is the event of the request's id in the subject's
// namespace: an asker learns nothing of another namespace's events.
func digestReq(ctx context.Context, digest stream.StoredDigest, subject string, data []byte) (stream.DigestReply, error) {
	ns, err := subjectNamespace(subject, "digest")
	if err != nil {
		return stream.DigestReply{}, err
	}
	var req stream.DigestRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return stream.DigestReply{}, memory.Errorf(memory.EINVALID, "request body: %v", err)
	}
	if req.Seq == 0 || req.MsgID == "" {
		return stream.DigestReply{}, memory.Errorf(memory.EINVALID, `want {"seq": the stored sequence, "msg_id": its Nats-Msg-Id}`)
	}
	d, found, err := digest(ctx, ns, req.MsgID, req.Seq)
	if err != nil {
		return stream.DigestReply{}, memory.Errorf(memory.EUNAVAILABLE, "read seq %d: %v", req.Seq, err)
	}
	return stream.DigestReply{Digest: d, Found: found}, nil
}

// Timed records each request's latency and outcome in /metrics under
// endpoint, as the reply goes out: a client that has its answer finds the
// request counted.
func Timed(endpoint string, h micro.Handler) micro.Handler {
	metrics.Default.Endpoint(endpoint)
	return micro.HandlerFunc(func(req micro.Request) {
		tr := &timedRequest{Request: req, endpoint: endpoint, start: time.Now()}
		h.Handle(tr)
		tr.record("no_reply") // a handler that never answered
	})
}

// timedRequest records its request once, with the error code the handler
// answered with ("" on success), before the answer is sent.
type timedRequest struct {
	micro.Request
	endpoint string
	start    time.Time
	recorded bool
}

func (r *timedRequest) record(code string) {
	if !r.recorded {
		r.recorded = true
		metrics.Default.NATSRequest(r.endpoint, code, time.Since(r.start))
	}
}

func (r *timedRequest) Respond(data []byte, opts ...micro.RespondOpt) error {
	r.record("")
	return r.Request.Respond(data, opts...)
}

func (r *timedRequest) RespondJSON(v any, opts ...micro.RespondOpt) error {
	r.record("")
	return r.Request.RespondJSON(v, opts...)
}

func (r *timedRequest) Error(code, description string, data []byte, opts ...micro.RespondOpt) error {
	r.record(code)
	return r.Request.Error(code, description, data, opts...)
}

// handler answers each request with fn's result as JSON, or with its
// error, within 10 seconds.
func handler(log *zap.Logger, fn func(ctx context.Context, subject string, data []byte) (any, error)) micro.Handler {
	return micro.HandlerFunc(func(req micro.Request) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := fn(ctx, req.Subject(), req.Data())
		if err != nil {
			respondError(req, err, log)
			return
		}
		_ = req.RespondJSON(res)
	})
}

func respondError(req micro.Request, err error, log *zap.Logger, opts ...micro.RespondOpt) {
	code := memory.ErrorCode(err)
	if code == memory.EINTERNAL {
		log.Error("request failed", zap.Error(err))
	}
	var body ErrorBody
	body.Error.Code, body.Error.Message = code, memory.ErrorMessage(err)
	b, _ := json.Marshal(body)
	_ = req.Error(code, body.Error.Message, b, opts...)
}

// ServeRouter starts the retriever service of a partitioned retriever:
// search and context for every user, each request answered by its
// user's partition (Router).
func ServeRouter(r *Router, digest stream.StoredDigest, version string, log *zap.Logger) (micro.Service, error) {
	svc, err := micro.AddService(r.NC, micro.Config{
		Name:        "engram-retriever",
		Version:     version,
		Description: "engram memory search (JSON request-reply), routed to each user's partition",
	})
	if err != nil {
		return nil, err
	}
	// A request forwarded to its partition waits for the round trip: the
	// others are answered meanwhile.
	side := newSideBySide()
	for _, op := range []string{"search", "context"} {
		h := micro.HandlerFunc(func(req micro.Request) { r.ask(side.stopping, req, op, log) })
		if err := svc.AddEndpoint(op, side.handler(Timed(op, Recovered(op, log, h))), micro.WithEndpointSubject(SubjectPrefix+".*."+op)); err != nil {
			quiet.Do(svc.Stop) // on a path that fails with its own error
			return nil, err
		}
	}
	if err := addDigest(svc, digest, log); err != nil {
		quiet.Do(svc.Stop) // on a path that fails with its own error
		return nil, err
	}
	return sideBySideService{Service: svc, s: side}, nil
}

// contextAt answers a context request on a subject of tokens tokens
// (subjectNamespaceAt).
func contextAt(ctx context.Context, e ContextEngine, subject string, data []byte, tokens int) (*retrieval.Response, error) {
	ns, err := subjectNamespaceAt(subject, "context", tokens)
	if err != nil {
		return nil, err
	}
	var req retrieval.Request
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, memory.Errorf(memory.EINVALID, "request body: %v", err)
	}
	if req.Namespace != "" && req.Namespace != ns {
		return nil, memory.Errorf(memory.EINVALID, "namespace %q in the body does not match the subject's %q", req.Namespace, ns)
	}
	req.Namespace = ns
	return e.Context(ctx, req)
}

// subjectNamespace reads the namespace token of engram.v1.<ns>.<op>.
func subjectNamespace(subject, op string) (string, error) {
	parts := strings.Split(subject, ".")
	if len(parts) != 4 || parts[3] != op {
		return "", memory.Errorf(memory.EINVALID, "subject %q is not %s.<namespace>.%s", subject, SubjectPrefix, op)
	}
	ns, err := stream.DecodeToken(parts[2])
	if err != nil {
		return "", memory.Errorf(memory.EINVALID, "subject namespace: %v", err)
	}
	return ns, nil
}

// searchAt answers a search request on a subject of tokens tokens
// (subjectNamespaceAt).
func searchAt(ctx context.Context, s memory.Searcher, subject string, data []byte, tokens int) ([]memory.SearchResult, error) {
	ns, err := subjectNamespaceAt(subject, "search", tokens)
	if err != nil {
		return nil, err
	}
	var req SearchRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, memory.Errorf(memory.EINVALID, "request body: %v", err)
	}
	if req.Namespace != "" && req.Namespace != ns {
		return nil, memory.Errorf(memory.EINVALID, "namespace %q in the body does not match the subject's %q", req.Namespace, ns)
	}
	q := memory.SearchQuery{Scope: memory.Scope{Namespace: ns, User: req.User}, Text: req.Q, Limit: req.Limit}
	if err := q.Normalize(); err != nil {
		return nil, err
	}
	return s.Search(ctx, q)
}
