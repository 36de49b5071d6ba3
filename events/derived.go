package events

import (
	"cmp"
	"encoding/json"
	"fmt"
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

var (
	extractionReasons = []string{ReasonQuiet, ReasonTokenCap, ReasonCompressing, ReasonSessionEnded, ReasonSweep, ReasonManual, ReasonRedrive}
	extractors        = []string{ExtractorRules, ExtractorLLM}
	kinds             = []string{KindFact, KindPreference, KindRule, KindSkill, KindError, KindContext, KindIdentity}
	categories        = []string{CategoryIdentity, CategoryConfig, CategoryCredential, CategoryDecision, CategorySolution,
		CategoryEvent, CategoryConversation, CategoryTemp, CategoryDebug}
)

// Kinds are the kinds of memory, in their documented order.
func Kinds() []string { return append([]string(nil), kinds...) }

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
	TurnIndex   int          `json:"turn_index"` // 0 to MaxCount
	Role        string       `json:"role"`
	Content     string       `json:"content,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	Time        time.Time    `json:"time"` // RFC 3339; the turn event's time
	Project     string       `json:"project,omitempty"`
	Channel     string       `json:"channel,omitempty"` // which day's log it is written in
}

func (t *ExtractionTurn) Validate() error {
	return firstErr(
		each("tool_calls", len(t.ToolCalls), func(i int) error { return t.ToolCalls[i].Validate() }),
		each("tool_results", len(t.ToolResults), func(i int) error { return t.ToolResults[i].Validate() }),
		checkInt("turn_index", t.TurnIndex, 0, MaxCount),
		checkRole("role", t.Role),
		checkTime("time", t.Time),
		checkID("project", t.Project, false),
		checkID("channel", t.Channel, false),
	)
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

func (x *ExtractionRequested) Validate() error {
	return firstErr(
		checkID("request_id", x.RequestID, true),
		checkID("session_id", x.SessionID, true),
		oneOf("reason", x.Reason, extractionReasons...),
		checkCount("turns", len(x.Turns), 1, MaxExtractionTurns, "turns"),
		each("turns", len(x.Turns), func(i int) error {
			if err := x.Turns[i].Validate(); err != nil {
				return err
			}
			if prev, cur := x.Turns[max(i-1, 0)].TurnIndex, x.Turns[i].TurnIndex; i > 0 && cur <= prev {
				return fieldErr("turn_index", fmt.Sprintf("is %d after %d; turns must be in ascending turn_index order, each once", cur, prev))
			}
			return nil
		}),
	)
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
	// SaidAt is when the candidate was said: the time of the turn it came
	// from. It, not when the event was published, decides which version
	// of a fact is current. Events from before it existed leave it out;
	// engram then uses the event's time.
	SaidAt time.Time `json:"said_at,omitzero"`
}

func (c *Candidate) Validate() error {
	return firstErr(
		checkMemory(c.Kind, c.Category, c.Subject, c.Predicate, c.Content, c.Project, c.Topic),
		checkFraction("importance", c.Importance),
		checkFraction("confidence", c.Confidence),
	)
}

// checkMemory applies the rules of the fields every memory-describing
// event shares, in the order a producer reads them.
func checkMemory(kind, category, subject, predicate, content, project, topic string) error {
	return firstErr(
		oneOf("kind", kind, kinds...),
		oneOf("category", category, categories...),
		checkName("subject", subject, MaxMemorySubjectBytes, true),
		checkName("predicate", predicate, MaxPredicateBytes, true),
		checkProse("content", content, MaxMemoryContentBytes, true),
		checkID("project", project, false),
		checkID("topic", topic, false),
	)
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

func (x *MemoryExtracted) Validate() error {
	return firstErr(
		checkID("request_id", x.RequestID, true),
		checkID("session_id", x.SessionID, true),
		oneOf("extractor", x.Extractor, extractors...),
		checkID("model", x.Model, false),
		checkInt("usage.prompt_tokens", x.Usage.PromptTokens, 0, MaxCount),
		checkInt("usage.completion_tokens", x.Usage.CompletionTokens, 0, MaxCount),
		checkInt("calls", x.Calls, 0, MaxCount),
		checkIndexes("turns", x.Turns, MaxExtractionTurns),
		checkCount("candidates", len(x.Candidates), 0, MaxCandidates, "candidates"),
		when(x.Pass != "" && x.Pass != PassTurn, "pass", `must be "`+PassTurn+`" or left out`),
		when(x.Pass != "" && (x.Extractor != ExtractorRules || len(x.Turns) != 1), "pass", "a turn's reading is the rules' of one turn"),
		each("candidates", len(x.Candidates), func(i int) error { return x.Candidates[i].Validate() }),
	)
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

func (x *ExtractionFailed) Validate() error {
	return firstErr(
		checkID("request_id", x.RequestID, true),
		checkID("session_id", x.SessionID, true),
		checkProse("reason", x.Reason, MaxReasonBytes, true),
		checkInt("attempts", x.Attempts, 0, MaxCount),
		checkIndexes("turns", x.Turns, MaxExtractionTurns),
	)
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
	// SaidAt is when the fact was said, when that is not the event's own
	// time (a fact written down later); left out, the event's time.
	SaidAt time.Time `json:"said_at,omitzero"`
}

// Validate checks the memory. It refuses tier 0, which DecodeData never
// makes: a Go producer's Tier 0 is left out on the wire.
func (x *MemoryAdded) Validate() error {
	return firstErr(
		checkID("memory_id", x.MemoryID, false),
		checkInt("tier", x.Tier, TierCore, TierKnowledge),
		checkMemory(x.Kind, x.Category, x.Subject, x.Predicate, x.Content, x.Project, x.Topic),
		checkFraction("importance", x.Importance),
		checkFraction("confidence", x.Confidence),
		checkID("session_id", x.SessionID, false),
	)
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

func (x *MemoryUpdated) Validate() error {
	if err := checkID("memory_id", x.MemoryID, true); err != nil {
		return err
	}
	if *x == (MemoryUpdated{MemoryID: x.MemoryID}) {
		return fieldErr("", "must change at least one of content, kind, category, subject, predicate, project, topic, importance, confidence")
	}
	set := func(s *string, check func(s string) error) error {
		if s == nil {
			return nil
		}
		return check(*s)
	}
	return firstErr(
		set(x.Content, func(s string) error { return checkProse("content", s, MaxMemoryContentBytes, true) }),
		set(x.Kind, func(s string) error { return oneOf("kind", s, kinds...) }),
		set(x.Category, func(s string) error { return oneOf("category", s, categories...) }),
		set(x.Subject, func(s string) error { return checkName("subject", s, MaxMemorySubjectBytes, true) }),
		set(x.Predicate, func(s string) error { return checkName("predicate", s, MaxPredicateBytes, true) }),
		set(x.Project, func(s string) error { return checkID("project", s, false) }),
		set(x.Topic, func(s string) error { return checkID("topic", s, false) }),
		checkFraction("importance", *cmp.Or(x.Importance, new(0.0))),
		checkFraction("confidence", *cmp.Or(x.Confidence, new(0.0))),
	)
}

// MemoryDeleted is the data of a memory.deleted event.
type MemoryDeleted struct {
	MemoryID string `json:"memory_id"`
	Reason   string `json:"reason,omitempty"` // at most MaxReasonBytes
}

func (x *MemoryDeleted) Validate() error {
	return firstErr(
		checkID("memory_id", x.MemoryID, true),
		checkProse("reason", x.Reason, MaxReasonBytes, false),
	)
}

// PendingDecision is the data of pending.confirmed, pending.ignored and
// pending.snoozed: what became of a pending memory. Until is required for
// pending.snoozed (the memory is not offered again before then) and
// refused for the other two.
type PendingDecision struct {
	MemoryID string     `json:"memory_id"`
	Until    *time.Time `json:"until,omitempty"`
}

// Validate checks the memory and, if given, the time; DecodeData also
// holds Until to the event type.
func (x *PendingDecision) Validate() error {
	if err := checkID("memory_id", x.MemoryID, true); err != nil {
		return err
	}
	if x.Until != nil {
		return checkTime("until", *x.Until)
	}
	return nil
}

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

func (x *MemoryImportant) Validate() error {
	return firstErr(
		checkID("memory_id", x.MemoryID, true),
		checkMemory(x.Kind, x.Category, x.Subject, x.Predicate, x.Content, "", ""),
		checkFraction("importance", x.Importance),
		checkID("session_id", x.SessionID, false),
		checkID("cause_event_id", x.CauseEventID, true),
	)
}
