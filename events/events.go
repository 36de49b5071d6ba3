package events

import (
	"encoding/json"
	"fmt"
)

// Input event types, published by agents.
const (
	TypeTurnRecorded       = "turn.recorded"
	TypeContextCompressing = "context.compressing"
	TypeSessionEnded       = "session.ended"
)

var inputTypes = []registration{
	{TypeTurnRecorded, func() Data { return new(TurnRecorded) }},
	{TypeContextCompressing, func() Data { return new(ContextCompressing) }},
	{TypeSessionEnded, func() Data { return new(SessionEnded) }},
}

// Extension attributes engram reads from the envelope.
const (
	ExtNamespace = "namespace"
	ExtUser      = "user"
	ExtAgent     = "agent"

	// ExtTraceParent and ExtTraceState are the CloudEvents distributed
	// tracing extension. They are the only other extensions accepted, so
	// that traced producers work while a misspelt "namespace" is still an
	// error rather than an event silently filed under the default one.
	ExtTraceParent = "traceparent"
	ExtTraceState  = "tracestate"
)

const (
	// DefaultNamespace is the namespace of an event that names none.
	DefaultNamespace = "default"
	// DefaultMaxEventBytes is the size limit DecodeStructured applies when
	// given a limit ≤ 0.
	DefaultMaxEventBytes = 1 << 20
	// MaxIDBytes bounds every identifier (see the package doc).
	MaxIDBytes = 256
	// MaxURIBytes bounds source and dataschema.
	MaxURIBytes = 1024
	// MaxTraceBytes bounds traceparent and tracestate.
	MaxTraceBytes = 512
	// MaxCount bounds turn_index and message_count: the largest integer
	// every JSON reader (and a 32-bit int) holds exactly.
	MaxCount = 1<<31 - 1
	// MaxAttachmentSize bounds an attachment's size: the largest integer a
	// JavaScript number holds exactly.
	MaxAttachmentSize = 1<<53 - 1
)

// Roles of a turn.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
	RoleTool      = "tool"
)

// Directions of an attachment.
const (
	DirectionInbound  = "inbound"
	DirectionOutbound = "outbound"
)

// TurnRecorded is the data of a turn.recorded event: one message of a
// conversation, as the agent saw it.
type TurnRecorded struct {
	// SessionID is required; a turn inside context.compressing may leave
	// it out, and Validate of the ContextCompressing fills it in.
	SessionID   string       `json:"session_id,omitempty"`
	TurnIndex   int          `json:"turn_index"` // 0 to MaxCount
	Role        string       `json:"role"`       // one of the Role constants
	Content     string       `json:"content,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	Channel     string       `json:"channel,omitempty"`
	Project     string       `json:"project,omitempty"`
	// Speaker is who said it, by name, when the conversation has more than
	// one person (a group chat) or the agent knows the user's name.
	Speaker string `json:"speaker,omitempty"`
}

// Validate checks a turn: it needs content, a tool call, a tool result
// or an attachment.
func (t *TurnRecorded) Validate() error {
	return firstErr(
		each("tool_calls", len(t.ToolCalls), func(i int) error { return t.ToolCalls[i].Validate() }),
		each("tool_results", len(t.ToolResults), func(i int) error { return t.ToolResults[i].Validate() }),
		each("attachments", len(t.Attachments), func(i int) error { return t.Attachments[i].Validate() }),
		checkID("session_id", t.SessionID, true),
		checkInt("turn_index", t.TurnIndex, 0, MaxCount),
		checkRole("role", t.Role),
		when(t.Content == "" && len(t.ToolCalls) == 0 && len(t.ToolResults) == 0 && len(t.Attachments) == 0,
			"content", "required: a turn needs content, tool_calls, tool_results or attachments"),
		checkID("channel", t.Channel, false),
		checkID("speaker", t.Speaker, false),
		checkID("project", t.Project, false),
	)
}

// ToolCall is a tool the assistant asked to run.
type ToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Input is the tool's arguments exactly as the model produced them,
	// usually an object; engram does not interpret it.
	Input json.RawMessage `json:"input,omitempty"`
}

func (c *ToolCall) Validate() error {
	return firstErr(checkID("id", c.ID, false), checkID("name", c.Name, true))
}

// ToolResult is what a tool returned.
type ToolResult struct {
	ToolCallID string `json:"tool_call_id,omitempty"`
	Content    string `json:"content,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
}

func (r *ToolResult) Validate() error { return checkID("tool_call_id", r.ToolCallID, false) }

// Attachment is a file that came in with a turn or went out with it.
type Attachment struct {
	Name string `json:"name"`
	Mime string `json:"mime,omitempty"`
	Size int64  `json:"size,omitempty"` // 0 to MaxAttachmentSize
	Path string `json:"path,omitempty"`
	URL  string `json:"url,omitempty"`
	// Direction is DirectionInbound or DirectionOutbound; Validate turns
	// an empty one into DirectionInbound.
	Direction     string `json:"direction,omitempty"`
	Description   string `json:"description,omitempty"`
	Transcription string `json:"transcription,omitempty"`
}

func (a *Attachment) Validate() error {
	if a.Direction == "" {
		a.Direction = DirectionInbound
	}
	return firstErr(
		when(a.Name == "", "name", "required"),
		checkInt("size", a.Size, 0, MaxAttachmentSize),
		oneOf("direction", a.Direction, DirectionInbound, DirectionOutbound),
	)
}

// ContextCompressing is the data of a context.compressing event: the turns
// about to leave the agent's context window.
type ContextCompressing struct {
	SessionID string         `json:"session_id"`
	Turns     []TurnRecorded `json:"turns"` // at least one
	Summary   string         `json:"summary,omitempty"`
}

// Validate checks the event and its turns, and fills in the session of
// a turn that left it out; a turn that names another session is refused.
func (c *ContextCompressing) Validate() error {
	return firstErr(
		checkID("session_id", c.SessionID, true),
		when(len(c.Turns) == 0, "turns", "must hold at least one turn"),
		each("turns", len(c.Turns), func(i int) error {
			t := &c.Turns[i]
			switch t.SessionID {
			case "":
				t.SessionID = c.SessionID
			case c.SessionID:
			default:
				return fieldErr("session_id", fmt.Sprintf("is %s but the event's session_id is %s; leave it out or make them equal",
					quote(t.SessionID), quote(c.SessionID)))
			}
			return t.Validate()
		}),
	)
}

// SessionEnded is the data of a session.ended event.
type SessionEnded struct {
	SessionID    string `json:"session_id"`
	MessageCount int    `json:"message_count"` // 0 to MaxCount
	Reason       string `json:"reason,omitempty"`
}

func (s *SessionEnded) Validate() error {
	return firstErr(
		checkID("session_id", s.SessionID, true),
		checkInt("message_count", s.MessageCount, 0, MaxCount),
	)
}

func checkRole(field, role string) error {
	return oneOf(field, role, RoleUser, RoleAssistant, RoleSystem, RoleTool)
}
