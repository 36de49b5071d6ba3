package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"go.uber.org/zap"
)

// Content types of the three CloudEvents HTTP modes.
const (
	ctStructured = "application/cloudevents+json"
	ctBatch      = "application/cloudevents-batch+json"
)

// agentTypes are the event types agents may send to /v1/events. The
// other derived types are engram's own conclusions; the memory endpoints
// publish the manual ones.
var agentTypes = map[string]bool{
	events.TypeTurnRecorded: true, events.TypeContextCompressing: true, events.TypeSessionEnded: true,
	events.TypeMemoryAdded: true, events.TypeIdentityConfirmed: true,
}

// maxBatchBody bounds a batch request whatever the per-event limits say.
const maxBatchBody = 64 << 20

// eventResult is one event's line in an ingest response.
type eventResult struct {
	Index  int        `json:"index"`
	ID     string     `json:"id,omitempty"`
	Status string     `json:"status"` // accepted, duplicate, conflict, invalid, failed
	Seq    uint64     `json:"seq,omitempty"`
	Error  *errorBody `json:"error,omitempty"`
	// With ?wait=memories, for a stored turn: what the rules' reading of
	// it produced.
	Extraction string          `json:"extraction,omitempty"`
	Memories   []memory.Memory `json:"memories,omitzero"`
}

// Extraction states of a turn in an answer to ?wait=memories.
const (
	// ExtractionDone: the rules have read the turn; Memories is what
	// they wrote or restated (possibly nothing).
	ExtractionDone = "done"
	// ExtractionPending: the reading was not applied within the wait;
	// its memories appear shortly.
	ExtractionPending = "pending"
	// ExtractionNone: the turn is not read at once (not the user's, or
	// the rules do not read turns as they arrive); it waits for its
	// session's batch.
	ExtractionNone = "none"
)

// TurnReading is the rules' reading of a turn, for ?wait=memories.
type TurnReading struct {
	Extraction string
	Memories   []memory.Memory
}

// Waits of POST /v1/events.
const (
	waitProjected = "true"
	waitMemories  = "memories"
)

type ingestResponse struct {
	Accepted   int           `json:"accepted"`
	Duplicates int           `json:"duplicates"`
	Results    []eventResult `json:"results"`
	Error      *errorBody    `json:"error,omitempty"`
}

// ingest accepts events and answers 202 only once JetStream has stored
// every one. A batch is validated whole before anything is published: one
// bad event rejects the batch (400, with every event's result), so a
// client never has to work out which half landed.
func (s *Server) ingest(w http.ResponseWriter, r *http.Request) {
	wait, err := s.waitOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	evs, datas, errs, err := s.decode(r)
	if err != nil {
		writeError(w, err)
		return
	}
	resp := ingestResponse{Results: make([]eventResult, len(evs))}
	bad := 0
	for i, e := range evs {
		resp.Results[i] = eventResult{Index: i, ID: e.ID(), Status: "ok"}
		if errs[i] == nil && !agentTypes[e.Type()] {
			errs[i] = memory.Errorf(memory.EINVALID, "type: %q is published by engram's workers, not accepted at /v1/events "+
				"(agents send turn.recorded, context.compressing, session.ended, memory.added and identity.confirmed)", e.Type())
		}
		if errs[i] == nil {
			errs[i] = checkNamespace(r.Context(), events.Namespace(e))
		}
		if errs[i] != nil {
			bad++
			resp.Results[i].Status = "invalid"
			resp.Results[i].Error = &errorBody{Code: memory.ErrorCode(errs[i]), Message: memory.ErrorMessage(errs[i])}
		}
	}
	if bad > 0 {
		first := firstError(errs)
		msg := memory.ErrorMessage(first)
		if len(evs) > 1 {
			msg = fmt.Sprintf("%d of %d events rejected, nothing published; first: %s", bad, len(evs), msg)
		}
		resp.Error = &errorBody{Code: memory.ErrorCode(first), Message: msg}
		writeJSON(w, errorStatus[resp.Error.Code], resp)
		return
	}
	for i := range evs {
		stamp(&evs[i], datas[i], s.Now)
	}
	failed, invalid := 0, 0
	var conflicts []error
	for i, pr := range s.Publisher.Publish(r.Context(), evs, datas) {
		res := &resp.Results[i]
		switch {
		case memory.ErrorCode(pr.Err) == memory.EINVALID:
			invalid++
			res.Status = "invalid"
			res.Error = &errorBody{Code: memory.EINVALID, Message: memory.ErrorMessage(pr.Err)}
		case memory.ErrorCode(pr.Err) == memory.ECONFLICT:
			conflicts = append(conflicts, pr.Err)
			res.Status, res.Seq = "conflict", pr.Seq
			res.Error = &errorBody{Code: memory.ECONFLICT, Message: memory.ErrorMessage(pr.Err)}
		case pr.Err != nil:
			failed++
			res.Status = "failed"
			res.Error = &errorBody{Code: memory.EUNAVAILABLE, Message: "not stored; send again"}
			s.Log.Warn("publish failed", zap.String("event", evs[i].ID()), zap.Error(pr.Err))
		case pr.Duplicate:
			resp.Duplicates++
			res.Status, res.Seq = "duplicate", pr.Seq
		default:
			resp.Accepted++
			res.Status, res.Seq = "accepted", pr.Seq
			metrics.Default.EventAccepted(metrics.PathHTTP, evs[i].Type())
		}
	}
	if invalid > 0 {
		resp.Error = &errorBody{Code: memory.EINVALID,
			Message: fmt.Sprintf("%d of %d events rejected, nothing published", invalid, len(evs))}
		writeJSON(w, http.StatusBadRequest, resp)
		return
	}
	// A failure comes before a conflict: sending the request again stores
	// what failed and answers the conflicts again.
	if failed > 0 {
		resp.Error = &errorBody{Code: memory.EUNAVAILABLE,
			Message: fmt.Sprintf("%d of %d events were not stored; send them again (duplicates are dropped)", failed, len(evs))}
		writeJSON(w, http.StatusServiceUnavailable, resp)
		return
	}
	if len(conflicts) > 0 {
		msg := memory.ErrorMessage(conflicts[0])
		if len(evs) > 1 {
			msg = fmt.Sprintf("%d of %d events were not stored: another event is stored under their source and id; first: %s",
				len(conflicts), len(evs), msg)
		}
		resp.Error = &errorBody{Code: memory.ECONFLICT, Message: msg}
		writeJSON(w, http.StatusConflict, resp)
		return
	}
	switch wait {
	case waitProjected:
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		if err := s.Projected(ctx, topSeq(resp.Results)); err != nil {
			writeError(w, memory.Errorf(memory.EUNAVAILABLE, "stored, but not yet applied: %v", err))
			return
		}
	case waitMemories:
		s.readings(r.Context(), evs, datas, resp.Results)
	}
	writeJSON(w, http.StatusAccepted, resp)
}

// waitOf reads ?wait: "" (answer once stored), "true" (once the read
// model has applied the events) or "memories" (and the rules have read
// the turns).
func (s *Server) waitOf(r *http.Request) (string, error) {
	wait := r.URL.Query().Get("wait")
	switch wait {
	case "", "false":
		return "", nil
	case waitProjected, waitMemories:
		if s.Projected == nil || wait == waitMemories && s.TurnMemories == nil {
			return "", memory.Errorf(memory.EINVALID, "wait=%s: this engram keeps no read model to wait for; "+
				"send the events to one that serves /v1/context, or leave wait out", wait)
		}
		return wait, nil
	default:
		return "", memory.Errorf(memory.EINVALID, "wait: %q is not true, false or memories", wait)
	}
}

// readings fills, for each stored turn, what the rules' reading of it
// produced, waiting at most WaitMemories in all. A turn whose reading is
// not there in time is answered as pending: it was stored, and its
// memories follow.
func (s *Server) readings(ctx context.Context, evs []event.Event, datas []any, results []eventResult) {
	limit := s.WaitMemories
	if limit <= 0 {
		limit = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	// The turns are applied in stream order, before their readings: this
	// wait lets a turn that gets no reading be read back by the caller. A
	// projection late past the limit shows as pending readings.
	_ = s.Projected(ctx, topSeq(results))
	for i := range results {
		d, ok := datas[i].(*events.TurnRecorded)
		if !ok {
			continue
		}
		res := &results[i]
		scope := memory.Scope{Namespace: events.Namespace(evs[i]), User: events.User(evs[i])}
		got, err := s.TurnMemories(ctx, scope, d)
		switch {
		case err != nil && ctx.Err() == nil:
			s.Log.Warn("read a turn's memories", zap.String("event", evs[i].ID()), zap.Error(err))
			res.Extraction = ExtractionPending
		case err != nil:
			res.Extraction = ExtractionPending
		default:
			res.Extraction, res.Memories = got.Extraction, got.Memories
		}
		if res.Extraction == ExtractionDone && res.Memories == nil {
			res.Memories = []memory.Memory{}
		}
	}
}

// topSeq is the highest stream sequence among results.
func topSeq(results []eventResult) uint64 {
	var top uint64
	for _, r := range results {
		top = max(top, r.Seq)
	}
	return top
}

// stamp fills what the stream needs to be deterministic on replay: the
// namespace (defaulted), a time, and the session as the subject.
func stamp(e *event.Event, data any, now func() time.Time) {
	e.SetExtension(events.ExtNamespace, events.Namespace(*e))
	if e.Time().IsZero() {
		e.SetTime(now().UTC())
	}
	if e.Subject() == "" {
		e.SetSubject(events.SessionID(data))
	}
}

// decode reads the request's events. A request-level problem (wrong
// content type, body too large, not a batch) is the returned error; a
// problem with one event is that event's entry in errs.
func (s *Server) decode(r *http.Request) (evs []event.Event, datas []any, errs []error, err error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case ct == ctBatch:
		body, err := readBody(r, min(int64(s.MaxBatchEvents)*int64(s.MaxEventBytes), maxBatchBody))
		if err != nil {
			return nil, nil, nil, err
		}
		raws, err := events.DecodeBatch(body)
		if err != nil {
			return nil, nil, nil, memory.Errorf(memory.EINVALID, "batch: %v", err)
		}
		if len(raws) > s.MaxBatchEvents {
			return nil, nil, nil, memory.Errorf(memory.ETOOLARGE, "batch has %d events, over the limit of %d", len(raws), s.MaxBatchEvents)
		}
		evs, datas, errs = make([]event.Event, len(raws)), make([]any, len(raws)), make([]error, len(raws))
		for i, raw := range raws {
			evs[i], datas[i], errs[i] = s.decodeOne(raw)
		}
		return evs, datas, errs, nil
	case ct == ctStructured:
		body, err := readBody(r, int64(s.MaxEventBytes))
		if err != nil {
			return nil, nil, nil, err
		}
		e, data, err := s.decodeOne(body)
		return []event.Event{e}, []any{data}, []error{err}, nil
	case r.Header.Get("Ce-Specversion") != "":
		e, data, err := s.decodeBinary(r)
		return []event.Event{e}, []any{data}, []error{err}, nil
	default:
		return nil, nil, nil, memory.Errorf(EUNSUPPORTED,
			"content type %q: send %s (one event), %s (a JSON array), or binary mode with ce-* headers",
			ct, ctStructured, ctBatch)
	}
}

func (s *Server) decodeOne(b []byte) (event.Event, any, error) {
	if len(b) > s.MaxEventBytes {
		return event.Event{}, nil, memory.Errorf(memory.ETOOLARGE, "event is %d bytes, over the limit of %d", len(b), s.MaxEventBytes)
	}
	e, data, err := events.DecodeStructured(b, s.MaxEventBytes)
	if err != nil {
		return e, nil, memory.Errorf(memory.EINVALID, "%v", err)
	}
	return e, data, nil
}

func (s *Server) decodeBinary(r *http.Request) (event.Event, any, error) {
	size := 0
	for k, v := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "ce-") && len(v) > 0 {
			size += len(k) + len(v[0])
		}
	}
	body, err := readBody(r, int64(s.MaxEventBytes))
	if err != nil {
		return event.Event{}, nil, err
	}
	if size+len(body) > s.MaxEventBytes {
		return event.Event{}, nil, memory.Errorf(memory.ETOOLARGE, "event is %d bytes, over the limit of %d", size+len(body), s.MaxEventBytes)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	e, err := cehttp.NewEventFromHTTPRequest(r)
	if err != nil {
		return event.Event{}, nil, memory.Errorf(memory.EINVALID, "binary-mode event: %v", err)
	}
	data, err := events.Validate(*e)
	if err != nil {
		return *e, nil, memory.Errorf(memory.EINVALID, "%v", err)
	}
	return *e, data, nil
}

// readBody reads a request body of at most limit bytes. One over the
// limit is read to its end (discardBody) and answered as too large,
// whatever its size.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	tooLarge := memory.Errorf(memory.ETOOLARGE, "request body is over the limit of %d bytes", limit)
	if r.ContentLength > limit {
		discardBody(r, false)
		return nil, tooLarge
	}
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, memory.Errorf(memory.EINVALID, "read body: %v", err)
	}
	if int64(len(b)) > limit {
		discardBody(r, true)
		return nil, tooLarge
	}
	return b, nil
}

// decodeBody reads a JSON request body of at most limit bytes into v,
// refusing fields v does not have.
func decodeBody(r *http.Request, limit int64, v any) error {
	body, err := readBody(r, limit)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return memory.Errorf(memory.EINVALID, "body: %v", err)
	}
	return nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
