package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

const turnHitColumns = `t.id, t.session_id, t.turn_index, t.role, t.speaker, t.content, t.attachments, t.time`

func scanTurnHits(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}, withRank bool) ([]memory.TurnHit, error) {
	var out []memory.TurnHit
	for rows.Next() {
		var h memory.TurnHit
		var at int64
		dst := []any{&h.ID, &h.SessionID, &h.TurnIndex, &h.Role, &h.Speaker, &h.Content, &h.Attachments, &at}
		if withRank {
			dst = append(dst, &h.BM25)
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		h.Time = time.Unix(0, at).UTC()
		h.Key = TurnID(h.ID)
		h.BM25 = -h.BM25
		out = append(out, h)
	}
	return out, rows.Err()
}

// RecallTurns searches a scope's turns for the text a user typed and
// returns up to limit, best BM25 first.
func (s *Store) RecallTurns(ctx context.Context, scope memory.Scope, query string, limit int) ([]memory.TurnHit, error) {
	match := textseg.MatchIn(partition(scope), query)
	if match == "" {
		return nil, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+turnHitColumns+`, bm25(turns_fts) AS rank
		FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid
		WHERE turns_fts MATCH ? AND t.namespace = ? AND t.user_id = ?
		ORDER BY rank LIMIT ?`,
		match, scope.Namespace, scope.User, limit)
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	defer rows.Close()
	return scanTurnHits(rows, true)
}

// TurnsAround returns the turns within radius of each key (the keys'
// own turns excluded), for neighbour expansion.
func (s *Store) TurnsAround(ctx context.Context, scope memory.Scope, keys []memory.TurnKey, radius int) ([]memory.TurnHit, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	// A keyed join, so each key is one range on the unique index; a long
	// OR of conditions made SQLite scan every turn of the user.
	var values strings.Builder
	args := make([]any, 0, 3*len(keys)+2)
	for i, k := range keys {
		if i > 0 {
			values.WriteString(", ")
		}
		values.WriteString("(?, ?, ?)")
		args = append(args, k.SessionID, k.TurnIndex-radius, k.TurnIndex+radius)
	}
	args = append(args, scope.Namespace, scope.User)
	rows, err := s.r.QueryContext(ctx, `WITH k(session_id, lo, hi) AS (VALUES `+values.String()+`)
		SELECT DISTINCT `+turnHitColumns+` FROM k CROSS JOIN turns t
		WHERE t.namespace = ? AND t.user_id = ? AND t.session_id = k.session_id AND t.turn_index BETWEEN k.lo AND k.hi`, args...)
	if err != nil {
		return nil, fmt.Errorf("turns around: %w", err)
	}
	defer rows.Close()
	hits, err := scanTurnHits(rows, false)
	if err != nil {
		return nil, err
	}
	own := make(map[memory.TurnKey]bool, len(keys))
	for _, k := range keys {
		own[k] = true
	}
	out := hits[:0]
	for _, h := range hits {
		if !own[memory.TurnKey{SessionID: h.SessionID, TurnIndex: h.TurnIndex}] {
			out = append(out, h)
		}
	}
	return out, nil
}

// RecentTurns returns a scope's turns since a time, newest first.
func (s *Store) RecentTurns(ctx context.Context, scope memory.Scope, since time.Time, limit int) ([]memory.TurnHit, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+turnHitColumns+` FROM turns t
		WHERE t.namespace = ? AND t.user_id = ? AND t.time >= ? ORDER BY t.time DESC, t.id DESC LIMIT ?`,
		scope.Namespace, scope.User, since.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("recent turns: %w", err)
	}
	defer rows.Close()
	return scanTurnHits(rows, false)
}

// RecallMemories searches a scope's active memories for the text a user
// typed and returns up to limit, best BM25 first.
func (s *Store) RecallMemories(ctx context.Context, scope memory.Scope, query string, limit int) ([]memory.MemoryHit, error) {
	match := textseg.MatchIn(partition(scope), query)
	if match == "" {
		return nil, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT m.rowid, `+prefixed("m.", memoryColumns)+`, bm25(memories_fts) AS rank
		FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.namespace = ? AND m.user_id = ? AND m.status = 'active'
		ORDER BY rank LIMIT ?`,
		match, scope.Namespace, scope.User, limit)
	if err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	defer rows.Close()
	var out []memory.MemoryHit
	for rows.Next() {
		var rank float64
		m, err := scanMemoryWith(rows, &rank)
		if err != nil {
			return nil, fmt.Errorf("recall memories: %w", err)
		}
		out = append(out, memory.MemoryHit{Memory: m.Memory, BM25: -rank})
	}
	return out, rows.Err()
}

// prefixed qualifies a comma-separated column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
