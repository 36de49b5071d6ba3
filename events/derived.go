package events

import (
	"encoding/json"
	"fmt"
	"slices"
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

var derivedTypes = []registration{
	{TypeExtractionRequested, func() Data { return new(ExtractionRequested) }},
	{TypeMemoryExtracted, func() Data { return new(MemoryExtracted) }},
	{TypeExtractionFailed, func() Data { return new(ExtractionFailed) }},
	// Left out, tier is TierKnowledge and confidence 1: a person said it.
	{TypeMemoryAdded, func() Data { return &MemoryAdded{Tier: TierKnowledge, Confidence: 1} }},
	{TypeMemoryUpdated, func() Data { return new(MemoryUpdated) }},
	{TypeMemoryDeleted, func() Data { return new(MemoryDeleted) }},
	{TypePendingConfirmed, func() Data { return new(PendingDecision) }},
	{TypePendingIgnored, func() Data { return new(PendingDecision) }},
	{TypePendingSnoozed, func() Data { return new(PendingDecision) }},
	{TypeMemoryImportant, func() Data { return new(MemoryImportant) }},
}

// Limits of the derived events' data.
const (
	MaxExtractionTurns    = 500  // the turns of one extraction request, and those a result or failure lists
	MaxCandidates         = 200  // the candidates of one extraction result
	MaxMemorySubjectBytes = 256  // a memory's subject
	MaxPredicateBytes     = 128  // a memory's predicate
	MaxMemoryContentBytes = 4096 // a memory's content
	MaxReasonBytes        = 1024 // the reason of a failure, a deletion, a degradation or an erasure
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

// Kinds are the kinds of memory, in their documented order.
func Kinds() []string { return slices.Clone(enums["kind"]) }

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
	Role        string       `json:"role" check:"enum=role"`
	Content     string       `json:"content,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	Time        time.Time    `json:"time"` // the turn event's time
	Project     string       `json:"project,omitempty" check:"id"`
	Channel     string       `json:"channel,omitempty" check:"id" doc:"The turn's channel, which names its day's log (daily.summarized)."`
}

// ExtractionRequested is the data of an extraction.requested event: turns
// of one session to extract memories from. Turns are in ascending
// turn_index order with no index twice. A request must fit the event size
// limit (DefaultMaxEventBytes): split a larger batch into several.
type ExtractionRequested struct {
	RequestID string           `json:"request_id" check:"id"`
	SessionID string           `json:"session_id" check:"id"`
	Reason    string           `json:"reason" check:"enum=extractionReason"`
	Turns     []ExtractionTurn `json:"turns" check:"nonempty,items=MaxExtractionTurns"`
	Summary   string           `json:"summary,omitempty" doc:"The agent's own summary, from context.compressing."`
}

func (x *ExtractionRequested) Validate() error {
	return firstErr(checkFields(x), each("turns", len(x.Turns), func(i int) error {
		if cur := x.Turns[i].TurnIndex; i > 0 && cur <= x.Turns[i-1].TurnIndex {
			return fieldErr("turn_index", fmt.Sprintf("is %d after %d; turns must be in ascending turn_index order, each once", cur, x.Turns[i-1].TurnIndex))
		}
		return nil
	}))
}

// Candidate is a memory an extractor proposes.
type Candidate struct {
	Kind       string    `json:"kind" check:"enum=kind"`
	Category   string    `json:"category" check:"enum=category" doc:"The decay class: how fast the memory fades."`
	Subject    string    `json:"subject" check:"id,max=MaxMemorySubjectBytes"`
	Predicate  string    `json:"predicate" check:"id,max=MaxPredicateBytes"`
	Content    string    `json:"content" check:"text,max=MaxMemoryContentBytes"`
	Project    string    `json:"project,omitempty" check:"id"`
	Topic      string    `json:"topic,omitempty" check:"id"`
	Importance float64   `json:"importance"`
	Confidence float64   `json:"confidence"`
	Updates    bool      `json:"updates,omitempty" doc:"The candidate replaces what is known of its subject and predicate."`
	SaidAt     time.Time `json:"said_at,omitzero" doc:"When it was said: the time of the turn it came from. It, not when the event was published, decides which version of a fact is current. Left out (events from before it existed), the event's time."`
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
	RequestID  string      `json:"request_id" check:"id"`
	SessionID  string      `json:"session_id" check:"id"`
	Extractor  string      `json:"extractor" check:"enum=extractor"`
	Pass       string      `json:"pass,omitempty" check:"enum=pass" doc:"Absent for a request's result. \"turn\": the rules' reading of one turn as it arrived (request_id names the reading); the turn still waits for its request. Then extractor is rules and turns holds that one turn."`
	Model      string      `json:"model,omitempty" check:"id"`
	Usage      Usage       `json:"usage"`
	Calls      int         `json:"calls" doc:"LLM calls made."`
	Turns      []int       `json:"turns" check:"ascending,nonempty,items=MaxExtractionTurns"`
	Candidates []Candidate `json:"candidates" check:"items=MaxCandidates"`
}

func (x *MemoryExtracted) Validate() error {
	return firstErr(checkFields(x),
		when(x.Pass != "" && (x.Extractor != ExtractorRules || len(x.Turns) != 1), "pass", "a turn's reading is the rules' of one turn"))
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
	RequestID string `json:"request_id" check:"id"`
	SessionID string `json:"session_id" check:"id"`
	Reason    string `json:"reason" check:"text,max=MaxReasonBytes"`
	Attempts  int    `json:"attempts"`
	Turns     []int  `json:"turns" check:"ascending,nonempty,items=MaxExtractionTurns"`
}

func (x *ExtractionFailed) Validate() error { return checkFields(x) }

// MemoryAdded is the data of a memory.added event: a memory written by
// hand or by a rule, not proposed by an extractor.
//
// On the wire tier and confidence may be left out: DecodeData makes an
// absent tier TierKnowledge and an absent confidence 1 (a person said
// it). A Go producer must set Confidence, which json.Marshal always
// writes; Tier 0 is left out and so means TierKnowledge. Validate refuses
// tier 0, which DecodeData never makes.
type MemoryAdded struct {
	MemoryID   string    `json:"memory_id,omitempty" check:"id" doc:"engram picks one when it is left out."`
	Tier       int       `json:"tier,omitempty" check:"min=TierCore,max=TierKnowledge" doc:"1, the core profile, or 2."`
	Kind       string    `json:"kind" check:"enum=kind"`
	Category   string    `json:"category" check:"enum=category"`
	Subject    string    `json:"subject" check:"id,max=MaxMemorySubjectBytes"`
	Predicate  string    `json:"predicate" check:"id,max=MaxPredicateBytes"`
	Content    string    `json:"content" check:"text,max=MaxMemoryContentBytes"`
	Project    string    `json:"project,omitempty" check:"id"`
	Topic      string    `json:"topic,omitempty" check:"id"`
	Importance float64   `json:"importance"`
	Confidence float64   `json:"confidence"`
	SessionID  string    `json:"session_id,omitempty" check:"id"`
	SaidAt     time.Time `json:"said_at,omitzero" doc:"When the fact was said, if not at the event's time (a fact written down later). It decides which version of a fact is current."`
}

func (x *MemoryAdded) Validate() error { return checkFields(x) }

// MemoryUpdated is the data of a memory.updated event: a patch of a
// memory. A nil field is left as it is; at least one must be set. Project
// and Topic may be set to "" to clear them; the other strings may not be
// empty.
type MemoryUpdated struct {
	MemoryID   string   `json:"memory_id" check:"id"`
	Content    *string  `json:"content,omitempty" check:"text,max=MaxMemoryContentBytes"`
	Kind       *string  `json:"kind,omitempty" check:"enum=kind"`
	Category   *string  `json:"category,omitempty" check:"enum=category"`
	Subject    *string  `json:"subject,omitempty" check:"id,max=MaxMemorySubjectBytes"`
	Predicate  *string  `json:"predicate,omitempty" check:"id,max=MaxPredicateBytes"`
	Project    *string  `json:"project,omitempty" check:"id,empty"`
	Topic      *string  `json:"topic,omitempty" check:"id,empty"`
	Importance *float64 `json:"importance,omitempty"`
	Confidence *float64 `json:"confidence,omitempty"`
}

func (x *MemoryUpdated) Validate() error {
	return firstErr(checkFields(x), when(*x == (MemoryUpdated{MemoryID: x.MemoryID}), "",
		"must change at least one of content, kind, category, subject, predicate, project, topic, importance, confidence"))
}

// MemoryDeleted is the data of a memory.deleted event.
type MemoryDeleted struct {
	MemoryID string `json:"memory_id" check:"id"`
	Reason   string `json:"reason,omitempty" check:"text,max=MaxReasonBytes"`
}

func (x *MemoryDeleted) Validate() error { return checkFields(x) }

// PendingDecision is the data of pending.confirmed, pending.ignored and
// pending.snoozed: what became of a pending memory. Until is required for
// pending.snoozed (the memory is not offered again before then) and
// refused for the other two.
type PendingDecision struct {
	MemoryID string     `json:"memory_id" check:"id"`
	Until    *time.Time `json:"until,omitempty"`
}

// Validate checks the memory and the time; DecodeData also holds Until to
// the event type.
func (x *PendingDecision) Validate() error { return checkFields(x) }

// validateAs holds Until to the event type: only a snooze has, and
// needs, an end.
func (x *PendingDecision) validateAs(eventType string) error {
	switch snooze := eventType == TypePendingSnoozed; {
	case snooze && x.Until == nil:
		return fieldErr("until", "required: a snooze needs an end")
	case !snooze && x.Until != nil:
		return fieldErr("until", "is only for "+TypePendingSnoozed)
	}
	return nil
}

// MemoryImportant is the data of a memory.write.important event: a
// memory of high importance was written (seed 002 §11.2; the worker
// chooses the threshold), for downstream rules and notifications.
type MemoryImportant struct {
	MemoryID     string  `json:"memory_id" check:"id"`
	Kind         string  `json:"kind" check:"enum=kind"`
	Category     string  `json:"category" check:"enum=category"`
	Subject      string  `json:"subject" check:"id,max=MaxMemorySubjectBytes"`
	Predicate    string  `json:"predicate" check:"id,max=MaxPredicateBytes"`
	Content      string  `json:"content" check:"text,max=MaxMemoryContentBytes"`
	Importance   float64 `json:"importance"`
	SessionID    string  `json:"session_id,omitempty" check:"id"`
	CauseEventID string  `json:"cause_event_id" check:"id" doc:"The id of the event that wrote the memory."`
}

func (x *MemoryImportant) Validate() error { return checkFields(x) }
