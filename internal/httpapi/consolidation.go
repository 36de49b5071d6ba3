package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/memory"
)

// ConsolidationStore reads what the consolidator wrote; the read model
// (*sqlite.Store) is one.
type ConsolidationStore interface {
	Episodes(ctx context.Context, scope memory.Scope, session string, limit int) ([]memory.Episode, error)
	SearchEpisodes(ctx context.Context, scope memory.Scope, text string, limit int) ([]memory.Episode, error)
	Scratchpad(ctx context.Context, scope memory.Scope) (memory.Scratchpad, error)
	CoreMemories(ctx context.Context, scope memory.Scope) ([]memory.Memory, error)
	ActiveMemories(ctx context.Context, scope memory.Scope) ([]memory.Memory, error)
	EpisodesEnded(ctx context.Context, scope memory.Scope, from, to time.Time) ([]memory.Episode, error)
	Identity(ctx context.Context, scope memory.Scope) (id memory.Identity, ok bool, err error)
	Reports(ctx context.Context, scope memory.Scope, limit int) ([]memory.Report, error)
}

// RuleQueue is the consolidator's queue of mode: confirm firings
// (*consolidation.Consolidator). When the Server's Consolidation also
// implements it, the pending endpoints are served.
type RuleQueue interface {
	PendingFirings(ctx context.Context, scope *memory.Scope) ([]consolidation.Pending, error)
	Approve(ctx context.Context, id string, scope *memory.Scope) error
	Dismiss(id string, scope *memory.Scope) error
}

// consolidationRoutes adds the consolidation read/write endpoints
// (episodes, scratchpad, profile, the rules' confirm queue). With no
// Consolidation set, the read model behind Memories serves them when it
// can.
func (s *Server) consolidationRoutes(mux *router) {
	store := s.Consolidation
	if store == nil {
		store, _ = s.Memories.(ConsolidationStore)
	}
	if store == nil {
		return
	}
	c := consolidationAPI{Server: s, store: store}
	mux.HandleFunc("GET /v1/episodes", s.auth(c.episodes))
	mux.HandleFunc("GET /v1/scratchpad", s.auth(c.scratchpad))
	mux.HandleFunc("GET /v1/profile", s.auth(c.profile))
	if s.Publisher != nil {
		mux.HandleFunc("PUT /v1/scratchpad", s.auth(c.putScratchpad))
	}
	if q, ok := store.(RuleQueue); ok {
		c.queue = q
		mux.HandleFunc("GET /v1/consolidation/pending", s.auth(c.pending))
		mux.HandleFunc("POST /v1/consolidation/pending/{id}/{action}", s.auth(c.decide))
	}
}

type consolidationAPI struct {
	*Server
	store ConsolidationStore
	queue RuleQueue
}

// episodes: GET /v1/episodes?namespace=&user=&session=&q=&limit= — newest
// first, or best first for a query.
func (c consolidationAPI) episodes(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	v := r.URL.Query()
	limit := 100
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, memory.Errorf(memory.EINVALID, "limit: %q is not a number from 1 to 1000", l))
			return
		}
		limit = n
	}
	var eps []memory.Episode
	if q := v.Get("q"); q != "" {
		eps, err = c.store.SearchEpisodes(r.Context(), scope, q, limit)
	} else {
		eps, err = c.store.Episodes(r.Context(), scope, v.Get("session"), limit)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"episodes": eps})
}

// scratchpad: GET /v1/scratchpad?namespace=&user= — empty content when the
// user has none yet.
func (c consolidationAPI) scratchpad(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	p, err := c.store.Scratchpad(r.Context(), scope)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"scratchpad": p})
}

type scratchpadBody struct {
	Content        *string  `json:"content"`
	ActiveProjects []string `json:"active_projects"`
	CurrentFocus   string   `json:"current_focus"`
	OpenQuestions  []string `json:"open_questions"`
	NextSteps      []string `json:"next_steps"`
}

// putScratchpad: PUT /v1/scratchpad?namespace=&user= — a person's
// scratchpad, published as scratchpad.updated (source person). It replaces
// the whole scratchpad; the consolidator keeps its text at the top of every
// later update. An Idempotency-Key header makes a retry safe.
func (c consolidationAPI) putScratchpad(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var body scratchpadBody
	if err := decodeBody(r, int64(c.MaxEventBytes), &body); err != nil {
		writeError(w, err)
		return
	}
	if body.Content == nil {
		writeError(w, memory.Errorf(memory.EINVALID, "content: required (\"\" clears the scratchpad)"))
		return
	}
	data := &events.Scratchpad{Content: *body.Content, ActiveProjects: body.ActiveProjects, CurrentFocus: body.CurrentFocus,
		OpenQuestions: body.OpenQuestions, NextSteps: body.NextSteps, Source: events.SourcePerson}
	c.publish(w, r, events.TypeScratchpadUpdated, idempotentID(r, "scratchpad"), scope, data)
}

// publish publishes one event for a person and answers 202.
func (c consolidationAPI) publish(w http.ResponseWriter, r *http.Request, typ, id string, scope memory.Scope, data any) {
	publishOne(w, r, c.Publisher, c.Projected, c.Now(), typ, id, scope, data, nil)
}

// profile: GET /v1/profile?namespace=&user= — the core profile (tier 1)
// and the two cards, rendered from the read model now, as the consolidator
// renders the card files.
func (c consolidationAPI) profile(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	core, err := c.store.CoreMemories(r.Context(), scope)
	if err != nil {
		writeError(w, err)
		return
	}
	mems, err := c.store.ActiveMemories(r.Context(), scope)
	if err != nil {
		writeError(w, err)
		return
	}
	pad, err := c.store.Scratchpad(r.Context(), scope)
	if err != nil {
		writeError(w, err)
		return
	}
	now := c.Now()
	memMD, userMD := consolidation.Cards(mems, &pad, now, 0, 0)
	id, confirmed, err := c.store.Identity(r.Context(), scope)
	if err != nil {
		writeError(w, err)
		return
	}
	eps, err := c.store.EpisodesEnded(r.Context(), scope, now.AddDate(-1, 0, 0), now.Add(time.Minute))
	if err != nil {
		writeError(w, err)
		return
	}
	reports, err := c.store.Reports(r.Context(), scope, 1)
	if err != nil {
		writeError(w, err)
		return
	}
	var idp *memory.Identity
	if confirmed {
		idp = &id
	}
	agentMD, projectMD, insightsMD := consolidation.L1(idp, mems, &pad, eps, now)
	out := map[string]any{"core": core, "memory_md": memMD, "user_md": userMD,
		"agent_md": agentMD, "project_md": projectMD, "insights_md": insightsMD, "identity_confirmed": confirmed}
	if len(reports) > 0 {
		out["report"] = reports[0]
	}
	writeJSON(w, http.StatusOK, out)
}

// pending: GET /v1/consolidation/pending?namespace=&user= — the user's
// rule firings waiting for confirmation. The queue is in the consolidator's
// memory: a restart forgets it.
func (c consolidationAPI) pending(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	pending, err := c.queue.PendingFirings(r.Context(), &scope)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pending": pending})
}

// decide: POST /v1/consolidation/pending/{id}/{approve|dismiss}?namespace=&user=
// — approve runs the firing's actions now; dismiss drops it.
func (c consolidationAPI) decide(w http.ResponseWriter, r *http.Request) {
	scope, err := scopeOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	id := r.PathValue("id")
	switch r.PathValue("action") {
	case "approve":
		err = c.queue.Approve(r.Context(), id, &scope)
	case "dismiss":
		err = c.queue.Dismiss(id, &scope)
	default:
		writeError(w, memory.Errorf(memory.ENOTFOUND, "no action %q: approve or dismiss", r.PathValue("action")))
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "done": r.PathValue("action")})
}
