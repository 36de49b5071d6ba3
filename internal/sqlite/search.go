package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

// TurnID renders a turn's row id as the id search results carry.
func TurnID(id int64) string { return fmt.Sprintf("t_%d", id) }

// Search finds turns of q.Scope that match q.Text, best first (BM25).
// User text reaches FTS5 only through textseg.Match, which quotes every
// term, and the query is confined to the scope twice: by the scope token
// inside the index (speed) and by the SQL filter (correctness).
func (s *Store) Search(ctx context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	if err := q.Normalize(); err != nil {
		return nil, err
	}
	match := textseg.Match(q.Text)
	if match == "" {
		return []memory.SearchResult{}, nil
	}
	expr := `scope : "` + scopeToken(q.Scope) + `" AND body : (` + match + `)`
	rows, err := s.r.QueryContext(ctx, `
		SELECT t.id, t.session_id, t.turn_index, t.role, t.content, t.time, bm25(turns_fts, 0.0, 1.0) AS rank
		FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid
		WHERE turns_fts MATCH ? AND t.namespace = ? AND t.user_id = ?
		ORDER BY rank LIMIT ?`, expr, q.Scope.Namespace, q.Scope.User, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("search turns: %w", err)
	}
	defer rows.Close()
	out := make([]memory.SearchResult, 0, q.Limit)
	for rows.Next() {
		var (
			id   int64
			r    memory.SearchResult
			at   int64
			rank float64
		)
		if err := rows.Scan(&id, &r.SessionID, &r.TurnIndex, &r.Role, &r.Content, &at, &rank); err != nil {
			return nil, fmt.Errorf("search turns: %w", err)
		}
		r.ID, r.Kind, r.Score, r.Time = TurnID(id), memory.ResultTurn, -rank, time.Unix(0, at).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search turns: %w", err)
	}
	return out, nil
}

// CountTurns is how many turns a scope holds.
func (s *Store) CountTurns(ctx context.Context, scope memory.Scope) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE namespace = ? AND user_id = ?`,
		scope.Namespace, scope.User).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count turns: %w", err)
	}
	return n, nil
}
