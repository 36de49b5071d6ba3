package memory

import "time"

// Scope is whose memory something is. Every read path takes one and returns
// only what belongs to it.
type Scope struct {
	Namespace string
	User      string
}

// Validate reports a missing namespace or user.
func (s Scope) Validate() error {
	if s.Namespace == "" {
		return Errorf(EINVALID, "namespace is required")
	}
	if s.User == "" {
		return Errorf(EINVALID, "user is required")
	}
	return nil
}

// Turn is one recorded conversation turn (tier 3 raw history, L0).
type Turn struct {
	ID        int64 // read-model row id
	Scope     Scope
	Agent     string
	SessionID string
	TurnIndex int
	Role      string
	Content   string
	Channel   string
	Project   string
	Time      time.Time
	Tokens    int
	// ToolCalls, ToolResults and Attachments are kept as the JSON the agent sent.
	ToolCalls   string
	ToolResults string
	Attachments string
	Extracted   bool
	EventSource string
	EventID     string
}
