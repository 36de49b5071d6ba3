package memory

import "time"

// Kind says what sort of knowledge a memory holds (seeds 003 and 000).
type Kind string

const (
	KindFact       Kind = "fact"
	KindPreference Kind = "preference"
	KindRule       Kind = "rule"
	KindSkill      Kind = "skill"
	KindError      Kind = "error"
	KindContext    Kind = "context"
	KindIdentity   Kind = "identity"
)

// Kinds lists every valid Kind.
var Kinds = []Kind{KindFact, KindPreference, KindRule, KindSkill, KindError, KindContext, KindIdentity}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return contains(Kinds, k) }

// Category is a memory's decay class (seed 001 §8.2): how fast it fades.
type Category string

const (
	CategoryIdentity     Category = "identity"
	CategoryConfig       Category = "config"
	CategoryCredential   Category = "credential"
	CategoryDecision     Category = "decision"
	CategorySolution     Category = "solution"
	CategoryEvent        Category = "event"
	CategoryConversation Category = "conversation"
	CategoryTemp         Category = "temp"
	CategoryDebug        Category = "debug"
)

// Categories lists every valid Category.
var Categories = []Category{
	CategoryIdentity, CategoryConfig, CategoryCredential, CategoryDecision, CategorySolution,
	CategoryEvent, CategoryConversation, CategoryTemp, CategoryDebug,
}

// Valid reports whether c is one of Categories.
func (c Category) Valid() bool { return contains(Categories, c) }

// Candidate is a fact an extractor (rules or an LLM) proposes to remember.
// It is not yet a memory: confidence routing, supersede and merge decide
// what becomes of it when the extraction event is applied.
type Candidate struct {
	Kind       Kind     `json:"kind"`
	Category   Category `json:"category"`
	Subject    string   `json:"subject"`
	Predicate  string   `json:"predicate"`
	Content    string   `json:"content"`
	Project    string   `json:"project,omitempty"`
	Topic      string   `json:"topic,omitempty"`
	Importance float64  `json:"importance"`
	Confidence float64  `json:"confidence"`
	// Updates is true when the extractor believes the fact replaces a known
	// one with the same subject and predicate.
	Updates bool `json:"updates,omitempty"`
	// SaidAt is when it was said: the time of the turn it came from; zero
	// when the extractor could not tell.
	SaidAt time.Time `json:"said_at,omitzero"`
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
