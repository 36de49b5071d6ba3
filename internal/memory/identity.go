package memory

import "time"

// Identity is what a user confirmed on first meeting the agent (seed 004
// §3): the agent's card, and when. Who the user said they are is kept as
// core memories.
type Identity struct {
	Agent     AgentIdentity `json:"agent"`
	Summary   string        `json:"summary,omitempty"`
	Confirmed time.Time     `json:"confirmed"`
}

// AgentIdentity is the agent's identity card: name and role, tone,
// boundaries, what it must not do, what it does first.
type AgentIdentity struct {
	Name       string   `json:"name,omitempty"`
	Role       string   `json:"role,omitempty"`
	Tone       string   `json:"tone,omitempty"`
	Boundaries []string `json:"boundaries,omitempty"`
	Avoid      []string `json:"avoid,omitempty"`
	Priorities []string `json:"priorities,omitempty"`
}

// Empty reports whether the card says nothing (the user declined).
func (a AgentIdentity) Empty() bool {
	return a.Name == "" && a.Role == "" && a.Tone == "" && len(a.Boundaries) == 0 && len(a.Avoid) == 0 && len(a.Priorities) == 0
}

// Report is what a nightly consolidation did for a user (seed 000 §7.4
// step 8), from Since to Until.
type Report struct {
	Date           string    `json:"date"`
	Since          time.Time `json:"since"`
	Until          time.Time `json:"until"`
	Episodes       int       `json:"episodes"`
	Learned        int       `json:"learned"`
	Superseded     int       `json:"superseded"`
	Merged         int       `json:"merged"`
	Archived       int       `json:"archived"`
	DaysCompressed int       `json:"days_compressed"`
	Pending        int       `json:"pending"`
	Traits         []string  `json:"traits,omitempty"`
	Text           string    `json:"text"`
}
