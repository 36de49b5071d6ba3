package events

import (
	"encoding/json"
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

const (
	// MaxEpisodeSummaryBytes bounds an episode's summary.
	MaxEpisodeSummaryBytes = 4096
	// MaxEpisodeActions bounds an episode's actions, and its linked
	// memories.
	MaxEpisodeActions = 200
	// MaxEpisodeEntities bounds an episode's entities, and its tools.
	MaxEpisodeEntities = 50
	// MaxEpisodeTurns bounds the turn indices an episode covers: a longer
	// stretch of a session is told as several episodes.
	MaxEpisodeTurns = 2000
	// MaxNoteBytes bounds the short free-text fields: an episode's goal,
	// an action's params, result, error and decision, and a scratchpad's
	// current focus and each of its questions and steps.
	MaxNoteBytes = 1024
	// MaxScratchpadBytes bounds the scratchpad's markdown.
	MaxScratchpadBytes = 8192
	// MaxScratchpadItems bounds each of the scratchpad's lists.
	MaxScratchpadItems = 50
	// MaxProfileMemories bounds the core profile, and what one refresh
	// demotes from it.
	MaxProfileMemories = 200
	// MaxDailySummaryBytes bounds a daily summary.
	MaxDailySummaryBytes = 16384
	// MaxMemoryBatch bounds the memories of one merge, archive or access
	// batch.
	MaxMemoryBatch = 1000
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
// scratchpad (episode, person) or a daily summary (compression,
// migration).
const (
	SourceSessionEnd  = "session_end"
	SourceCompression = "compression"
	SourceSweep       = "sweep"
	SourceEpisode     = "episode"
	SourcePerson      = "person"
	SourceMigration   = "migration"
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

// ActionNode is one step of an episode: a tool call with its key
// parameters and what came of it, or a decision. It needs a tool or a
// decision.
type ActionNode struct {
	Tool     string `json:"tool,omitempty"`
	Params   string `json:"params,omitempty"` // the key parameters, abbreviated
	Result   string `json:"result,omitempty"` // a summary of the result
	Success  bool   `json:"success"`
	Error    string `json:"error,omitempty"`
	Decision string `json:"decision,omitempty"`
	Turn     int    `json:"turn"` // the turn it happened in
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

// ProfileRefreshed is the data of a profile.refreshed event: the tier-1
// core profile after a refresh, in full (possibly empty), and the
// memories the refresh took out of it. No memory is listed twice.
type ProfileRefreshed struct {
	MemoryIDs []string `json:"memory_ids"`        // at most MaxProfileMemories
	Demoted   []string `json:"demoted,omitempty"` // at most MaxProfileMemories
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
// event log entry for a channel (seed 001 §3.2.3).
type DailySummary struct {
	Date      string `json:"date"` // YYYY-MM-DD
	Channel   string `json:"channel"`
	Summary   string `json:"summary"`    // at most MaxDailySummaryBytes
	RawTokens int    `json:"raw_tokens"` // the estimated tokens of what was summarized
	Source    string `json:"source"`     // SourceCompression or SourceMigration
}

// MemoriesMerged is the data of a memories.merged event: the memories of
// Merged are one with Into, which is kept with the given importance and,
// when an LLM rewrote it, the given content. Into is not among Merged,
// and none is listed twice.
type MemoriesMerged struct {
	Into       string   `json:"into"`
	Merged     []string `json:"merged"` // 1 to MaxMemoryBatch
	Importance float64  `json:"importance"`
	Content    string   `json:"content,omitempty"` // at most MaxMemoryContentBytes
	ClusterID  string   `json:"cluster_id"`        // the dedupe cluster that decided it
}

// MemoriesArchived is the data of a memories.archived event: memories that
// faded, expired or were evicted. Archived memories are kept, not
// deleted. None is listed twice.
type MemoriesArchived struct {
	MemoryIDs []string `json:"memory_ids"` // 1 to MaxMemoryBatch
	Reason    string   `json:"reason"`     // one of the Archive constants
}

// MemoriesAccessed is the data of a memories.accessed event: retrieval
// handed these memories to an agent, which reinforces them. Accesses are
// batched: each memory once, with how often and when it was last handed
// out.
type MemoriesAccessed struct {
	Accesses []Access `json:"accesses"` // 1 to MaxMemoryBatch
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

// UserForgotten is the data of a user.forgotten event: an operator erased
// the envelope's user, every memory, turn and change of theirs.
type UserForgotten struct {
	Reason string `json:"reason,omitempty"` // at most MaxReasonBytes
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
}
