package events

import (
	"encoding/json"
	"time"
)

// Derived event types, published by engram's workers. An operator or an
// agent may publish some of them too: memory.added for a manual memory,
// memory.updated and memory.deleted for an edit, pending.* for a decision
// on a pending memory.
const (
	TypeExtractionRequested = "extraction.requested"
	TypeMemoryExtracted     = "memory.extracted"
	TypeExtractionFailed    = "extraction.failed"
	TypeMemoryAdded         = "memory.added" // manual, or by a rule
	TypeMemoryUpdated       = "memory.updated"
	TypeMemoryDeleted       = "memory.deleted"
	TypePendingConfirmed    = "pending.confirmed"
	TypePendingIgnored      = "pending.ignored"
	TypePendingSnoozed      = "pending.snoozed"
	TypeMemoryImportant     = "memory.write.important"
)

// types is every event type, inputs first; Types hands out copies.
var types = []string{
	TypeTurnRecorded, TypeContextCompressing, TypeSessionEnded,
	TypeExtractionRequested, TypeMemoryExtracted, TypeExtractionFailed,
	TypeMemoryAdded, TypeMemoryUpdated, TypeMemoryDeleted,
	TypePendingConfirmed, TypePendingIgnored, TypePendingSnoozed,
	TypeMemoryImportant,
	TypeEpisodeBuilt, TypeScratchpadUpdated, TypeProfileRefreshed, TypeDailySummarized,
	TypeMemoriesMerged, TypeMemoriesArchived, TypeMemoriesAccessed,
	TypeRetrievalDegraded, TypeUserForgotten,
	TypeMemoryEmbedded, TypeTurnsExpired,
}

// Types returns every event type Validate accepts: the input types, then
// the derived ones.
func Types() []string { return append([]string(nil), types...) }

const (
	// MaxExtractionTurns bounds the turns of one extraction request, and
	// the turn indices an extraction result or failure lists.
	MaxExtractionTurns = 500
	// MaxCandidates bounds the candidates of one extraction result.
	MaxCandidates = 200
	// MaxMemorySubjectBytes, MaxPredicateBytes and MaxMemoryContentBytes
	// bound a memory's subject, predicate and content.
	MaxMemorySubjectBytes = 256
	MaxPredicateBytes     = 128
	MaxMemoryContentBytes = 4096
	// MaxReasonBytes bounds the reason of an extraction failure or a
	// deletion.
	MaxReasonBytes = 1024
)

// Reasons for an extraction request.
const (
	ReasonQuiet        = "quiet"         // the session went quiet
	ReasonTokenCap     = "token_cap"     // unextracted turns passed the token cap
	ReasonCompressing  = "compressing"   // context.compressing
	ReasonSessionEnded = "session_ended" // session.ended
	ReasonSweep        = "sweep"         // the daily sweep
	ReasonManual       = "manual"        // an operator asked
	ReasonRedrive      = "redrive"       // a dead-lettered request sent again
)

// Extractors that produce candidates.
const (
	ExtractorRules = "rules"
	ExtractorLLM   = "llm"
)

// PassTurn marks a memory.extracted that is the rules' reading of one turn
// as it arrived, not a request's result.
const PassTurn = "turn"

// Kinds of memory: what sort of knowledge it holds.
const (
	KindFact       = "fact"
	KindPreference = "preference"
	KindRule       = "rule"
	KindSkill      = "skill"
	KindError      = "error"
	KindContext    = "context"
	KindIdentity   = "identity"
)

// Categories of memory: its decay class, how fast it fades.
const (
	CategoryIdentity     = "identity"
	CategoryConfig       = "config"
	CategoryCredential   = "credential"
	CategoryDecision     = "decision"
	CategorySolution     = "solution"
	CategoryEvent        = "event"
	CategoryConversation = "conversation"
	CategoryTemp         = "temp"
	CategoryDebug        = "debug"
)

// Tiers of memory.
const (
	TierCore      = 1 // the core profile
	TierKnowledge = 2 // everything else; the default
)

// ExtractionTurn is a snapshot of one turn inside an extraction request:
// the request is self-contained so the extractor needs no read model.
// Content may be empty: a turn that carried only attachments snapshots to
// nothing, and refusing it would stall the request its neighbours are in.
type ExtractionTurn struct {
	TurnIndex   int          `json:"turn_index"`
	Role        string       `json:"role"`
	Content     string       `json:"content"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	Time        time.Time    `json:"time"` // RFC 3339; the turn event's time
	Project     string       `json:"project,omitempty"`
}

// ExtractionRequested is the data of an extraction.requested event: turns
// of one session to extract memories from. Turns are in ascending
// turn_index order with no index twice. A request must fit the event size
// limit (DefaultMaxEventBytes): split a larger batch into several.
type ExtractionRequested struct {
	RequestID string           `json:"request_id"`
	SessionID string           `json:"session_id"`
	Reason    string           `json:"reason"` // one of the Reason constants
	Turns     []ExtractionTurn `json:"turns"`  // 1 to MaxExtractionTurns
	// Summary is the agent's own summary, from context.compressing.
	Summary string `json:"summary,omitempty"`
}

// Candidate is a memory an extractor proposes.
type Candidate struct {
	Kind       string  `json:"kind"`     // one of the Kind constants
	Category   string  `json:"category"` // one of the Category constants
	Subject    string  `json:"subject"`
	Predicate  string  `json:"predicate"`
	Content    string  `json:"content"`
	Project    string  `json:"project,omitempty"`
	Topic      string  `json:"topic,omitempty"`
	Importance float64 `json:"importance"` // 0 to 1
	Confidence float64 `json:"confidence"` // 0 to 1
	// Updates says the candidate replaces what is known of its subject and
	// predicate rather than adding to it.
	Updates bool `json:"updates,omitempty"`
}

// Usage is what an extraction cost an LLM endpoint.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// MemoryExtracted is the data of a memory.extracted event: the result of
// one extraction request. Turns lists the turn indices covered, in
// ascending order with no repeats; Candidates may be empty.
//
// With Pass PassTurn it is instead the rules' reading of one turn as it
// arrived (RequestID names the reading, not a request): its memories are
// readable at once, and the turn still waits for its request, which is
// what marks it extracted.
type MemoryExtracted struct {
	RequestID  string      `json:"request_id"`
	SessionID  string      `json:"session_id"`
	Extractor  string      `json:"extractor"`      // ExtractorRules or ExtractorLLM
	Pass       string      `json:"pass,omitempty"` // "" (a request's result) or PassTurn
	Model      string      `json:"model,omitempty"`
	Usage      Usage       `json:"usage"`
	Calls      int         `json:"calls"`      // LLM calls made
	Turns      []int       `json:"turns"`      // 1 to MaxExtractionTurns
	Candidates []Candidate `json:"candidates"` // 0 to MaxCandidates
}

// MarshalJSON writes nil Candidates as [], not null: a result with no
// candidates is valid, and DecodeData refuses null where a list belongs.
func (x MemoryExtracted) MarshalJSON() ([]byte, error) {
	type plain MemoryExtracted // without this method
	if x.Candidates == nil {
		x.Candidates = []Candidate{}
	}
	return json.Marshal(plain(x))
}

// ExtractionFailed is the data of an extraction.failed event: a request
// gave up after its last try. Turns is as in MemoryExtracted.
type ExtractionFailed struct {
	RequestID string `json:"request_id"`
	SessionID string `json:"session_id"`
	Reason    string `json:"reason"` // at most MaxReasonBytes
	Attempts  int    `json:"attempts"`
	Turns     []int  `json:"turns"`
}

// MemoryAdded is the data of a memory.added event: a memory written by
// hand or by a rule, not proposed by an extractor.
//
// On the wire tier and confidence may be left out: DecodeData makes an
// absent tier TierKnowledge and an absent confidence 1 (a person said
// it). A Go producer must set Confidence, which json.Marshal always
// writes; Tier 0 is left out and so means TierKnowledge.
type MemoryAdded struct {
	MemoryID   string  `json:"memory_id,omitempty"` // engram picks one when empty
	Tier       int     `json:"tier,omitempty"`      // TierCore or TierKnowledge
	Kind       string  `json:"kind"`
	Category   string  `json:"category"`
	Subject    string  `json:"subject"`
	Predicate  string  `json:"predicate"`
	Content    string  `json:"content"`
	Project    string  `json:"project,omitempty"`
	Topic      string  `json:"topic,omitempty"`
	Importance float64 `json:"importance"`
	Confidence float64 `json:"confidence"`
	SessionID  string  `json:"session_id,omitempty"`
}

// MemoryUpdated is the data of a memory.updated event: a patch of a
// memory. A nil field is left as it is; at least one must be set. Project
// and Topic may be set to "" to clear them; the other strings may not be
// empty.
type MemoryUpdated struct {
	MemoryID   string   `json:"memory_id"`
	Content    *string  `json:"content,omitempty"`
	Kind       *string  `json:"kind,omitempty"`
	Category   *string  `json:"category,omitempty"`
	Subject    *string  `json:"subject,omitempty"`
	Predicate  *string  `json:"predicate,omitempty"`
	Project    *string  `json:"project,omitempty"`
	Topic      *string  `json:"topic,omitempty"`
	Importance *float64 `json:"importance,omitempty"`
	Confidence *float64 `json:"confidence,omitempty"`
}

// MemoryDeleted is the data of a memory.deleted event.
type MemoryDeleted struct {
	MemoryID string `json:"memory_id"`
	Reason   string `json:"reason,omitempty"` // at most MaxReasonBytes
}

// PendingDecision is the data of pending.confirmed, pending.ignored and
// pending.snoozed: what became of a pending memory. Until is required for
// pending.snoozed (the memory is not offered again before then) and
// refused for the other two.
type PendingDecision struct {
	MemoryID string     `json:"memory_id"`
	Until    *time.Time `json:"until,omitempty"`
}

// MemoryImportant is the data of a memory.write.important event: a
// memory of high importance was written (seed 002 §11.2; the worker
// chooses the threshold), for downstream rules and notifications.
type MemoryImportant struct {
	MemoryID     string  `json:"memory_id"`
	Kind         string  `json:"kind"`
	Category     string  `json:"category"`
	Subject      string  `json:"subject"`
	Predicate    string  `json:"predicate"`
	Content      string  `json:"content"`
	Importance   float64 `json:"importance"`
	SessionID    string  `json:"session_id,omitempty"`
	CauseEventID string  `json:"cause_event_id"` // the event that wrote the memory
}
