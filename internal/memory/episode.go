package memory

import "time"

// Episode is what happened in a session (seed 000 §4.2): its goal, its
// outcome, the actions taken, the entities and tools involved.
type Episode struct {
	ID             string       `json:"id"`
	Namespace      string       `json:"namespace"`
	User           string       `json:"user"`
	SessionID      string       `json:"session_id"`
	Summary        string       `json:"summary"`
	Goal           string       `json:"goal"`
	Outcome        string       `json:"outcome"` // completed, partial, failed, abandoned, ongoing
	Started        time.Time    `json:"started"`
	Ended          time.Time    `json:"ended"`
	Actions        []ActionNode `json:"actions"`
	Entities       []string     `json:"entities"`
	Tools          []string     `json:"tools"`
	LinkedMemories []string     `json:"linked_memories"`
	Importance     float64      `json:"importance"`
	Source         string       `json:"source"` // session_end, compression, sweep
	Turns          []int        `json:"turns"`  // the turn indices it covers
	AccessCount    int          `json:"access_count"`
}

// Episode outcomes.
const (
	OutcomeCompleted = "completed"
	OutcomePartial   = "partial"
	OutcomeFailed    = "failed"
	OutcomeAbandoned = "abandoned"
	OutcomeOngoing   = "ongoing"
)

// ActionNode is one step an agent took (seed 000 §4.2): a tool call with
// its key parameters and what came of it, or a decision.
type ActionNode struct {
	Tool     string `json:"tool,omitempty"`
	Params   string `json:"params,omitempty"` // the key parameters, abbreviated
	Result   string `json:"result,omitempty"` // a summary of the result
	Success  bool   `json:"success"`
	Error    string `json:"error,omitempty"`
	Decision string `json:"decision,omitempty"`
	Turn     int    `json:"turn"`
}

// Scratchpad is a user's working memory (seed 000 §4.3): a short markdown
// note of what they are doing now, kept current at each session end and
// editable by a person.
type Scratchpad struct {
	Namespace      string    `json:"namespace"`
	User           string    `json:"user"`
	Content        string    `json:"content"` // markdown, about 2,000 characters
	ActiveProjects []string  `json:"active_projects"`
	CurrentFocus   string    `json:"current_focus"`
	OpenQuestions  []string  `json:"open_questions"`
	NextSteps      []string  `json:"next_steps"`
	Updated        time.Time `json:"updated,omitzero"` // absent while there is none
	Source         string    `json:"source"`           // episode, person
	// EpisodeID is the episode engram wrote it from (source episode).
	EpisodeID string `json:"episode_id,omitempty"`
}

// ScratchpadMaxChars bounds the scratchpad's markdown (seed 000 §4.3).
const ScratchpadMaxChars = 2000

// DailySummary is a day's tier-3 event log entry (seed 001 §3.2.3).
type DailySummary struct {
	Namespace  string `json:"namespace"`
	User       string `json:"user"`
	Date       string `json:"date"` // YYYY-MM-DD
	Channel    string `json:"channel"`
	Summary    string `json:"summary"`
	RawTokens  int    `json:"raw_tokens"`
	Compressed bool   `json:"compressed"`
	// Part and Source are set on a stored row as it is (DailyRows): the
	// part of the day it is ("" for the day written whole) and what wrote
	// it; the day a reader sees folds its parts into one.
	Part   string `json:"part,omitempty"`
	Source string `json:"source,omitempty"`
}
