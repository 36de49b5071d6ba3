package memory

import (
	"context"
	"time"
)

// Status is where a memory stands.
type Status string

const (
	StatusActive     Status = "active"     // current; retrieved
	StatusPending    Status = "pending"    // awaits the user's confirm / ignore / snooze
	StatusSuperseded Status = "superseded" // replaced by a newer value; kept as history
	StatusRejected   Status = "rejected"   // ignored by the user, or dropped for low confidence
	StatusArchived   Status = "archived"   // faded; never deleted
	// StatusSnoozed is how a pending memory reads while its snooze lasts;
	// it is never stored (the row stays pending, with snoozed_until).
	StatusSnoozed Status = "snoozed"
)

// Routing thresholds (seed 004 §6): at or above Active a candidate is
// written; at or above Pending it waits for confirmation; below, it is
// dropped (and recorded).
const (
	ConfidenceActive  = 0.85
	ConfidencePending = 0.60
	// ImportantAt is the importance from which a write is announced as
	// memory.write.important (seed 002 §11.2).
	ImportantAt = 0.8
	// IgnoreCooldown is how long a candidate the user ignored is not
	// proposed again for the same subject, predicate and value (seed 004
	// §7): asking again the next time it is said is nagging.
	IgnoreCooldown = 30 * 24 * time.Hour
	// ConfidenceMax bounds what repeated confirmation can raise a
	// memory's confidence to: nothing said is certain.
	ConfidenceMax = 0.99
	// MergeSimilarity is the similarity above which two memories are one
	// (seed 002 §6.1).
	MergeSimilarity = 0.9
)

// Route says what becomes of a candidate with confidence c.
func Route(c float64) Status {
	switch {
	case c >= ConfidenceActive:
		return StatusActive
	case c >= ConfidencePending:
		return StatusPending
	default:
		return StatusRejected
	}
}

// Memory is a semantic memory (tier 1 core profile, tier 2 knowledge).
type Memory struct {
	ID           string   `json:"id"`
	Namespace    string   `json:"namespace"`
	User         string   `json:"user"`
	Agent        string   `json:"agent,omitempty"`
	Tier         int      `json:"tier"`
	Kind         Kind     `json:"kind"`
	Category     Category `json:"category"`
	Project      string   `json:"project,omitempty"`
	Topic        string   `json:"topic,omitempty"`
	Subject      string   `json:"subject"`
	Predicate    string   `json:"predicate"`
	Content      string   `json:"content"`
	Importance   float64  `json:"importance"`
	Confidence   float64  `json:"confidence"`
	Status       Status   `json:"status"`
	Supersedes   string   `json:"supersedes,omitempty"`
	SupersededBy string   `json:"superseded_by,omitempty"`
	Source       string   `json:"source"` // rules, llm, manual
	SessionID    string   `json:"session_id,omitempty"`
	SourceEvents []string `json:"source_events"`
	// SaidAt is when the fact was said (its turn's time): it became
	// current then, and the version said last is the current one.
	// LearnedAt is when engram learned it (the time of the event that
	// wrote it), kept for audit; Created is the same time.
	SaidAt    time.Time `json:"said_at"`
	LearnedAt time.Time `json:"learned_at"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	// ValidTo is when it stopped being current: when the version after
	// it was said, or when it was archived or merged away.
	ValidTo      time.Time `json:"valid_to,omitzero"`
	LastAccessed time.Time `json:"last_accessed,omitzero"`
	AccessCount  int       `json:"access_count"`
	SnoozedUntil time.Time `json:"snoozed_until,omitzero"`
}

// MemoryQuery filters a scope's memories.
type MemoryQuery struct {
	Scope    Scope
	Kind     Kind
	Category Category
	Project  string
	Topic    string
	// Status filters; empty means active. "all" means every status.
	Status string
	// Profile limits the list to the core profile card: tier 1 and
	// identity memories.
	Profile bool
	// AsOf, when set, returns what was current at that time by said
	// time: memories said by then whose successor was not yet said, nor
	// they archived (status is ignored).
	AsOf time.Time
	// CreatedFrom and CreatedTo, when set, keep memories created in
	// [CreatedFrom, CreatedTo).
	CreatedFrom, CreatedTo time.Time
	Limit                  int
}

// Change is one entry of a memory's history, the same shape whatever the
// change: Old and New are the memory's content before and after it (Old
// empty when it was created; both empty on deletion, which keeps no
// content), Fields the other fields it changed, and Note what else
// explains it (the newer memory, a reason, the words said again).
type Change struct {
	MemoryID string           `json:"memory_id"`
	Change   string           `json:"change"` // created, merged, superseded, updated, confirmed, ignored, snoozed, dropped, archived, deleted
	Old      string           `json:"old,omitempty"`
	New      string           `json:"new,omitempty"`
	Fields   map[string]Delta `json:"fields,omitempty"`
	Note     string           `json:"note,omitempty"`
	Cause    string           `json:"cause"` // the event id that caused it
	// SaidAt is when what caused the change was said: for created and
	// merged, the fact; for superseded, the version that replaced it.
	// Time is when engram learned it (the cause event's time).
	SaidAt time.Time `json:"said_at"`
	Time   time.Time `json:"time"`
}

// Delta is one field's value before and after a change, as text.
type Delta struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// MemoryReader reads a scope's memories. Workers use it for the update
// check; it is served by the local read model or, when workers run apart,
// over NATS.
type MemoryReader interface {
	Memories(ctx context.Context, q MemoryQuery) ([]Memory, error)
}
