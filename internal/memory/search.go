package memory

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Result kinds.
const (
	ResultTurn   = "turn"
	ResultMemory = "memory"
	ResultDaily  = "daily" // a day's summary (tier 3): migrated logs and daily compression
	// ResultAttachment is a file a turn carried, found by its own name,
	// description or transcription (seed 000 §4.4).
	ResultAttachment = "attachment"
)

// DefaultSearchLimit and MaxSearchLimit bound how many results one search returns.
const (
	DefaultSearchLimit = 10
	MaxSearchLimit     = 100
)

// SearchQuery asks for what a user's memory holds about Text.
type SearchQuery struct {
	Scope Scope
	Text  string
	Limit int
}

// Normalize applies the default limit and validates the query.
func (q *SearchQuery) Normalize() error {
	if err := q.Scope.Validate(); err != nil {
		return err
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultSearchLimit
	case q.Limit < 0 || q.Limit > MaxSearchLimit:
		return Errorf(EINVALID, "limit must be between 1 and %d", MaxSearchLimit)
	}
	if len(q.Text) > 4096 {
		return Errorf(EINVALID, "q is longer than 4096 bytes")
	}
	return nil
}

// SearchResult is one hit. Score is higher for better matches.
type SearchResult struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Content   string    `json:"content"`
	Score     float64   `json:"score"`
	SessionID string    `json:"session_id,omitempty"`
	TurnIndex int       `json:"turn_index"`
	Role      string    `json:"role,omitempty"`
	Time      time.Time `json:"time"`
}

// Searcher finds what a scope's memory holds about a query.
type Searcher interface {
	Search(ctx context.Context, q SearchQuery) ([]SearchResult, error)
}

// TurnHit is a turn found by a recall path, with its raw BM25 (higher is
// better; 0 when it was not found by text, e.g. a neighbour).
type TurnHit struct {
	ID          int64  // read-model row id
	Key         string // the id results carry ("t_<row id>")
	SessionID   string
	TurnIndex   int
	Role        string
	Speaker     string
	Content     string
	Attachments string
	Time        time.Time
	BM25        float64
	// Tokens is Text as the full-text index reads it, when the store that
	// scored the turn kept it (nil otherwise): ranking reads it again
	// several times. It may be shared (textseg.StoredTokens): never
	// changed in place.
	Tokens []string
}

// TurnKey names a turn within a scope.
type TurnKey struct {
	SessionID string
	TurnIndex int
}

// MemoryHit is a memory found by a recall path, with its raw BM25 (higher
// is better; 0 when text search did not find it).
type MemoryHit struct {
	Memory
	BM25 float64
	// Semantic is the cosine of the query's and the memory's embeddings,
	// when vectors found it (0 otherwise).
	Semantic float64
}

// Text is the text a turn is found by, as far as a hit carries it: who
// said it, what was said, and its attachments' names, descriptions and
// transcriptions (the JSON the agent sent is not text: its keys and mime
// types would be words of every turn with a file).
func (h TurnHit) Text() string {
	if h.Speaker == "" && h.Attachments == "" {
		return h.Content
	}
	var b strings.Builder
	if h.Speaker != "" {
		b.WriteString(h.Speaker)
		b.WriteString(": ")
	}
	b.WriteString(h.Content)
	if h.Attachments == "" {
		return b.String()
	}
	var atts []struct{ Name, Description, Transcription string }
	if json.Unmarshal([]byte(h.Attachments), &atts) != nil {
		return b.String()
	}
	for _, a := range atts {
		for _, s := range []string{a.Name, a.Description, a.Transcription} {
			if s != "" {
				b.WriteString("\n")
				b.WriteString(s)
			}
		}
	}
	return b.String()
}
