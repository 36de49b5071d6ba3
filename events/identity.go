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
	Agent AgentIdentity `json:"agent,omitzero"`
	User  UserIdentity  `json:"user,omitzero"`
	// Summary is the confirmation summary the user agreed to.
	Summary string `json:"summary,omitempty"` // at most MaxNoteBytes
}

// AgentIdentity is the agent's identity card (seed 004's ShiYi.md): its
// name and role, its tone, its boundaries, what it must not do and what
// it does first.
type AgentIdentity struct {
	Name       string   `json:"name,omitempty"`
	Role       string   `json:"role,omitempty"`
	Tone       string   `json:"tone,omitempty"`
	Boundaries []string `json:"boundaries,omitempty"`
	Avoid      []string `json:"avoid,omitempty"`
	Priorities []string `json:"priorities,omitempty"`
}

// UserIdentity is who the user said they are: how to address them, their
// background, their tech preferences and how they like to work.
type UserIdentity struct {
	Name       string   `json:"name,omitempty"`
	Background string   `json:"background,omitempty"`
	Tech       []string `json:"tech,omitempty"`
	Habits     []string `json:"habits,omitempty"`
}

func (x *IdentityConfirmed) Validate() error {
	a, u := &x.Agent, &x.User
	return firstErr(
		checkProse("agent.name", a.Name, MaxNoteBytes, false),
		checkProse("agent.role", a.Role, MaxNoteBytes, false),
		checkProse("agent.tone", a.Tone, MaxNoteBytes, false),
		checkTexts("agent.boundaries", a.Boundaries, MaxIdentityItems, "items"),
		checkTexts("agent.avoid", a.Avoid, MaxIdentityItems, "items"),
		checkTexts("agent.priorities", a.Priorities, MaxIdentityItems, "items"),
		checkProse("user.name", u.Name, MaxNoteBytes, false),
		checkProse("user.background", u.Background, MaxNoteBytes, false),
		checkTexts("user.tech", u.Tech, MaxIdentityItems, "items"),
		checkTexts("user.habits", u.Habits, MaxIdentityItems, "items"),
		checkProse("summary", x.Summary, MaxNoteBytes, false),
	)
}

// ConsolidationReport is the data of a consolidation.reported event: what
// the nightly consolidation did for one user over a span ending at the
// event's time (seed 000 §7.4 step 8, "保存归纳报告"), counted from the
// read model, with the text a person reads.
type ConsolidationReport struct {
	Date  string    `json:"date"`  // the night, YYYY-MM-DD
	Since time.Time `json:"since"` // the span's start; the event's time ends it
	// What changed in the span.
	Episodes       int `json:"episodes"`        // episodes told
	Learned        int `json:"learned"`         // memories written
	Superseded     int `json:"superseded"`      // replaced by a newer version
	Merged         int `json:"merged"`          // folded into a duplicate
	Archived       int `json:"archived"`        // faded, expired or over the cap
	DaysCompressed int `json:"days_compressed"` // daily logs made knowledge
	Pending        int `json:"pending"`         // waiting for the user now
	// Traits are the persona traits promoted to the agent's card in the
	// span (seed 000 §7.4 step 6): memory ids.
	Traits []string `json:"traits,omitempty"`
	Text   string   `json:"text"` // at most MaxReportBytes
}

func (x *ConsolidationReport) Validate() error {
	return firstErr(
		checkDate("date", x.Date),
		checkTime("since", x.Since),
		checkIDSet("traits", x.Traits, MaxReportedTraits, "memory ids"),
		checkProse("text", x.Text, MaxReportBytes, true),
		checkInt("episodes", x.Episodes, 0, MaxCount),
		checkInt("learned", x.Learned, 0, MaxCount),
		checkInt("superseded", x.Superseded, 0, MaxCount),
		checkInt("merged", x.Merged, 0, MaxCount),
		checkInt("archived", x.Archived, 0, MaxCount),
		checkInt("days_compressed", x.DaysCompressed, 0, MaxCount),
		checkInt("pending", x.Pending, 0, MaxCount),
	)
}
