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
	Namespace string `json:"namespace,omitempty" jsonschema:"the tenant; leave out for default"`
	User      string `json:"user,omitempty" jsonschema:"whose memory this is: the same stable id for the same person every time (an account id, not a display name)"`
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
	Content string `json:"content" jsonschema:"a fact to keep, in plain words (User is vegetarian; 我住在杭州); or, with session_id, what was said in the turn"`
	// A memory written directly: its shape, when the caller knows it.
	Kind       string   `json:"kind,omitempty" jsonschema:"a fact: what sort of memory it is; leave out and engram reads it from the words"`
	Category   string   `json:"category,omitempty" jsonschema:"a fact: how fast it fades (identity, config and credential never do); leave out to follow the kind"`
	Subject    string   `json:"subject,omitempty" jsonschema:"a fact: who or what it is about; leave out for the user"`
	Predicate  string   `json:"predicate,omitempty" jsonschema:"a fact: the relation, such as likes or location (a single-valued one such as location replaces the old value); leave out and engram reads it from the words"`
	Importance *float64 `json:"importance,omitempty" jsonschema:"a fact: 0 to 1 (default 0.5)"`
	// A turn of the conversation.
	SessionID string `json:"session_id,omitempty" jsonschema:"a turn instead of a fact: the conversation it belongs to"`
	TurnIndex *int   `json:"turn_index,omitempty" jsonschema:"a turn: its position in the session, from 0"`
	Role      string `json:"role,omitempty" jsonschema:"a turn: who said it (default user)"`
}

type recallIn struct {
	scope
	Query        string `json:"query" jsonschema:"the user's message as they wrote it"`
	SessionID    string `json:"session_id,omitempty" jsonschema:"the current conversation, to include its latest turns"`
	BudgetTokens int    `json:"budget_tokens,omitempty" jsonschema:"the most tokens the block may take (default 4000)"`
	Force        bool   `json:"force,omitempty" jsonschema:"retrieve even when the message looks like it needs no memory (ok, thanks)"`
}

type searchIn struct {
	scope
	Q     string `json:"q" jsonschema:"the words to look for: a name, a place, a tool, in any language"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many results (default 10)"`
}

type listIn struct {
	scope
	Kind     string `json:"kind,omitempty" jsonschema:"only memories of this kind"`
	Category string `json:"category,omitempty" jsonschema:"only memories of this category"`
	Status   string `json:"status,omitempty" jsonschema:"which memories: active (the default: what is true now), pending, superseded, rejected, archived or all"`
	AsOf     string `json:"as_of,omitempty" jsonschema:"an RFC 3339 time: what was true then"`
	Limit    int    `json:"limit,omitempty" jsonschema:"1 to 1000"`
}

type idIn struct {
	scope
	ID string `json:"id" jsonschema:"the memory's id (m_…), from recall, search or list_memories"`
}

type updateIn struct {
	scope
	ID         string   `json:"id" jsonschema:"the memory's id (m_…), from recall, search or list_memories"`
	Content    *string  `json:"content,omitempty" jsonschema:"the corrected text"`
	Kind       *string  `json:"kind,omitempty" jsonschema:"the corrected kind"`
	Category   *string  `json:"category,omitempty" jsonschema:"the corrected category"`
	Importance *float64 `json:"importance,omitempty" jsonschema:"0 to 1"`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"0 to 1"`
}

type pendingIn struct {
	scope
	ID     string `json:"id,omitempty" jsonschema:"with action: the pending memory the user answered about"`
	Action string `json:"action,omitempty" jsonschema:"the user's answer: confirm (true), ignore (false: not asked again for 30 days) or snooze (ask later); leave out to list what is pending"`
	For    string `json:"for,omitempty" jsonschema:"with snooze: for how long, such as 24h (default)"`
}

type episodesIn struct {
	scope
	Q         string `json:"q,omitempty" jsonschema:"words to look for in past sessions; leave out for the newest"`
	SessionID string `json:"session_id,omitempty" jsonschema:"only this session's"`
	Limit     int    `json:"limit,omitempty" jsonschema:"1 to 1000"`
}

func (t tools) register(s *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	du := t.user != ""
	written := output("POST /v1/memories 202")
	mcp.AddTool(s, &mcp.Tool{Name: "remember", Title: "Remember a fact or a turn",
		Description: "Call when the user states something worth keeping across conversations (who they are, what they " +
			"like, a rule for you, a decision) or asks you to remember something: pass it as content in plain words " +
			"(\"User is vegetarian\"). kind and the rest are optional: engram reads them from the words, and a new value " +
			"of a single-valued fact (where the user lives) replaces the old one. The answer has the new memory's id.\n" +
			"Or, to let engram learn from the whole conversation, call it with each turn (session_id, turn_index, role, " +
			"content): the answer lists the memories engram read in the turn at once; more may follow when the session " +
			"goes quiet.",
		InputSchema: input[rememberIn](du, []string{"content"},
			map[string][]any{"kind": kinds, "category": categories, "role": roles},
			map[string][]string{"session_id": {"turn_index"}, "turn_index": {"session_id"}, "role": {"session_id"}}),
		OutputSchema: output("POST /v1/memories 202", "POST /v1/events 202"),
	}, withUser(t.user, t.remember))
	mcp.AddTool(s, &mcp.Tool{Name: "recall", Title: "Recall what bears on a message", Annotations: readOnly,
		Description: "Call before you answer each message of the user's, with that message as query: engram answers " +
			"`rendered`, a block of what it knows that bears on it (the user's profile, memories, past sessions, the " +
			"conversation's latest turns) fitted to budget_tokens, to put in your prompt. It may answer retrieved " +
			"false when the message needs no memory (\"ok, thanks\"); force overrides that.",
		InputSchema:  input[recallIn](du, []string{"query"}, nil, nil),
		OutputSchema: output("POST /v1/context 200"),
	}, withUser(t.user, t.recall))
	mcp.AddTool(s, &mcp.Tool{Name: "search", Title: "Search memories and past turns", Annotations: readOnly,
		Description: "Call to look something up by its words (a name, a place, a tool, in any language) when recall's " +
			"block did not have it: the user's active memories, past turns and daily summaries, best first.",
		InputSchema:  input[searchIn](du, []string{"q"}, nil, nil),
		OutputSchema: output("GET /v1/search 200"),
	}, withUser(t.user, t.search))
	mcp.AddTool(s, &mcp.Tool{Name: "list_memories", Title: "List memories", Annotations: readOnly,
		Description: "Call to see what engram keeps about the user: everything, one kind (all preferences), the " +
			"superseded history, or what was true at a past time (as_of). Use it to find a memory's id before " +
			"update_memory or forget_memory.",
		InputSchema:  input[listIn](du, nil, map[string][]any{"kind": kinds, "category": categories, "status": statuses}, nil),
		OutputSchema: output("GET /v1/memories 200"),
	}, withUser(t.user, t.list))
	mcp.AddTool(s, &mcp.Tool{Name: "get_memory", Title: "Read one memory and its history", Annotations: readOnly,
		Description: "Call to see one memory in full, by id, with its history: when it was written, merged with the " +
			"same fact said again, superseded by a newer value, edited or confirmed, and by which event.",
		InputSchema:  input[idIn](du, []string{"id"}, nil, nil),
		OutputSchema: output("GET /v1/memories/{id} 200"),
	}, withUser(t.user, t.get))
	mcp.AddTool(s, &mcp.Tool{Name: "update_memory", Title: "Correct a memory",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: ptr(false)},
		Description: "Call when the user corrects something engram remembers wrongly (\"no, my daughter is Mia, not " +
			"Maya\"): change the memory's text, kind, category, importance or confidence, by id; its history keeps " +
			"the old value. To record that something changed (they moved), use remember: the new value supersedes.",
		InputSchema:  input[updateIn](du, []string{"id"}, map[string][]any{"kind": kinds, "category": categories}, nil),
		OutputSchema: written,
	}, withUser(t.user, t.update))
	mcp.AddTool(s, &mcp.Tool{Name: "forget_memory", Title: "Forget a memory",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
		Description: "Call when the user asks you to forget something: deletes the memory with this id (find it with " +
			"search or list_memories) and its history. It cannot be undone.",
		InputSchema:  input[idIn](du, []string{"id"}, nil, nil),
		OutputSchema: written,
	}, withUser(t.user, t.forget))
	mcp.AddTool(s, &mcp.Tool{Name: "pending", Title: "Memories waiting for the user's yes or no",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(false)},
		Description: "engram keeps what it was unsure of until the user says yes or no. Call without action to list " +
			"those memories (to ask the user about them); call with the memory's id and action confirm, ignore or " +
			"snooze to record the user's answer.",
		InputSchema: input[pendingIn](du, nil, map[string][]any{"action": actions},
			map[string][]string{"action": {"id"}, "for": {"action"}}),
		OutputSchema: output("GET /v1/pending 200", "POST /v1/pending/{id}/{action} 202"),
	}, withUser(t.user, t.pending))
	mcp.AddTool(s, &mcp.Tool{Name: "episodes", Title: "Past sessions", Annotations: readOnly,
		Description: "Call when the user refers to an earlier session (\"what did we do last time?\", \"the deploy " +
			"last week\"): summaries of past sessions with their goal, steps and outcome; the newest, one session's, " +
			"or those matching q.",
		InputSchema:  input[episodesIn](du, nil, nil, nil),
		OutputSchema: output("GET /v1/episodes 200"),
	}, withUser(t.user, t.episodes))
}

func ptr[T any](v T) *T { return &v }

func (t tools) remember(ctx context.Context, req *mcp.CallToolRequest, in rememberIn) (*mcp.CallToolResult, any, error) {
	if in.SessionID == "" {
		// A fact in plain words: written as it is said, its shape read
		// from the words where the caller leaves it out (POST
		// /v1/memories infers it).
		body := map[string]any{"namespace": in.Namespace, "user": in.User, "content": in.Content, "kind": in.Kind,
			"category": in.Category, "subject": in.Subject, "predicate": in.Predicate, "importance": 0.5, "confidence": 1.0}
		if in.Importance != nil {
			body["importance"] = *in.Importance
		}
		raw, err := t.call(ctx, req, http.MethodPost, "/v1/memories", url.Values{"wait": {"true"}}, "", body)
		if err != nil {
			return nil, nil, err
		}
		return result(raw, "")
	}
	if in.TurnIndex == nil {
		return nil, nil, errors.New("turn_index: required with session_id (or leave session_id out to remember a fact)")
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
	// The answer lists what the rules read in the turn at once.
	raw, err := t.call(ctx, req, http.MethodPost, "/v1/events", url.Values{"wait": {"memories"}}, "application/cloudevents+json", ev)
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
