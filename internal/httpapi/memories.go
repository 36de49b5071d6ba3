package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/ruleextract"
)

// Memories reads a scope's memories.
type Memories interface {
	memory.MemoryReader
	Memory(ctx context.Context, scope memory.Scope, id string) (memory.Memory, error)
	Pending(ctx context.Context, scope memory.Scope, now time.Time) ([]memory.Memory, error)
	History(ctx context.Context, scope memory.Scope, id string) ([]memory.Change, error)
}

// apiSource is the CloudEvents source of events the API writes for people.
const apiSource = "engram/api"

func scopeOf(r *http.Request) (memory.Scope, error) {
	v := r.URL.Query()
	s := memory.Scope{Namespace: v.Get("namespace"), User: v.Get("user")}
	if s.Namespace == "" {
		s.Namespace = events.DefaultNamespace
	}
	if err := checkNamespace(r.Context(), s.Namespace); err != nil {
		return s, err
	}
	return s, s.Validate()
}

// listMemories: GET /v1/memories?namespace=&user=&kind=&category=&project=&topic=&status=&as_of=&limit=
func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	v := r.URL.Query()
	q := memory.MemoryQuery{Scope: scope, Kind: memory.Kind(v.Get("kind")), Category: memory.Category(v.Get("category")),
		Project: v.Get("project"), Topic: v.Get("topic"), Status: v.Get("status")}
	if q.Kind != "" && !q.Kind.Valid() {
		writeError(w, memory.Errorf(memory.EINVALID, "kind: %q is not one of %v", q.Kind, memory.Kinds))
		return
	}
	if q.Category != "" && !q.Category.Valid() {
		writeError(w, memory.Errorf(memory.EINVALID, "category: %q is not one of %v", q.Category, memory.Categories))
		return
	}
	switch memory.Status(q.Status) {
	case "", "all", memory.StatusActive, memory.StatusPending, memory.StatusSuperseded, memory.StatusRejected, memory.StatusArchived:
	default:
		writeError(w, memory.Errorf(memory.EINVALID, "status: %q is not active, pending, superseded, rejected, archived or all", q.Status))
		return
	}
	if a := v.Get("as_of"); a != "" {
		t, err := time.Parse(time.RFC3339Nano, a)
		if err != nil {
			writeError(w, memory.Errorf(memory.EINVALID, "as_of: %q is not an RFC 3339 time", a))
			return
		}
		q.AsOf = t
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, memory.Errorf(memory.EINVALID, "limit: %q is not a number from 1 to 1000", l))
			return
		}
		q.Limit = n
	}
	mems, err := s.Memories.Memories(r.Context(), q)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"memories": mems})
}

// getMemory: GET /v1/memories/{id}?namespace=&user= — the memory and its history.
func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	m, err := s.Memories.Memory(r.Context(), scope, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	h, err := s.Memories.History(r.Context(), scope, m.ID)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"memory": m, "history": h})
}

type addRequest struct {
	Namespace string `json:"namespace"`
	User      string `json:"user"`
	// SaidAt is read as text so a bad one is named (it shadows the
	// embedded field).
	SaidAt string `json:"said_at"`
	events.MemoryAdded
}

// saidSkew is how far ahead of engram's clock a said_at may be: a
// client's clock a little fast, not a fact said tomorrow, which would
// stay current over everything said until then.
const saidSkew = 5 * time.Minute

// addMemory: POST /v1/memories — a memory written by a person or an agent,
// published as memory.added. An Idempotency-Key header makes a retry safe.
func (s *Server) addMemory(w http.ResponseWriter, r *http.Request) {
	var req addRequest
	req.Confidence, req.Importance = 1, 0.5
	if err := decodeBody(r, int64(s.MaxEventBytes), &req); err != nil {
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
	if req.SaidAt != "" {
		at, err := time.Parse(time.RFC3339Nano, req.SaidAt)
		switch {
		case err != nil:
			writeError(w, memory.Errorf(memory.EINVALID, "said_at: %q is not an RFC 3339 time like 2025-11-01T09:00:00Z", req.SaidAt))
			return
		case at.After(s.Now().Add(saidSkew)):
			writeError(w, memory.Errorf(memory.EINVALID, "said_at: %s is in the future", req.SaidAt))
			return
		}
		req.MemoryAdded.SaidAt = at
	}
	inferShape(&req.MemoryAdded)
	id := idempotentID(r, "add")
	if req.MemoryID == "" {
		req.MemoryID = memory.MemoryID(apiSource, id, 0)
	}
	s.publishDerived(w, r, events.TypeMemoryAdded, id, memory.Scope{Namespace: req.Namespace, User: req.User}, &req.MemoryAdded, req.MemoryID)
}

// inferShape fills what a memory written as plain text leaves out (kind,
// category, subject, predicate) the way the rules would read the same
// words from the user: "I moved to Porto" is the user's location, and
// supersedes the last one. Words the rules read as one fact lend it their
// shape; anything else is a note the user asked to keep. The content
// stays the caller's words.
func inferShape(m *events.MemoryAdded) {
	if strings.TrimSpace(m.Content) == "" || m.Kind != "" && m.Category != "" && m.Subject != "" && m.Predicate != "" {
		return
	}
	// As the rules file "remember …": a note that does not fade.
	shape := memory.Candidate{Kind: memory.KindFact, Category: memory.CategoryConfig, Subject: "user", Predicate: ruleextract.PredNote}
	if cands := ruleextract.Extract(ruleextract.Input{Role: "user", Content: m.Content}); len(cands) == 1 &&
		(m.Kind == "" || string(cands[0].Kind) == m.Kind) {
		shape = cands[0]
	} else if m.Kind != "" {
		shape.Kind, shape.Category, shape.Predicate = memory.Kind(m.Kind), defaultCategory[memory.Kind(m.Kind)], m.Kind
	}
	if shape.Category == "" {
		shape.Category = defaultCategory[shape.Kind]
	}
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&m.Kind, string(shape.Kind))
	fill(&m.Category, string(shape.Category))
	fill(&m.Subject, shape.Subject)
	fill(&m.Predicate, shape.Predicate)
}

// defaultCategory is the decay class of a memory written as plain text
// with only its kind: what the user is and wants does not fade; events
// and context do.
var defaultCategory = map[memory.Kind]memory.Category{
	memory.KindIdentity: memory.CategoryIdentity, memory.KindPreference: memory.CategoryConfig,
	memory.KindRule: memory.CategoryConfig, memory.KindSkill: memory.CategorySolution,
	memory.KindError: memory.CategorySolution, memory.KindFact: memory.CategoryConversation,
	memory.KindContext: memory.CategoryConversation,
}

// patchMemory: PATCH /v1/memories/{id}?namespace=&user= — published as memory.updated.
func (s *Server) patchMemory(w http.ResponseWriter, r *http.Request) {
	scope, m, ok := s.existing(w, r)
	if !ok {
		return
	}
	var patch events.MemoryUpdated
	if err := decodeBody(r, int64(s.MaxEventBytes), &patch); err != nil {
		writeError(w, err)
		return
	}
	patch.MemoryID = m.ID
	s.publishDerived(w, r, events.TypeMemoryUpdated, idempotentID(r, "update"), scope, &patch, m.ID)
}

// deleteMemory: DELETE /v1/memories/{id}?namespace=&user= — published as memory.deleted.
func (s *Server) deleteMemory(w http.ResponseWriter, r *http.Request) {
	scope, m, ok := s.existing(w, r)
	if !ok {
		return
	}
	s.publishDerived(w, r, events.TypeMemoryDeleted, idempotentID(r, "delete"), scope,
		&events.MemoryDeleted{MemoryID: m.ID, Reason: r.URL.Query().Get("reason")}, m.ID)
}

// listPending: GET /v1/pending?namespace=&user=
func (s *Server) listPending(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	mems, err := s.Memories.Pending(r.Context(), scope, s.Now())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending": mems})
}

// decidePending: POST /v1/pending/{id}/{confirm|ignore|snooze}?namespace=&user=
// A snooze takes {"until": RFC 3339} or {"for": "24h"} (default 24 h).
func (s *Server) decidePending(w http.ResponseWriter, r *http.Request) {
	scope, m, ok := s.existing(w, r)
	if !ok {
		return
	}
	if m.Status != memory.StatusPending && m.Status != memory.StatusSnoozed { // a snoozed one can be decided early
		writeError(w, memory.Errorf(memory.ECONFLICT, "memory %s is %s, not pending", m.ID, m.Status))
		return
	}
	d := &events.PendingDecision{MemoryID: m.ID}
	var typ string
	switch r.PathValue("action") {
	case "confirm":
		typ = events.TypePendingConfirmed
	case "ignore":
		typ = events.TypePendingIgnored
	case "snooze":
		typ = events.TypePendingSnoozed
		var body struct {
			Until *time.Time `json:"until"`
			For   string     `json:"for"`
		}
		if raw, err := readBody(r, 4096); err != nil {
			writeError(w, err)
			return
		} else if len(strings.TrimSpace(string(raw))) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				writeError(w, memory.Errorf(memory.EINVALID, "body: %v", err))
				return
			}
		}
		from := s.Now()
		if r.Header.Get("Idempotency-Key") != "" {
			// A retry is the same event only if it says the same: a
			// keyed snooze counts from the minute, not the instant, so
			// a retry within it is a duplicate and not a conflict.
			from = from.Truncate(time.Minute)
		}
		until := from.Add(24 * time.Hour).UTC()
		switch {
		case body.Until != nil:
			until = body.Until.UTC()
		case body.For != "":
			dur, err := time.ParseDuration(body.For)
			if err != nil || dur <= 0 {
				writeError(w, memory.Errorf(memory.EINVALID, "for: %q is not a positive duration such as 24h", body.For))
				return
			}
			until = from.Add(dur).UTC()
		}
		d.Until = &until
	default:
		writeError(w, memory.Errorf(memory.ENOTFOUND, "no action %q: confirm, ignore or snooze", r.PathValue("action")))
		return
	}
	s.publishDerived(w, r, typ, idempotentID(r, r.PathValue("action")), scope, d, m.ID)
}

// existing reads the memory named in the path, in the request's scope.
func (s *Server) existing(w http.ResponseWriter, r *http.Request) (memory.Scope, memory.Memory, bool) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return scope, memory.Memory{}, false
	}
	m, err := s.Memories.Memory(r.Context(), scope, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return scope, m, false
	}
	return scope, m, true
}

// publishDerived publishes one event the API writes and answers 202 with
// the memory it concerns.
func (s *Server) publishDerived(w http.ResponseWriter, r *http.Request, typ, id string, scope memory.Scope, data any, memoryID string) {
	publishOne(w, r, s.Publisher, s.Projected, s.Now(), typ, id, scope, data, map[string]any{"memory_id": memoryID})
}

// publishOne publishes one event a person caused and answers 202 with the
// event's id and sequence (and reply's fields). With ?wait=true it answers
// once the read model has applied it, so the caller can read its own write.
func publishOne(w http.ResponseWriter, r *http.Request, pub Publisher, projected func(context.Context, uint64) error,
	now time.Time, typ, id string, scope memory.Scope, data any, reply map[string]any) {
	e, err := events.NewDerived(apiSource, typ, id, scope.Namespace, scope.User, now.UTC(), data)
	if err != nil {
		writeError(w, memory.Errorf(memory.EINVALID, "%v", err))
		return
	}
	res := pub.Publish(r.Context(), []event.Event{e}, nil)[0]
	if code := memory.ErrorCode(res.Err); code == memory.EINVALID || code == memory.ECONFLICT {
		writeError(w, res.Err) // a conflict: the Idempotency-Key was used for another write
		return
	}
	if res.Err != nil {
		writeError(w, memory.Errorf(memory.EUNAVAILABLE, "not stored; send again"))
		return
	}
	if r.URL.Query().Get("wait") == "true" && projected != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		if err := projected(ctx, res.Seq); err != nil {
			writeError(w, memory.Errorf(memory.EUNAVAILABLE, "stored, but not yet applied: %v", err))
			return
		}
	}
	body := map[string]any{"event_id": id, "seq": res.Seq, "duplicate": res.Duplicate}
	for k, v := range reply {
		body[k] = v
	}
	writeJSON(w, http.StatusAccepted, body)
}

// idempotentID is the event id: the caller's Idempotency-Key when given,
// so a retried request is the same event; random otherwise.
func idempotentID(r *http.Request, action string) string {
	if k := r.Header.Get("Idempotency-Key"); k != "" {
		return "api-" + action + "-" + k
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "api-" + action + "-" + hex.EncodeToString(b[:])
}
