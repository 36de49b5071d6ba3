package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
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

// RecallTurns runs a textseg.Match expression over a scope's turns and
// returns up to limit, best BM25 first.
func (s *Store) RecallTurns(ctx context.Context, scope memory.Scope, match string, limit int) ([]memory.TurnHit, error) {
	if match == "" {
		return nil, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+turnHitColumns+`, bm25(turns_fts, 0.0, 1.0) AS rank
		FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid
		WHERE turns_fts MATCH ? AND t.namespace = ? AND t.user_id = ?
		ORDER BY rank LIMIT ?`,
		`scope : "`+scopeToken(scope)+`" AND body : (`+match+`)`, scope.Namespace, scope.User, limit)
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
	var conds []string
	args := []any{scope.Namespace, scope.User}
	for _, k := range keys {
		conds = append(conds, "(t.session_id = ? AND t.turn_index BETWEEN ? AND ? AND t.turn_index != ?)")
		args = append(args, k.SessionID, k.TurnIndex-radius, k.TurnIndex+radius, k.TurnIndex)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+turnHitColumns+` FROM turns t
		WHERE t.namespace = ? AND t.user_id = ? AND (`+strings.Join(conds, " OR ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("turns around: %w", err)
	}
	defer rows.Close()
	return scanTurnHits(rows, false)
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

// SessionTimes returns when each of a scope's sessions started.
func (s *Store) SessionTimes(ctx context.Context, scope memory.Scope) (map[string]time.Time, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT session_id, started FROM sessions WHERE namespace = ? AND user_id = ?`,
		scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("session times: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = time.Unix(0, at).UTC()
	}
	return out, rows.Err()
}
