package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// source is the CloudEvents source of the turns recorded through MCP.
const source = "mcp"

type scope struct {
	Namespace string `json:"namespace,omitempty" jsonschema:"the namespace; default is default"`
	User      string `json:"user,omitempty" jsonschema:"the user whose memory this is, the same id every time; required unless engram mcp was started with --user"`
}

func (s *scope) scopeOf() *scope { return s }

// withUser fills a tool input's user with the server's default user (engram
// mcp --user) when the call leaves it out.
func withUser[In any](user string, h mcp.ToolHandlerFor[In, any]) mcp.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		if s, ok := any(&in).(interface{ scopeOf() *scope }); ok {
			sc := s.scopeOf()
			if sc.User == "" {
				sc.User = user
			}
			if sc.User == "" {
				return nil, nil, errors.New("user: required (or start engram mcp with --user)")
			}
		}
		return h(ctx, req, in)
	}
}

func (s scope) query() url.Values {
	q := url.Values{"user": {s.User}}
	if s.Namespace != "" {
		q.Set("namespace", s.Namespace)
	}
	return q
}

type rememberIn struct {
	scope
	Content string `json:"content" jsonschema:"what was said, or the fact to keep"`
	// A turn of the conversation.
	SessionID string `json:"session_id,omitempty" jsonschema:"a turn: the conversation it belongs to"`
	TurnIndex *int   `json:"turn_index,omitempty" jsonschema:"a turn: its position in the session, from 0"`
	Role      string `json:"role,omitempty" jsonschema:"a turn: user (default), assistant, system or tool"`
	// A memory written directly.
	Kind       string   `json:"kind,omitempty" jsonschema:"a memory instead of a turn: fact, preference, rule, skill, error, context or identity"`
	Category   string   `json:"category,omitempty" jsonschema:"a memory: identity, config, credential, decision, solution, event, conversation (default), temp or debug"`
	Subject    string   `json:"subject,omitempty" jsonschema:"a memory: who or what it is about (default user)"`
	Predicate  string   `json:"predicate,omitempty" jsonschema:"a memory: the relation, e.g. likes, lives_in (default the kind)"`
	Importance *float64 `json:"importance,omitempty" jsonschema:"a memory: 0 to 1 (default 0.5)"`
}

type recallIn struct {
	scope
	Query        string `json:"query" jsonschema:"the user's message, or what to recall"`
	SessionID    string `json:"session_id,omitempty" jsonschema:"the current session, for its recent turns"`
	BudgetTokens int    `json:"budget_tokens,omitempty" jsonschema:"the most tokens the block may take (default 4000)"`
	Force        bool   `json:"force,omitempty" jsonschema:"retrieve even when the message looks like it needs no memory"`
}

type searchIn struct {
	scope
	Q     string `json:"q" jsonschema:"the search text"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many results"`
}

type listIn struct {
	scope
	Kind     string `json:"kind,omitempty" jsonschema:"only this kind"`
	Category string `json:"category,omitempty" jsonschema:"only this category"`
	Status   string `json:"status,omitempty" jsonschema:"active (default), pending, superseded, rejected, archived or all"`
	AsOf     string `json:"as_of,omitempty" jsonschema:"RFC 3339 time: what was current then"`
	Limit    int    `json:"limit,omitempty" jsonschema:"1 to 1000"`
}

type idIn struct {
	scope
	ID string `json:"id" jsonschema:"the memory's id"`
}

type updateIn struct {
	scope
	ID         string   `json:"id" jsonschema:"the memory's id"`
	Content    *string  `json:"content,omitempty" jsonschema:"the new text"`
	Kind       *string  `json:"kind,omitempty"`
	Category   *string  `json:"category,omitempty"`
	Importance *float64 `json:"importance,omitempty" jsonschema:"0 to 1"`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"0 to 1"`
}

type pendingIn struct {
	scope
	ID     string `json:"id,omitempty" jsonschema:"with action: the pending memory to decide"`
	Action string `json:"action,omitempty" jsonschema:"confirm, ignore or snooze; leave out to list what is pending"`
	For    string `json:"for,omitempty" jsonschema:"snooze: for how long, such as 24h"`
}

type episodesIn struct {
	scope
	Q         string `json:"q,omitempty" jsonschema:"search text; leave out for the newest"`
	SessionID string `json:"session_id,omitempty" jsonschema:"only this session's"`
	Limit     int    `json:"limit,omitempty" jsonschema:"1 to 1000"`
}

func (t tools) register(s *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: "remember", Description: "Record a turn of the conversation (session_id, turn_index, role, " +
		"content), from which engram extracts memories; or, with kind, write a memory directly."}, withUser(t.user, t.remember))
	mcp.AddTool(s, &mcp.Tool{Name: "recall", Annotations: readOnly, Description: "What engram knows that bears on the " +
		"user's message: profile, scratchpad, memories, episodes and recent turns, fitted to a token budget and rendered as " +
		"a block to put in the prompt."}, withUser(t.user, t.recall))
	mcp.AddTool(s, &mcp.Tool{Name: "search", Annotations: readOnly, Description: "Full-text search of the user's active " +
		"memories and past turns, best first."}, withUser(t.user, t.search))
	mcp.AddTool(s, &mcp.Tool{Name: "list_memories", Annotations: readOnly, Description: "The user's memories, filtered by " +
		"kind, category or status, or as they were at a time (as_of)."}, withUser(t.user, t.list))
	mcp.AddTool(s, &mcp.Tool{Name: "get_memory", Annotations: readOnly, Description: "One memory and its history."}, withUser(t.user, t.get))
	mcp.AddTool(s, &mcp.Tool{Name: "update_memory", Description: "Change a memory's text, kind, category, importance or " +
		"confidence."}, withUser(t.user, t.update))
	mcp.AddTool(s, &mcp.Tool{Name: "forget_memory", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
		Description: "Delete a memory."}, withUser(t.user, t.forget))
	mcp.AddTool(s, &mcp.Tool{Name: "pending", Description: "Memories engram was unsure of, waiting for the user: list them, " +
		"or confirm, ignore or snooze one."}, withUser(t.user, t.pending))
	mcp.AddTool(s, &mcp.Tool{Name: "episodes", Annotations: readOnly, Description: "Summaries of past sessions (goal, " +
		"actions, outcome): the newest, one session's, or those matching q."}, withUser(t.user, t.episodes))
}

func ptr[T any](v T) *T { return &v }

func (t tools) remember(ctx context.Context, req *mcp.CallToolRequest, in rememberIn) (*mcp.CallToolResult, any, error) {
	if in.Kind != "" {
		body := map[string]any{"namespace": in.Namespace, "user": in.User, "kind": in.Kind, "category": or(in.Category, "conversation"),
			"subject": or(in.Subject, "user"), "predicate": or(in.Predicate, in.Kind), "content": in.Content,
			"importance": 0.5, "confidence": 1.0}
		if in.Importance != nil {
			body["importance"] = *in.Importance
		}
		raw, err := t.call(ctx, req, http.MethodPost, "/v1/memories", url.Values{"wait": {"true"}}, "", body)
		if err != nil {
			return nil, nil, err
		}
		return result(raw, "")
	}
	if in.SessionID == "" || in.TurnIndex == nil {
		return nil, nil, errors.New("a turn needs session_id and turn_index (or give kind to write a memory)")
	}
	role := or(in.Role, "user")
	ev := map[string]any{
		"specversion": "1.0", "type": "turn.recorded", "source": source,
		"id":   TurnEventID(in.SessionID, *in.TurnIndex, role, in.Content),
		"user": in.User, "time": time.Now().UTC().Format(time.RFC3339Nano),
		"data": map[string]any{"session_id": in.SessionID, "turn_index": *in.TurnIndex, "role": role, "content": in.Content},
	}
	if in.Namespace != "" {
		ev["namespace"] = in.Namespace
	}
	raw, err := t.call(ctx, req, http.MethodPost, "/v1/events", nil, "application/cloudevents+json", ev)
	if err != nil {
		return nil, nil, err
	}
	return result(raw, "")
}

func (t tools) recall(ctx context.Context, req *mcp.CallToolRequest, in recallIn) (*mcp.CallToolResult, any, error) {
	raw, err := t.call(ctx, req, http.MethodPost, "/v1/context", nil, "", in)
	if err != nil {
		return nil, nil, err
	}
	var resp struct{ Rendered string }
	_ = json.Unmarshal(raw, &resp)
	return result(raw, resp.Rendered)
}

func (t tools) search(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
	q := in.query()
	q.Set("q", in.Q)
	if in.Limit > 0 {
		q.Set("limit", strconv.Itoa(in.Limit))
	}
	return t.get0(ctx, req, "/v1/search", q)
}

func (t tools) list(ctx context.Context, req *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, any, error) {
	q := in.query()
	for k, v := range map[string]string{"kind": in.Kind, "category": in.Category, "status": in.Status, "as_of": in.AsOf} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if in.Limit > 0 {
		q.Set("limit", strconv.Itoa(in.Limit))
	}
	return t.get0(ctx, req, "/v1/memories", q)
}

func (t tools) get(ctx context.Context, req *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, any, error) {
	return t.get0(ctx, req, "/v1/memories/"+url.PathEscape(in.ID), in.query())
}

func (t tools) update(ctx context.Context, req *mcp.CallToolRequest, in updateIn) (*mcp.CallToolResult, any, error) {
	q := in.query()
	q.Set("wait", "true")
	patch := map[string]any{}
	for k, v := range map[string]any{"content": in.Content, "kind": in.Kind, "category": in.Category,
		"importance": in.Importance, "confidence": in.Confidence} {
		switch p := v.(type) {
		case *string:
			if p != nil {
				patch[k] = *p
			}
		case *float64:
			if p != nil {
				patch[k] = *p
			}
		}
	}
	raw, err := t.call(ctx, req, http.MethodPatch, "/v1/memories/"+url.PathEscape(in.ID), q, "", patch)
	if err != nil {
		return nil, nil, err
	}
	return result(raw, "")
}

func (t tools) forget(ctx context.Context, req *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, any, error) {
	q := in.query()
	q.Set("wait", "true")
	raw, err := t.call(ctx, req, http.MethodDelete, "/v1/memories/"+url.PathEscape(in.ID), q, "", nil)
	if err != nil {
		return nil, nil, err
	}
	return result(raw, "")
}

func (t tools) pending(ctx context.Context, req *mcp.CallToolRequest, in pendingIn) (*mcp.CallToolResult, any, error) {
	q := in.query()
	if in.Action == "" {
		return t.get0(ctx, req, "/v1/pending", q)
	}
	if in.ID == "" {
		return nil, nil, fmt.Errorf("id: required to %s a pending memory", in.Action)
	}
	q.Set("wait", "true")
	var body any
	if in.For != "" {
		body = map[string]string{"for": in.For}
	}
	raw, err := t.call(ctx, req, http.MethodPost, "/v1/pending/"+url.PathEscape(in.ID)+"/"+url.PathEscape(in.Action), q, "", body)
	if err != nil {
		return nil, nil, err
	}
	return result(raw, "")
}

func (t tools) episodes(ctx context.Context, req *mcp.CallToolRequest, in episodesIn) (*mcp.CallToolResult, any, error) {
	q := in.query()
	for k, v := range map[string]string{"q": in.Q, "session": in.SessionID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if in.Limit > 0 {
		q.Set("limit", strconv.Itoa(in.Limit))
	}
	return t.get0(ctx, req, "/v1/episodes", q)
}

// get0 is a tool that is one GET.
func (t tools) get0(ctx context.Context, req *mcp.CallToolRequest, path string, q url.Values) (*mcp.CallToolResult, any, error) {
	raw, err := t.call(ctx, req, http.MethodGet, path, q, "", nil)
	if err != nil {
		return nil, nil, err
	}
	return result(raw, "")
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// TurnEventID is the event id of a turn remember records: a hash of all
// the turn says, so the same call made again is the same event (a
// duplicate) and a call that says anything else, another text for the
// same session, index and role say, is another event and is stored,
// never taken for a duplicate of the first. (Which text the read model
// shows for that index is then the later one's: a turn recorded again
// replaces it.)
func TurnEventID(session string, turnIndex int, role, content string) string {
	b, _ := json.Marshal([]any{session, turnIndex, role, content}) // strings and an int always encode
	sum := sha256.Sum256(b)
	return "turn-" + hex.EncodeToString(sum[:16])
}
