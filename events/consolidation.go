package events

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
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

// Recall paths of the retriever, best first: the degradation chain.
const (
	RecallVectors = "vectors"
	RecallFTS     = "fts"
	RecallRecent  = "recent"
)

var (
	outcomes        = []string{OutcomeCompleted, OutcomePartial, OutcomeFailed, OutcomeAbandoned, OutcomeOngoing}
	episodeSources  = []string{SourceSessionEnd, SourceCompression, SourceSweep}
	scratchSources  = []string{SourceEpisode, SourcePerson}
	dailySources    = []string{SourceExtraction, SourceCompression, SourceMigration}
	archiveReasons  = []string{ArchiveDecay, ArchiveExpired, ArchiveCap, ArchiveManual}
	degradedFrom    = []string{RecallVectors, RecallFTS}
	degradedTo      = []string{RecallFTS, RecallRecent}
	recallRank      = map[string]int{RecallVectors: 0, RecallFTS: 1, RecallRecent: 2}
	calendarDatePat = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`) // copied into schema/daily.summarized.json
)

// Episode is the data of an episode.built event: what happened in a
// session (seed 000 §4.2), mirroring the domain's episode. Turns lists
// the turn indices it covers, ascending, each once; Ended is not before
// Started. Goal may be empty; the lists may be left out.
type Episode struct {
	ID             string       `json:"id"`
	SessionID      string       `json:"session_id"`
	Summary        string       `json:"summary"` // at most MaxEpisodeSummaryBytes
	Goal           string       `json:"goal,omitempty"`
	Outcome        string       `json:"outcome"` // one of the Outcome constants
	Started        time.Time    `json:"started"`
	Ended          time.Time    `json:"ended"`
	Actions        []ActionNode `json:"actions,omitempty"`         // at most MaxEpisodeActions
	Entities       []string     `json:"entities,omitempty"`        // at most MaxEpisodeEntities
	Tools          []string     `json:"tools,omitempty"`           // at most MaxEpisodeEntities
	LinkedMemories []string     `json:"linked_memories,omitempty"` // at most MaxEpisodeActions
	Importance     float64      `json:"importance"`
	Source         string       `json:"source"` // SourceSessionEnd, SourceCompression or SourceSweep
	Turns          []int        `json:"turns"`  // 1 to MaxEpisodeTurns
}

func (x *Episode) Validate() error {
	return firstErr(
		checkID("id", x.ID, true),
		checkID("session_id", x.SessionID, true),
		checkProse("summary", x.Summary, MaxEpisodeSummaryBytes, true),
		checkProse("goal", x.Goal, MaxNoteBytes, false),
		oneOf("outcome", x.Outcome, outcomes...),
		checkTime("started", x.Started),
		checkTime("ended", x.Ended),
		when(x.Ended.Before(x.Started), "ended", "is before started"),
		checkCount("actions", len(x.Actions), 0, MaxEpisodeActions, "actions"),
		checkIDSet("entities", x.Entities, MaxEpisodeEntities, "entities"),
		checkIDSet("tools", x.Tools, MaxEpisodeEntities, "tools"),
		checkIDSet("linked_memories", x.LinkedMemories, MaxEpisodeActions, "memory ids"),
		checkFraction("importance", x.Importance),
		oneOf("source", x.Source, episodeSources...),
		checkIndexes("turns", x.Turns, MaxEpisodeTurns),
		each("actions", len(x.Actions), func(i int) error { return x.Actions[i].Validate() }),
	)
}

// ActionNode is one step of an episode: a tool call with its key
// parameters and what came of it, or a decision. It needs a tool or a
// decision.
type ActionNode struct {
	Tool     string `json:"tool,omitempty"`
	Params   string `json:"params,omitempty"` // the key parameters, abbreviated
	Result   string `json:"result,omitempty"` // a summary of the result
	Success  bool   `json:"success,omitempty"`
	Error    string `json:"error,omitempty"`
	Decision string `json:"decision,omitempty"`
	Turn     int    `json:"turn"` // the turn it happened in
}

func (a *ActionNode) Validate() error {
	return firstErr(
		when(a.Tool == "" && a.Decision == "", "tool", "required: an action needs a tool or a decision"),
		checkID("tool", a.Tool, false),
		checkProse("params", a.Params, MaxNoteBytes, false),
		checkProse("result", a.Result, MaxNoteBytes, false),
		checkProse("error", a.Error, MaxNoteBytes, false),
		checkProse("decision", a.Decision, MaxNoteBytes, false),
		checkInt("turn", a.Turn, 0, MaxCount),
	)
}

// Scratchpad is the data of a scratchpad.updated event: the user's whole
// working memory as it now stands (seed 000 §4.3), replacing the last.
// Content may be empty (a person cleared it). EpisodeID names the episode
// it was written from, and is required for SourceEpisode and refused for
// SourcePerson.
type Scratchpad struct {
	Content        string   `json:"content"` // markdown, at most MaxScratchpadBytes
	ActiveProjects []string `json:"active_projects,omitempty"`
	CurrentFocus   string   `json:"current_focus,omitempty"`
	OpenQuestions  []string `json:"open_questions,omitempty"`
	NextSteps      []string `json:"next_steps,omitempty"`
	Source         string   `json:"source"` // SourceEpisode or SourcePerson
	EpisodeID      string   `json:"episode_id,omitempty"`
}

func (x *Scratchpad) Validate() error {
	return firstErr(
		checkProse("content", x.Content, MaxScratchpadBytes, false),
		checkIDSet("active_projects", x.ActiveProjects, MaxScratchpadItems, "projects"),
		checkProse("current_focus", x.CurrentFocus, MaxNoteBytes, false),
		checkTexts("open_questions", x.OpenQuestions, MaxScratchpadItems, "questions"),
		checkTexts("next_steps", x.NextSteps, MaxScratchpadItems, "steps"),
		oneOf("source", x.Source, scratchSources...),
		when(x.Source == SourcePerson && x.EpisodeID != "", "episode_id", "is only for source "+SourceEpisode),
		checkID("episode_id", x.EpisodeID, x.Source != SourcePerson),
	)
}

// ProfileRefreshed is the data of a profile.refreshed event: the tier-1
// core profile after a refresh, in full (possibly empty), and the
// memories the refresh took out of it. No memory is listed twice.
type ProfileRefreshed struct {
	MemoryIDs []string `json:"memory_ids"`        // at most MaxProfileMemories
	Demoted   []string `json:"demoted,omitempty"` // at most MaxProfileMemories
}

func (x *ProfileRefreshed) Validate() error {
	return firstErr(
		checkIDSet("memory_ids", x.MemoryIDs, MaxProfileMemories, "memory ids"),
		checkIDSet("demoted", x.Demoted, MaxProfileMemories, "memory ids"),
		each("demoted", len(x.Demoted), func(i int) error {
			if slices.Contains(x.MemoryIDs, x.Demoted[i]) {
				return fieldErr("", fmt.Sprintf("%s is also in memory_ids; a demoted memory has left the profile", quote(x.Demoted[i])))
			}
			return nil
		}),
	)
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
	Date      string `json:"date"` // YYYY-MM-DD
	Channel   string `json:"channel"`
	Summary   string `json:"summary"`    // at most MaxDailySummaryBytes
	RawTokens int    `json:"raw_tokens"` // the estimated tokens of what was summarized
	Source    string `json:"source"`     // SourceExtraction, SourceCompression or SourceMigration
	// Part is required for SourceExtraction and refused otherwise.
	Part string `json:"part,omitempty"`
}

func (x *DailySummary) Validate() error {
	return firstErr(
		checkDate("date", x.Date),
		checkID("channel", x.Channel, true),
		checkProse("summary", x.Summary, MaxDailySummaryBytes, true),
		checkInt("raw_tokens", x.RawTokens, 0, MaxCount),
		oneOf("source", x.Source, dailySources...),
		checkID("part", x.Part, x.Source == SourceExtraction),
		when(x.Source != SourceExtraction && x.Part != "", "part",
			"is only for source "+SourceExtraction+"; a day written whole has no parts"),
	)
}

// checkDate checks a calendar date written YYYY-MM-DD.
func checkDate(field, s string) error {
	switch {
	case s == "":
		return fieldErr(field, "required")
	case !calendarDatePat.MatchString(s):
		return fieldErr(field, "must be a date like 2025-06-01, not "+quote(s))
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return fieldErr(field, "is not a real date: "+quote(s))
	}
	return nil
}

// MemoriesMerged is the data of a memories.merged event: the memories of
// Merged are one with Into, which is kept with the given importance and,
// when an LLM rewrote it, the given content. Into is not among Merged,
// and none is listed twice.
type MemoriesMerged struct {
	Into       string   `json:"into"`
	Merged     []string `json:"merged"` // 1 to MaxMemoryBatch
	Importance float64  `json:"importance"`
	// Content is the kept memory's new content when an LLM rewrote it,
	// not empty and at most MaxMemoryContentBytes; nil keeps its content.
	Content   *string `json:"content,omitempty"`
	ClusterID string  `json:"cluster_id"` // the dedupe cluster that decided it
	// Model is the model that judged the members one fact (seed 000
	// §5.7); empty when their words alone decided.
	Model string `json:"model,omitempty"`
}

func (x *MemoriesMerged) Validate() error {
	return firstErr(
		checkID("into", x.Into, true),
		checkIDSet("merged", x.Merged, MaxMemoryBatch, "memory ids"),
		checkCount("merged", len(x.Merged), 1, MaxMemoryBatch, "memory ids"),
		each("merged", len(x.Merged), func(i int) error {
			if x.Merged[i] == x.Into {
				return fieldErr("", fmt.Sprintf("%s is the memory merged into; list only the others", quote(x.Into)))
			}
			return nil
		}),
		checkFraction("importance", x.Importance),
		when(x.Content != nil && *x.Content == "", "content", "must not be empty; leave it out to keep the memory's content"),
		checkProse("content", *cmp.Or(x.Content, new("")), MaxMemoryContentBytes, false),
		checkID("cluster_id", x.ClusterID, true),
		checkID("model", x.Model, false),
	)
}

// MemoriesArchived is the data of a memories.archived event: memories that
// faded, expired or were evicted. Archived memories are kept, not
// deleted. None is listed twice.
type MemoriesArchived struct {
	MemoryIDs []string `json:"memory_ids"` // 1 to MaxMemoryBatch
	Reason    string   `json:"reason"`     // one of the Archive constants
}

func (x *MemoriesArchived) Validate() error {
	return firstErr(
		checkIDSet("memory_ids", x.MemoryIDs, MaxMemoryBatch, "memory ids"),
		checkCount("memory_ids", len(x.MemoryIDs), 1, MaxMemoryBatch, "memory ids"),
		oneOf("reason", x.Reason, archiveReasons...),
	)
}

// MemoriesAccessed is the data of a memories.accessed event: retrieval
// handed these memories to an agent, which reinforces them. Accesses are
// batched: each memory once, with how often and when it was last handed
// out.
type MemoriesAccessed struct {
	Accesses []Access `json:"accesses"` // 1 to MaxMemoryBatch
}

func (x *MemoriesAccessed) Validate() error {
	seen := make(map[string]int, len(x.Accesses))
	return firstErr(
		checkCount("accesses", len(x.Accesses), 1, MaxMemoryBatch, "accesses"),
		each("accesses", len(x.Accesses), func(i int) error {
			a := x.Accesses[i]
			err := firstErr(
				checkID("memory_id", a.MemoryID, true),
				checkInt("count", a.Count, 1, MaxCount),
				checkTime("last", a.Last),
			)
			if err != nil {
				return err
			}
			if j, ok := seen[a.MemoryID]; ok {
				return fieldErr("memory_id", fmt.Sprintf("%s is also accesses[%d]; add the counts into one", quote(a.MemoryID), j))
			}
			seen[a.MemoryID] = i
			return nil
		}),
	)
}

// Access is how often one memory was retrieved in a batch.
type Access struct {
	MemoryID string    `json:"memory_id"`
	Count    int       `json:"count"` // at least 1
	Last     time.Time `json:"last"`  // RFC 3339
}

// RetrievalDegraded is the data of a retrieval.degraded event: a recall
// path failed and the retriever fell back down the chain vectors → fts →
// recent. To is below From.
type RetrievalDegraded struct {
	From   string `json:"from"`   // RecallVectors or RecallFTS
	To     string `json:"to"`     // RecallFTS or RecallRecent
	Reason string `json:"reason"` // at most MaxReasonBytes
}

func (x *RetrievalDegraded) Validate() error {
	err := firstErr(
		oneOf("from", x.From, degradedFrom...),
		oneOf("to", x.To, degradedTo...),
	)
	if err != nil {
		return err
	}
	if recallRank[x.To] <= recallRank[x.From] {
		return fieldErr("to", fmt.Sprintf("is not below %s in the chain %s → %s → %s",
			quote(x.From), RecallVectors, RecallFTS, RecallRecent))
	}
	return checkProse("reason", x.Reason, MaxReasonBytes, true)
}

// UserForgotten is the data of a user.forgotten event: an operator erased
// the envelope's user, every memory, turn and change of theirs.
type UserForgotten struct {
	Reason string `json:"reason,omitempty"` // at most MaxReasonBytes
}

func (x *UserForgotten) Validate() error {
	return checkProse("reason", x.Reason, MaxReasonBytes, false)
}

// TurnsExpired is the data of a turns.expired event: the envelope's
// user's raw turns (turn.recorded and context.compressing) and extraction
// requests (extraction.requested, which carried turns' text) stored in
// the stream before sequence BeforeSeq aged out. It is the receipt of
// retention: the stream drops those events and every read model drops the
// turns they recorded and the requests, so a rebuild agrees with a live
// read model.
type TurnsExpired struct {
	BeforeSeq uint64 `json:"before_seq"` // at least 1
	// StoredBefore is the retention cutoff: the events dropped were stored
	// before it (the stream's clock). For people; BeforeSeq decides.
	StoredBefore time.Time `json:"stored_before"`
	// Replaced are the events engram wrote word for word from the turns
	// (an extractive episode, the scratchpad, a day's log) that retention
	// published again without their words and erased from the stream:
	// every read model forgets it applied them, as a rebuild never did.
	Replaced []EventRef `json:"replaced,omitempty"` // at most MaxMemoryBatch
}

// EventRef names one event: its source and id.
type EventRef struct {
	Source string `json:"source"`
	ID     string `json:"id"`
}

func (x *TurnsExpired) Validate() error {
	return firstErr(
		checkInt("before_seq", x.BeforeSeq, 1, 1<<53),
		checkTime("stored_before", x.StoredBefore),
		checkCount("replaced", len(x.Replaced), 0, MaxMemoryBatch, "events"),
		each("replaced", len(x.Replaced), func(i int) error {
			return firstErr(checkID("source", x.Replaced[i].Source, true), checkID("id", x.Replaced[i].ID, true))
		}),
	)
}
