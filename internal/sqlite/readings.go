package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// Applied reports which of ids (events from source, in scope) the read
// model has applied.
func (s *Store) Applied(ctx context.Context, scope memory.Scope, source string, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM applied
		WHERE namespace = ? AND user_id = ? AND source = ? AND id IN (SELECT value FROM json_each(?))`,
		scope.Namespace, scope.User, source, jsonList(ids))
	if err != nil {
		return nil, fmt.Errorf("applied events: %w", err)
	}
	defer quiet.Close(rows)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("applied events: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// EventMemories reports whether the read model has applied event id from
// source, and if so the memories it created or restated, in the order it
// did, as they are now; candidates it dropped are left out.
func (s *Store) EventMemories(ctx context.Context, scope memory.Scope, source, id string) (bool, []memory.Memory, error) {
	var one int
	err := s.r.QueryRowContext(ctx, `SELECT 1 FROM applied WHERE namespace = ? AND user_id = ? AND source = ? AND id = ?`,
		scope.Namespace, scope.User, source, id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil, nil
	case err != nil:
		return false, nil, fmt.Errorf("event %s applied: %w", id, err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT m.rowid, `+prefixed("m.", memoryColumns)+` FROM memories m
		JOIN (SELECT memory_id, min(id) AS first FROM memory_history
			WHERE namespace = ?1 AND user_id = ?2 AND cause = ?3 AND change IN ('created', 'merged') GROUP BY memory_id) h
			ON m.namespace = ?1 AND m.user_id = ?2 AND m.id = h.memory_id
		WHERE m.status != 'rejected'
		ORDER BY h.first`, scope.Namespace, scope.User, id)
	if err != nil {
		return true, nil, fmt.Errorf("memories of event %s: %w", id, err)
	}
	mems, err := scanMemories(rows)
	if err != nil {
		return true, nil, fmt.Errorf("memories of event %s: %w", id, err)
	}
	return true, mems, nil
}

// Users lists a namespace's users with their counts, the most recently
// seen first: those whose id starts with prefix (all when ""), at most
// limit.
func (s *Store) Users(ctx context.Context, namespace, prefix string, limit int) ([]memory.UserSummary, error) {
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix) + "%"
	rows, err := s.r.QueryContext(ctx, `SELECT user_id, sum(memories), sum(pending), sum(sessions), sum(turns), max(last) FROM (
		SELECT user_id, count(*) FILTER (WHERE status = 'active') AS memories,
			count(*) FILTER (WHERE status = 'pending') AS pending, 0 AS sessions, 0 AS turns, max(updated) AS last
		FROM memories WHERE namespace = ?1 AND status IN ('active', 'pending') GROUP BY user_id
		UNION ALL
		SELECT user_id, 0, 0, count(*), sum(turns), max(last_turn) FROM sessions WHERE namespace = ?1 GROUP BY user_id
	) WHERE user_id LIKE ?2 ESCAPE '\' GROUP BY user_id ORDER BY max(last) DESC, user_id LIMIT ?3`, namespace, like, limit)
	if err != nil {
		return nil, fmt.Errorf("users of %s: %w", namespace, err)
	}
	defer quiet.Close(rows)
	out := []memory.UserSummary{}
	for rows.Next() {
		var u memory.UserSummary
		var last int64
		if err := rows.Scan(&u.User, &u.Memories, &u.Pending, &u.Sessions, &u.Turns, &last); err != nil {
			return nil, fmt.Errorf("users of %s: %w", namespace, err)
		}
		u.LastSeen = nsTime(last)
		out = append(out, u)
	}
	return out, rows.Err()
}
