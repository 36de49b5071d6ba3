package events

import "encoding/json"

// Input event types, published by agents.
const (
	TypeTurnRecorded       = "turn.recorded"
	TypeContextCompressing = "context.compressing"
	TypeSessionEnded       = "session.ended"
)

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
	// MaxIDBytes bounds every identifier: event id, subject, namespace,
	// user, agent, session id, channel, project, topic, model, tool call
	// ids and names, request, memory and cause event ids.
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
	SessionID   string       `json:"session_id"`
	TurnIndex   int          `json:"turn_index"`
	Role        string       `json:"role"`
	Content     string       `json:"content"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	Channel     string       `json:"channel,omitempty"`
	Project     string       `json:"project,omitempty"`
	// Speaker is who said it, by name, when the conversation has more than
	// one person (a group chat) or the agent knows the user's name.
	Speaker string `json:"speaker,omitempty"`
}

// ToolCall is a tool the assistant asked to run.
type ToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Input is the tool's arguments exactly as the model produced them,
	// usually an object; engram does not interpret it.
	Input json.RawMessage `json:"input,omitempty"`
}

// ToolResult is what a tool returned.
type ToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
	IsError    bool   `json:"is_error,omitempty"`
}

// Attachment is a file that came in with a turn or went out with it.
type Attachment struct {
	Name string `json:"name"`
	Mime string `json:"mime,omitempty"`
	Size int64  `json:"size,omitempty"`
	Path string `json:"path,omitempty"`
	URL  string `json:"url,omitempty"`
	// Direction is DirectionInbound or DirectionOutbound; DecodeData turns
	// an empty one into DirectionInbound.
	Direction     string `json:"direction,omitempty"`
	Description   string `json:"description,omitempty"`
	Transcription string `json:"transcription,omitempty"`
}

// ContextCompressing is the data of a context.compressing event: the turns
// about to leave the agent's context window.
type ContextCompressing struct {
	SessionID string `json:"session_id"`
	// Turns may leave session_id empty; DecodeData fills in SessionID.
	Turns   []TurnRecorded `json:"turns"`
	Summary string         `json:"summary,omitempty"`
}

// SessionEnded is the data of a session.ended event.
type SessionEnded struct {
	SessionID    string `json:"session_id"`
	MessageCount int    `json:"message_count"`
	Reason       string `json:"reason,omitempty"`
}

// SessionID returns the session of decoded data (any data type of this
// package, by value or pointer), or "" for data without one:
// MemoryUpdated, MemoryDeleted, PendingDecision, a MemoryAdded or
// MemoryImportant that names no session, every consolidation and
// retrieval type but Episode, and anything else.
func SessionID(data any) string {
	switch d := data.(type) {
	case TurnRecorded:
		return d.SessionID
	case ContextCompressing:
		return d.SessionID
	case SessionEnded:
		return d.SessionID
	case ExtractionRequested:
		return d.SessionID
	case MemoryExtracted:
		return d.SessionID
	case ExtractionFailed:
		return d.SessionID
	case MemoryAdded:
		return d.SessionID
	case MemoryImportant:
		return d.SessionID
	case Episode:
		return d.SessionID
	case *TurnRecorded:
		if d != nil {
			return d.SessionID
		}
	case *ContextCompressing:
		if d != nil {
			return d.SessionID
		}
	case *SessionEnded:
		if d != nil {
			return d.SessionID
		}
	case *ExtractionRequested:
		if d != nil {
			return d.SessionID
		}
	case *MemoryExtracted:
		if d != nil {
			return d.SessionID
		}
	case *ExtractionFailed:
		if d != nil {
			return d.SessionID
		}
	case *MemoryAdded:
		if d != nil {
			return d.SessionID
		}
	case *MemoryImportant:
		if d != nil {
			return d.SessionID
		}
	case *Episode:
		if d != nil {
			return d.SessionID
		}
	}
	return ""
}
