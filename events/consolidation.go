package events

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Consolidation and retrieval event types, published by engram's workers
// (the consolidator, the retriever) and, for a few, by an operator: a
// person's edit of the scratchpad, a manual archive, a user's erasure.
const (
	TypeEpisodeBuilt      = "episode.built"
	TypeScratchpadUpdated = "scratchpad.updated"
	TypeProfileRefreshed  = "profile.refreshed"
	TypeDailySummarized   = "daily.summarized"
	TypeMemoriesMerged    = "memories.merged"
	TypeMemoriesArchived  = "memories.archived"
	TypeMemoriesAccessed  = "memories.accessed" // access reinforcement from retrieval, batched
	TypeRetrievalDegraded = "retrieval.degraded"
	TypeUserForgotten     = "user.forgotten" // an operator erased this user
	TypeTurnsExpired      = "turns.expired"  // the user's raw turns aged out
)

var consolidationTypes = []registration{
	{TypeEpisodeBuilt, func() Data { return new(Episode) }},
	{TypeScratchpadUpdated, func() Data { return new(Scratchpad) }},
	{TypeProfileRefreshed, func() Data { return new(ProfileRefreshed) }},
	{TypeDailySummarized, func() Data { return new(DailySummary) }},
	{TypeMemoriesMerged, func() Data { return new(MemoriesMerged) }},
	{TypeMemoriesArchived, func() Data { return new(MemoriesArchived) }},
	{TypeMemoriesAccessed, func() Data { return new(MemoriesAccessed) }},
	{TypeRetrievalDegraded, func() Data { return new(RetrievalDegraded) }},
	{TypeUserForgotten, func() Data { return new(UserForgotten) }},
	{TypeTurnsExpired, func() Data { return new(TurnsExpired) }},
}

// Limits of the consolidation and retrieval events' data.
const (
	MaxEpisodeSummaryBytes = 4096  // an episode's summary
	MaxEpisodeActions      = 200   // an episode's actions, and its linked memories
	MaxEpisodeEntities     = 50    // an episode's entities, and its tools
	MaxEpisodeTurns        = 2000  // the turns an episode covers: a longer stretch is several episodes
	MaxNoteBytes           = 1024  // short free text: goal, an action's texts, a scratchpad's focus, questions, steps
	MaxScratchpadBytes     = 8192  // the scratchpad's markdown
	MaxScratchpadItems     = 50    // each of the scratchpad's lists
	MaxProfileMemories     = 200   // the core profile, and what one refresh demotes from it
	MaxDailySummaryBytes   = 16384 // a daily summary
	MaxMemoryBatch         = 1000  // the memories of one merge, archive or access batch
)

// Episode outcomes.
const (
	OutcomeCompleted = "completed"
	OutcomePartial   = "partial"
	OutcomeFailed    = "failed"
	OutcomeAbandoned = "abandoned"
	OutcomeOngoing   = "ongoing"
)

// Sources: what made an episode (session_end, compression, sweep), a
// scratchpad (episode, person) or a daily summary (extraction,
// compression, migration).
const (
	SourceSessionEnd  = "session_end"
	SourceCompression = "compression"
	SourceSweep       = "sweep"
	SourceEpisode     = "episode"
	SourcePerson      = "person"
	SourceMigration   = "migration"
	// SourceExtraction is a part of a day's log written as its turns were
	// extracted (seed 001 §6.3 step 5): one per extraction and day.
	SourceExtraction = "extraction"
)

// Reasons a memory is archived.
const (
	ArchiveDecay   = "decay"   // its decayed score fell below the floor
	ArchiveExpired = "expired" // its priority's lifetime ran out
	ArchiveCap     = "cap"     // evicted by the maintenance cap
	ArchiveManual  = "manual"  // an operator asked
)

// RetrievalFalls are the falls a retriever reports (retrieval.degraded's
// from and to): down the chain vectors → fts → recent, or from a recall
// path of its own to "none" (the answer goes on without it), or from the
// year a yearless time is anchored to, to the latest.
var RetrievalFalls = [][2]string{{"vectors", "fts"}, {"fts", "recent"}, {"time", "fts"}, {"anchor", "latest"},
	{"episodes", "none"}, {"daily", "none"}, {"recent", "none"}, {"scratchpad", "none"}, {"attachments", "none"},
	{"identity", "none"}, {"pending", "none"}}

// Episode is the data of an episode.built event: what happened in a
// session (seed 000 §4.2), mirroring the domain's episode. Turns lists
// the turn indices it covers, ascending, each once; Ended is not before
// Started. Goal may be empty; the lists may be left out.
type Episode struct {
	ID             string       `json:"id" check:"id"`
	SessionID      string       `json:"session_id" check:"id"`
	Summary        string       `json:"summary" check:"text,max=MaxEpisodeSummaryBytes"`
	Goal           string       `json:"goal,omitempty" check:"text,max=MaxNoteBytes"`
	Outcome        string       `json:"outcome" check:"enum=outcome"`
	Started        time.Time    `json:"started"`
	Ended          time.Time    `json:"ended"`
	Actions        []ActionNode `json:"actions,omitempty" check:"items=MaxEpisodeActions"`
	Entities       []string     `json:"entities,omitempty" check:"id,set,items=MaxEpisodeEntities"`
	Tools          []string     `json:"tools,omitempty" check:"id,set,items=MaxEpisodeEntities"`
	LinkedMemories []string     `json:"linked_memories,omitempty" check:"id,set,items=MaxEpisodeActions"`
	Importance     float64      `json:"importance"`
	Source         string       `json:"source" check:"enum=episodeSource"`
	Turns          []int        `json:"turns" check:"ascending,nonempty,items=MaxEpisodeTurns"`
}

func (x *Episode) Validate() error {
	return firstErr(checkFields(x), when(x.Ended.Before(x.Started), "ended", "is before started"))
}

// ActionNode is one step of an episode: a tool call with its key
// parameters and what came of it, or a decision. It needs a tool or a
// decision.
type ActionNode struct {
	Tool     string `json:"tool,omitempty" check:"id"`
	Params   string `json:"params,omitempty" check:"text,max=MaxNoteBytes"` // the key parameters, abbreviated
	Result   string `json:"result,omitempty" check:"text,max=MaxNoteBytes"` // a summary of the result
	Success  bool   `json:"success,omitempty"`
	Error    string `json:"error,omitempty" check:"text,max=MaxNoteBytes"`
	Decision string `json:"decision,omitempty" check:"text,max=MaxNoteBytes"`
	Turn     int    `json:"turn"` // the turn it happened in
}

func (a *ActionNode) Validate() error {
	return firstErr(when(a.Tool == "" && a.Decision == "", "tool", "required: an action needs a tool or a decision"), checkFields(a))
}

// Scratchpad is the data of a scratchpad.updated event: the user's whole
// working memory as it now stands (seed 000 §4.3), replacing the last.
// Content may be empty (a person cleared it). EpisodeID names the episode
// it was written from, and is required for SourceEpisode and refused for
// SourcePerson.
type Scratchpad struct {
	Content        string   `json:"content" check:"text,empty,max=MaxScratchpadBytes" doc:"Markdown."`
	ActiveProjects []string `json:"active_projects,omitempty" check:"id,set,items=MaxScratchpadItems"`
	CurrentFocus   string   `json:"current_focus,omitempty" check:"text,max=MaxNoteBytes"`
	OpenQuestions  []string `json:"open_questions,omitempty" check:"text,max=MaxNoteBytes,items=MaxScratchpadItems"`
	NextSteps      []string `json:"next_steps,omitempty" check:"text,max=MaxNoteBytes,items=MaxScratchpadItems"`
	Source         string   `json:"source" check:"enum=scratchpadSource"`
	EpisodeID      string   `json:"episode_id,omitempty" check:"id"`
}

func (x *Scratchpad) Validate() error {
	return firstErr(checkFields(x),
		when(x.Source == SourcePerson && x.EpisodeID != "", "episode_id", "is only for source "+SourceEpisode),
		when(x.Source != SourcePerson && x.EpisodeID == "", "episode_id", "required"))
}

// ProfileRefreshed is the data of a profile.refreshed event: the tier-1
// core profile after a refresh, in full (possibly empty), and the
// memories the refresh took out of it. No memory is listed twice.
type ProfileRefreshed struct {
	MemoryIDs []string `json:"memory_ids" check:"id,set,items=MaxProfileMemories"`
	Demoted   []string `json:"demoted,omitempty" check:"id,set,items=MaxProfileMemories"`
}

func (x *ProfileRefreshed) Validate() error {
	return firstErr(checkFields(x), each("demoted", len(x.Demoted), func(i int) error {
		return when(slices.Contains(x.MemoryIDs, x.Demoted[i]), "",
			quote(x.Demoted[i])+" is also in memory_ids; a demoted memory has left the profile")
	}))
}

// MarshalJSON writes nil MemoryIDs as [], not null: an empty profile is
// valid, and DecodeData refuses null where a list belongs.
func (x ProfileRefreshed) MarshalJSON() ([]byte, error) {
	type plain ProfileRefreshed // without this method
	if x.MemoryIDs == nil {
		x.MemoryIDs = []string{}
	}
	return json.Marshal(plain(x))
}

// DailySummary is the data of a daily.summarized event: one day's tier-3
// event log entry for a channel (seed 001 §3.2.3). A day is written whole
// (migration, compression) or in parts as it goes (extraction: Part names
// the stretch of turns, and a later part of the same name replaces it);
// compression summarizes the whole day, its parts included, and marks
// them all compressed.
type DailySummary struct {
	Date      string `json:"date" check:"date"`
	Channel   string `json:"channel" check:"id"`
	Summary   string `json:"summary" check:"text,max=MaxDailySummaryBytes"`
	RawTokens int    `json:"raw_tokens" doc:"The estimated tokens of what was summarized."`
	Source    string `json:"source" check:"enum=dailySource"`
	Part      string `json:"part,omitempty" check:"id" doc:"Which part of the day: required for source extraction, refused otherwise."`
}

func (x *DailySummary) Validate() error {
	return firstErr(checkFields(x),
		when(x.Source == SourceExtraction && x.Part == "", "part", "required"),
		when(x.Source != SourceExtraction && x.Part != "", "part",
			"is only for source "+SourceExtraction+"; a day written whole has no parts"))
}

// MemoriesMerged is the data of a memories.merged event: the memories of
// Merged are one with Into, which is kept with the given importance and,
// when an LLM rewrote it, the given content (nil keeps its content). Into
// is not among Merged, and none is listed twice.
type MemoriesMerged struct {
	Into       string   `json:"into" check:"id"`
	Merged     []string `json:"merged" check:"id,set,nonempty,items=MaxMemoryBatch"`
	Importance float64  `json:"importance"`
	Content    *string  `json:"content,omitempty" check:"text,max=MaxMemoryContentBytes"`
	ClusterID  string   `json:"cluster_id" check:"id"` // the dedupe cluster that decided it
	Model      string   `json:"model,omitempty" check:"id" doc:"The model that judged the members one fact (seed 000 §5.7); absent when their words alone decided."`
}

func (x *MemoriesMerged) Validate() error {
	return firstErr(
		when(x.Content != nil && *x.Content == "", "content", "must not be empty; leave it out to keep the memory's content"),
		checkFields(x), each("merged", len(x.Merged), func(i int) error {
			return when(x.Merged[i] == x.Into, "", quote(x.Into)+" is the memory merged into; list only the others")
		}))
}

// MemoriesArchived is the data of a memories.archived event: memories that
// faded, expired or were evicted. Archived memories are kept, not
// deleted. None is listed twice.
type MemoriesArchived struct {
	MemoryIDs []string `json:"memory_ids" check:"id,set,nonempty,items=MaxMemoryBatch"`
	Reason    string   `json:"reason" check:"enum=archiveReason"`
}

func (x *MemoriesArchived) Validate() error { return checkFields(x) }

// MemoriesAccessed is the data of a memories.accessed event: retrieval
// handed these memories to an agent, which reinforces them. Accesses are
// batched: each memory once, with how often and when it was last handed
// out.
type MemoriesAccessed struct {
	Accesses []Access `json:"accesses" check:"nonempty,items=MaxMemoryBatch"`
}

func (x *MemoriesAccessed) Validate() error {
	return firstErr(checkFields(x), unique("accesses", "memory_id", len(x.Accesses),
		func(i int) string { return x.Accesses[i].MemoryID }, "add the counts into one"))
}

// Access is how often one memory was retrieved in a batch.
type Access struct {
	MemoryID string    `json:"memory_id" check:"id"`
	Count    int       `json:"count" check:"min=1"`
	Last     time.Time `json:"last"`
}

// RetrievalDegraded is the data of a retrieval.degraded event: a recall
// path failed and the retriever answered without it, one of
// RetrievalFalls.
type RetrievalDegraded struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason" check:"text,max=MaxReasonBytes"`
}

func (x *RetrievalDegraded) Validate() error {
	if err := checkFields(x); err != nil || slices.Contains(RetrievalFalls, [2]string{x.From, x.To}) {
		return err
	}
	i := slices.IndexFunc(RetrievalFalls, func(f [2]string) bool { return f[0] == x.From }) // each path falls to one
	if i < 0 {
		return fieldErr("from", "must be a recall path of RetrievalFalls, not "+quote(x.From))
	}
	return fieldErr("to", fmt.Sprintf("must be %s after from %s, not %s", RetrievalFalls[i][1], quote(x.From), quote(x.To)))
}

// UserForgotten is the data of a user.forgotten event: an operator erased
// the envelope's user, every memory, turn and change of theirs.
type UserForgotten struct {
	Reason string `json:"reason,omitempty" check:"text,max=MaxReasonBytes"`
}

func (x *UserForgotten) Validate() error { return checkFields(x) }

// TurnsExpired is the data of a turns.expired event: the envelope's
// user's raw turns (turn.recorded and context.compressing) and extraction
// requests (extraction.requested, which carried turns' text) stored in
// the stream before sequence BeforeSeq aged out. It is the receipt of
// retention: the stream drops those events and every read model drops the
// turns they recorded and the requests, so a rebuild agrees with a live
// read model.
type TurnsExpired struct {
	BeforeSeq    uint64     `json:"before_seq" check:"min=1,max=9007199254740992"`
	StoredBefore time.Time  `json:"stored_before" doc:"The retention cutoff: the events dropped were stored before it (the stream's clock). For people; before_seq decides."`
	Replaced     []EventRef `json:"replaced,omitempty" check:"items=MaxMemoryBatch" doc:"The events engram wrote word for word from the turns (an extractive episode, the scratchpad, a day's log) that retention published again without their words and erased from the stream: every read model forgets it applied them."`
}

// EventRef names one event: its source and id.
type EventRef struct {
	Source string `json:"source" check:"id"`
	ID     string `json:"id" check:"id"`
}

func (x *TurnsExpired) Validate() error { return checkFields(x) }
