package natsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"go.uber.org/zap"
)

// When retrievers are partitioned by user (docs/scale.md), each copy of a
// partition that answers subscribes to engram.v1.<namespace>.p<k>.<op>
// (ServePartition), and every front — any retriever's engram.v1.<ns>.search
// and .context, and the HTTP API of any ingest or retriever — finds the
// user's partition and asks there (Router, ForwardHTTP). Only the copies
// that answer subscribe, so a request never reaches a copy still being
// built while another has caught up; a copy being built answers only when
// none has, and says so in the answer (Partition.Building).

// PartitionSubject is where partition p's requests of op go.
func PartitionSubject(namespace string, p int, op string) string {
	return SubjectPrefix + "." + stream.EncodeToken(namespace) + "." + partitionToken(p) + "." + op
}

func partitionToken(p int) string { return "p" + strconv.Itoa(p) }

// Partition is a copy of one partition of the users that answers.
type Partition struct {
	Searcher memory.Searcher
	Engine   ContextEngine
	// HTTP answers an HTTP request a front forwarded, within namespace.
	HTTP func(ctx context.Context, namespace string, req HTTPRequest) HTTPResponse
	// Building says, while the copy is still being built, how far it has
	// come; "" once it serves.
	Building func() string
	// Acquire keeps the copy open for one request, until release; ok is
	// false once the copy is closing (its partition moved), and the
	// request is then answered Moved for the front to ask again.
	Acquire func() (release func(), ok bool)
}

// MovedHeader marks the answer of a copy that closed while a request was
// on its way: the front asks the partition's other copies.
const MovedHeader = "Engram-Moved"

// held runs fn with the copy kept open, or answers the request Moved.
func (p *Partition) held(req micro.Request, log *zap.Logger, fn func()) {
	if p.Acquire != nil {
		release, ok := p.Acquire()
		if !ok {
			respondError(req, memory.Errorf(memory.EUNAVAILABLE, "this copy of the partition has closed"), log,
				micro.WithHeaders(micro.Headers{MovedHeader: {"1"}}))
			return
		}
		defer release()
	}
	fn()
}

// search and context answer as a partition: a copy still being built
// says so in the answer's degraded list. Whether it is being built is
// read before the query: a copy that catches up while it answers
// answered from what it had.
func (p *Partition) search(ctx context.Context, subject string, data []byte, ops int) (any, error) {
	building := p.building()
	res, err := searchAt(ctx, p.Searcher, subject, data, ops)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"results": res}
	if building != "" {
		out["degraded"] = []string{building}
	}
	return out, nil
}

func (p *Partition) context(ctx context.Context, subject string, data []byte, ops int) (any, error) {
	building := p.building()
	resp, err := contextAt(ctx, p.Engine, subject, data, ops)
	if err != nil {
		return nil, err
	}
	if building != "" {
		resp.Degraded = append(resp.Degraded, building)
	}
	return resp, nil
}

func (p *Partition) building() string {
	if p.Building == nil {
		return ""
	}
	return p.Building()
}

// ServePartition subscribes partition k's endpoints on nc until the
// returned service is stopped: search, context and the HTTP API a front
// forwards, each request answered side by side with the others once the
// copy serves (Stop waits for them). Copies of one partition share its
// requests (one queue group).
func ServePartition(nc *nats.Conn, k int, part *Partition, version string, log *zap.Logger) (Service, error) {
	svc, err := micro.AddService(nc, micro.Config{
		Name:        "engram-partition",
		Version:     version,
		Description: "engram: the answers of one partition of the users",
		Metadata:    map[string]string{"partition": strconv.Itoa(k)},
	})
	if err != nil {
		return nil, err
	}
	at := func(op string) string { return SubjectPrefix + ".*." + partitionToken(k) + "." + op }
	search := handler(log, func(ctx context.Context, subject string, data []byte) (any, error) {
		return part.search(ctx, subject, data, 5)
	})
	contextH := handler(log, func(ctx context.Context, subject string, data []byte) (any, error) {
		return part.context(ctx, subject, data, 5)
	})
	endpoints := []struct {
		op string
		h  micro.HandlerFunc
	}{
		{"search", search.Handle},
		{"context", contextH.Handle},
		{"http", func(req micro.Request) { serveHTTP(nc, req, part, log) }},
	}
	side := newSideBySide()
	// A copy being built answers in turn: its answers are degraded, and
	// what ends that is its projector, which the queries would otherwise
	// take the cores from (a failover sends the dead holder's every user
	// to it at once).
	side.inTurn = func() bool { return part.building() != "" }
	for _, e := range endpoints {
		h := micro.HandlerFunc(func(req micro.Request) { part.held(req, log, func() { e.h(req) }) })
		name := "partition_" + e.op
		if err := svc.AddEndpoint("p"+strconv.Itoa(k)+"_"+e.op, side.handler(Timed(name, Recovered(name, log, h))),
			micro.WithEndpointSubject(at(e.op))); err != nil {
			_ = svc.Stop()
			return nil, err
		}
	}
	return sideBySideService{Service: svc, s: side}, nil
}

// Router sends each request to its user's partition: to the copy in this
// process when it answers for it, to the copies that do over NATS
// otherwise.
type Router struct {
	NC *nats.Conn
	N  int
	// Local is partition p's copy in this process, kept open until
	// release, when it answers for it; nil when it does not.
	Local func(p int) (part *Partition, release func())
	// Wait bounds how long a request waits for some copy of its
	// partition to answer: while the partition changes hands, or until
	// a dead holder's lease expires and another instance takes it.
	Wait time.Duration
}

// ask answers a front's request of op, until stopping ends: locally, or
// by forwarding the request's own bytes to the partition's subject and
// the reply's own bytes (and error headers) back, so the answer is the
// owner's as it is.
func (r *Router) ask(stopping context.Context, req micro.Request, op string, log *zap.Logger) {
	ns, err := subjectNamespace(req.Subject(), op)
	if err != nil {
		respondError(req, err, log)
		return
	}
	var who struct {
		Namespace string `json:"namespace"`
		User      string `json:"user"`
	}
	// An unreadable body goes to partition of no user, whose copy
	// answers with the error the request deserves.
	_ = json.Unmarshal(req.Data(), &who)
	p := stream.PartitionOf(ns, who.User, r.N)
	ctx, cancel := context.WithTimeout(stopping, 10*time.Second)
	defer cancel()
	if local, release := r.Local(p); local != nil {
		defer release()
		var res any
		if op == "search" {
			res, err = local.search(ctx, req.Subject(), req.Data(), 4)
		} else {
			res, err = local.context(ctx, req.Subject(), req.Data(), 4)
		}
		if err != nil {
			respondError(req, err, log)
			return
		}
		_ = req.RespondJSON(res)
		return
	}
	reply, err := r.request(ctx, &nats.Msg{Subject: PartitionSubject(ns, p, op), Data: req.Data()}, p, true)
	if err != nil {
		respondError(req, err, log)
		return
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		_ = req.Error(code, reply.Header.Get(micro.ErrorHeader), reply.Data)
		return
	}
	_ = req.Respond(reply.Data)
}

// AttemptTimeout bounds one try of a request that may be asked again: a
// copy that took it and died (its holder killed) never answers, and the
// request goes to the copy that serves next.
const AttemptTimeout = 3 * time.Second

// request asks partition p's copies, asking again while none answers, up
// to r.Wait. A request that may be asked twice (a read) is asked again
// too when a copy took it and did not answer within AttemptTimeout; a
// write is not: it may have been done.
func (r *Router) request(ctx context.Context, msg *nats.Msg, p int, idempotent bool) (*nats.Msg, error) {
	wait := r.Wait
	if wait <= 0 {
		wait = 15 * time.Second
	}
	deadline := time.Now().Add(wait)
	for pause := 20 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if idempotent {
			actx, cancel = context.WithTimeout(ctx, AttemptTimeout)
		} else if _, ok := ctx.Deadline(); !ok {
			actx, cancel = context.WithTimeout(ctx, 30*time.Second)
		}
		reply, err := r.NC.RequestMsgWithContext(actx, msg)
		cancel()
		switch {
		case err == nil && reply.Header.Get(MovedHeader) == "":
			return reply, nil
		case err == nil, errors.Is(err, nats.ErrNoResponders):
			// Nobody took it: asking again is safe.
		case ctx.Err() != nil:
			return nil, memory.Errorf(memory.EUNAVAILABLE, "partition %d: %v", p, ctx.Err())
		case errors.Is(err, context.DeadlineExceeded) && idempotent:
			// A copy took it and did not answer: it may have died.
		case errors.Is(err, context.DeadlineExceeded):
			return nil, memory.Errorf(memory.EUNAVAILABLE, "partition %d did not answer in time: the write may or may not "+
				"have been done; send it again with the same Idempotency-Key", p)
		default:
			return nil, memory.Errorf(memory.EUNAVAILABLE, "partition %d: %v", p, err)
		}
		if time.Now().Add(pause).After(deadline) {
			return nil, memory.Errorf(memory.EUNAVAILABLE, "no retriever answers for partition %d of the users: "+
				"its holder stopped and no other has taken it yet (one does within the lease TTL, and answers while it rebuilds)", p)
		}
		select {
		case <-ctx.Done():
			return nil, memory.Errorf(memory.EUNAVAILABLE, "partition %d: %v", p, ctx.Err())
		case <-time.After(pause):
		}
	}
}

// HTTPRequest is an HTTP request a front forwards to a partition's copy.
type HTTPRequest struct {
	Method string
	URL    string // path and query
	Header http.Header
	Body   []byte
}

// HTTPResponse is the copy's answer, to be written back as it is.
type HTTPResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// Headers of a forwarded HTTP request and its answer.
const (
	headerMethod = "Engram-Method"
	headerURL    = "Engram-Url"
	headerStatus = StatusHeader
)

// forwardedHeaders are the request headers a copy needs to answer as the
// front would have: how the body is encoded, and the key that makes a
// retried write the same write. The front has checked the caller's token
// and namespace; the subject carries the namespace.
var forwardedHeaders = []string{"Content-Type", "Idempotency-Key"}

// MayAskAgain says whether a forwarded request reads only, so that one
// whose copy took it and gave no answer may be asked again, of whichever
// copy answers then: a GET, or a context (it writes only the access
// counts of what it served, which a copy that died with the first ask
// never published; one that lived counts the memories once more).
func MayAskAgain(method, url string) bool {
	return method == http.MethodGet || method == http.MethodPost && strings.HasPrefix(url, "/v1/context")
}

// ForwardHTTP asks partition p's copies to answer req, within namespace,
// and returns their answer.
func (r *Router) ForwardHTTP(ctx context.Context, namespace string, p int, req HTTPRequest) (HTTPResponse, error) {
	msg := nats.NewMsg(PartitionSubject(namespace, p, "http"))
	msg.Header.Set(headerMethod, req.Method)
	msg.Header.Set(headerURL, req.URL)
	for _, h := range forwardedHeaders {
		if v := req.Header.Get(h); v != "" {
			msg.Header.Set(h, v)
		}
	}
	msg.Data = req.Body
	reply, err := r.request(ctx, msg, p, MayAskAgain(req.Method, req.URL))
	if err != nil {
		return HTTPResponse{}, err
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" && reply.Header.Get(headerStatus) == "" {
		return HTTPResponse{}, memory.Errorf(code, "partition %d: %s", p, reply.Header.Get(micro.ErrorHeader))
	}
	status, err := strconv.Atoi(reply.Header.Get(headerStatus))
	if err != nil {
		return HTTPResponse{}, memory.Errorf(memory.EINTERNAL, "partition %d answered without a status", p)
	}
	out := HTTPResponse{Status: status, Header: http.Header{}, Body: reply.Data}
	for k, v := range reply.Header {
		if k == headerStatus || strings.HasPrefix(k, "Nats-") {
			continue
		}
		out.Header[k] = v
	}
	return out, nil
}

// serveHTTP answers a forwarded HTTP request with the copy's answer.
func serveHTTP(nc *nats.Conn, req micro.Request, part *Partition, log *zap.Logger) {
	ns, err := subjectNamespaceAt(req.Subject(), "http", 5)
	if err != nil {
		respondError(req, err, log)
		return
	}
	h := req.Headers()
	in := HTTPRequest{Method: h.Get(headerMethod), URL: h.Get(headerURL), Header: http.Header{}, Body: req.Data()}
	for _, k := range forwardedHeaders {
		if v := h.Get(k); v != "" {
			in.Header.Set(k, v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := part.HTTP(ctx, ns, in)
	if limit := nc.MaxPayload() - 4096; int64(len(out.Body)) > limit {
		// The bus cannot carry it: an error the caller can act on, not
		// an answer that never arrives.
		body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": memory.EUNAVAILABLE, "message": fmt.Sprintf(
			"the answer (%d bytes) is larger than the bus carries between retrievers (%d bytes): ask for fewer (limit)", len(out.Body), limit)}})
		out = HTTPResponse{Status: http.StatusServiceUnavailable, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: body}
	}
	hdr := micro.Headers{headerStatus: {strconv.Itoa(out.Status)}}
	for k, v := range out.Header {
		hdr[k] = v
	}
	if err := req.Respond(out.Body, micro.WithHeaders(hdr)); err != nil {
		log.Warn("answer a forwarded request", zap.Error(err))
	}
}

// subjectNamespaceAt reads the namespace token of a request subject of
// tokens tokens ending in op: engram.v1.<ns>.<op>, or
// engram.v1.<ns>.p<k>.<op>.
func subjectNamespaceAt(subject, op string, tokens int) (string, error) {
	if tokens == 4 {
		return subjectNamespace(subject, op)
	}
	parts := strings.Split(subject, ".")
	if len(parts) != tokens || parts[len(parts)-1] != op {
		return "", memory.Errorf(memory.EINVALID, "subject %q is not %s.<namespace>.p<k>.%s", subject, SubjectPrefix, op)
	}
	ns, err := stream.DecodeToken(parts[2])
	if err != nil {
		return "", memory.Errorf(memory.EINVALID, "subject namespace: %v", err)
	}
	return ns, nil
}
