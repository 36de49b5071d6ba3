package events

import "time"

// Identity and report event types. identity.confirmed is an agent's (seed
// 004 §3: the first-run identity confirmation, asked once);
// consolidation.reported the consolidator's (seed 000 §7.4 step 8: what
// the night did, saved).
const (
	TypeIdentityConfirmed     = "identity.confirmed"
	TypeConsolidationReported = "consolidation.reported"
)

var identityTypes = []registration{
	{TypeIdentityConfirmed, func() Data { return new(IdentityConfirmed) }},
	{TypeConsolidationReported, func() Data { return new(ConsolidationReport) }},
}

// Limits of the identity and report events.
const (
	MaxIdentityItems  = 20   // each list of an identity
	MaxReportBytes    = 4096 // a report's text
	MaxReportedTraits = 50   // the persona traits one report names
)

// IdentityConfirmed is the data of an identity.confirmed event: what the
// user confirmed on first meeting the agent (seed 004 §3) — who the agent
// is to them and who they are. Every field may be empty: a user who
// declines still confirms, and is not asked again. A later confirmation
// replaces the agent's card; the user's facts are added as core memories.
type IdentityConfirmed struct {
	Agent   AgentIdentity `json:"agent,omitzero"`
	User    UserIdentity  `json:"user,omitzero"`
	Summary string        `json:"summary,omitempty" check:"text,max=MaxNoteBytes" doc:"The confirmation summary the user agreed to."`
}

// AgentIdentity is the agent's identity card (seed 004's ShiYi.md): its
// name and role, its tone, its boundaries, what it must not do and what
// it does first.
type AgentIdentity struct {
	Name       string   `json:"name,omitempty" check:"text,max=MaxNoteBytes"`
	Role       string   `json:"role,omitempty" check:"text,max=MaxNoteBytes"`
	Tone       string   `json:"tone,omitempty" check:"text,max=MaxNoteBytes"`
	Boundaries []string `json:"boundaries,omitempty" check:"text,max=MaxNoteBytes,items=MaxIdentityItems"`
	Avoid      []string `json:"avoid,omitempty" check:"text,max=MaxNoteBytes,items=MaxIdentityItems"`
	Priorities []string `json:"priorities,omitempty" check:"text,max=MaxNoteBytes,items=MaxIdentityItems"`
}

// UserIdentity is who the user said they are: how to address them, their
// background, their tech preferences and how they like to work.
type UserIdentity struct {
	Name       string   `json:"name,omitempty" check:"text,max=MaxNoteBytes"`
	Background string   `json:"background,omitempty" check:"text,max=MaxNoteBytes"`
	Tech       []string `json:"tech,omitempty" check:"text,max=MaxNoteBytes,items=MaxIdentityItems"`
	Habits     []string `json:"habits,omitempty" check:"text,max=MaxNoteBytes,items=MaxIdentityItems"`
}

func (x *IdentityConfirmed) Validate() error { return checkFields(x) }

// ConsolidationReport is the data of a consolidation.reported event: what
// the nightly consolidation did for one user over a span ending at the
// event's time (seed 000 §7.4 step 8, "保存归纳报告"), counted from the
// read model, with the text a person reads.
type ConsolidationReport struct {
	Date  string    `json:"date" check:"date"` // the night
	Since time.Time `json:"since"`             // the span's start; the event's time ends it
	// What changed in the span.
	Episodes       int      `json:"episodes"`        // episodes told
	Learned        int      `json:"learned"`         // memories written
	Superseded     int      `json:"superseded"`      // replaced by a newer version
	Merged         int      `json:"merged"`          // folded into a duplicate
	Archived       int      `json:"archived"`        // faded, expired or over the cap
	DaysCompressed int      `json:"days_compressed"` // daily logs made knowledge
	Pending        int      `json:"pending"`         // waiting for the user now
	Traits         []string `json:"traits,omitempty" check:"id,set,items=MaxReportedTraits" doc:"The persona traits promoted to the agent's card in the span (seed 000 §7.4 step 6): memory ids."`
	Text           string   `json:"text" check:"text,max=MaxReportBytes"`
}

func (x *ConsolidationReport) Validate() error { return checkFields(x) }
