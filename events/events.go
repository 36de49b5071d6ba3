package events

import (
	"cmp"
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
// conversation, as the agent saw it. It needs content, a tool call, a
// tool result or an attachment.
type TurnRecorded struct {
	SessionID   string       `json:"session_id,omitempty" check:"id" doc:"Required; a turn inside context.compressing may leave it out, and then is the event's."`
	TurnIndex   int          `json:"turn_index"`
	Role        string       `json:"role" check:"enum=role"`
	Content     string       `json:"content,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	Channel     string       `json:"channel,omitempty" check:"id"`
	Project     string       `json:"project,omitempty" check:"id"`
	Speaker     string       `json:"speaker,omitempty" check:"id" doc:"Who said it, by name (group chats, or a known user name)."`
}

func (t *TurnRecorded) Validate() error {
	return firstErr(
		when(t.SessionID == "", "session_id", "required"),
		checkFields(t),
		when(t.Content == "" && len(t.ToolCalls) == 0 && len(t.ToolResults) == 0 && len(t.Attachments) == 0,
			"content", "required: a turn needs content, tool_calls, tool_results or attachments"),
	)
}

// ToolCall is a tool the assistant asked to run.
type ToolCall struct {
	ID    string          `json:"id,omitempty" check:"id"`
	Name  string          `json:"name" check:"id"`
	Input json.RawMessage `json:"input,omitempty" doc:"The tool's arguments exactly as the model produced them, usually an object; engram does not interpret it."`
}

// ToolResult is what a tool returned.
type ToolResult struct {
	ToolCallID string `json:"tool_call_id,omitempty" check:"id"`
	Content    string `json:"content,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
}

// Attachment is a file that came in with a turn or went out with it.
type Attachment struct {
	Name          string `json:"name"`
	Mime          string `json:"mime,omitempty"`
	Size          int64  `json:"size,omitempty" check:"max=MaxAttachmentSize"`
	Path          string `json:"path,omitempty"`
	URL           string `json:"url,omitempty"`
	Direction     string `json:"direction,omitempty" check:"enum=direction,empty" doc:"Empty means inbound."`
	Description   string `json:"description,omitempty"`
	Transcription string `json:"transcription,omitempty"`
}

func (a *Attachment) Validate() error {
	if a.Direction == "" {
		a.Direction = DirectionInbound
	}
	return checkFields(a)
}

// ContextCompressing is the data of a context.compressing event: the turns
// about to leave the agent's context window.
type ContextCompressing struct {
	SessionID string         `json:"session_id" check:"id"`
	Turns     []TurnRecorded `json:"turns" check:"nonempty"`
	Summary   string         `json:"summary,omitempty"`
}

// Validate checks the event and its turns, and fills in the session of
// a turn that left it out; a turn that names another session is refused.
func (c *ContextCompressing) Validate() error {
	for i := range c.Turns {
		c.Turns[i].SessionID = cmp.Or(c.Turns[i].SessionID, c.SessionID)
	}
	return firstErr(checkFields(c), each("turns", len(c.Turns), func(i int) error {
		if s := c.Turns[i].SessionID; s != c.SessionID {
			return fieldErr("session_id", fmt.Sprintf("is %s but the event's session_id is %s; leave it out or make them equal", quote(s), quote(c.SessionID)))
		}
		return nil
	}))
}

// SessionEnded is the data of a session.ended event.
type SessionEnded struct {
	SessionID    string `json:"session_id" check:"id"`
	MessageCount int    `json:"message_count"`
	Reason       string `json:"reason,omitempty"`
}

func (s *SessionEnded) Validate() error { return checkFields(s) }
