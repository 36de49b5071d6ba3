package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

var _ memory.MemoryReader = (*Store)(nil)

// Memories lists a scope's memories, newest first, filtered by q.
func (s *Store) Memories(ctx context.Context, q memory.MemoryQuery) ([]memory.Memory, error) {
	if err := q.Scope.Validate(); err != nil {
		return nil, err
	}
	where := []string{"namespace = ?", "user_id = ?"}
	args := []any{q.Scope.Namespace, q.Scope.User}
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	switch {
	case !q.AsOf.IsZero():
		at := q.AsOf.UnixNano()
		// By said time: a version became current when it was said and
		// stopped when the next was said, whenever engram learned either.
		where = append(where, "status IN ('active', 'superseded', 'archived')")
		add("said_at <= ?", at)
		add("(valid_to = 0 OR valid_to > ?)", at)
	case q.Status == "all":
	case q.Status == "":
		// A literal, so the partial indexes on active memories apply.
		where = append(where, "status = 'active'")
	default:
		add("status = ?", q.Status)
	}
	if q.Profile {
		where = append(where, "(tier = 1 OR kind = 'identity')")
	}
	if q.Kind != "" {
		add("kind = ?", string(q.Kind))
	}
	if q.Category != "" {
		add("category = ?", string(q.Category))
	}
	if q.Project != "" {
		add("project = ?", q.Project)
	}
	if q.Topic != "" {
		add("topic = ?", q.Topic)
	}
	if !q.CreatedFrom.IsZero() {
		add("created >= ?", q.CreatedFrom.UnixNano())
	}
	if !q.CreatedTo.IsZero() {
		add("created < ?", q.CreatedTo.UnixNano())
	}
	limit := q.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	from := `memories`
	if q.Profile && q.Status == "" && q.AsOf.IsZero() {
		// Without statistics SQLite prefers the index with more equal
		// columns and reads every active memory's row to test the tier.
		from = `memories INDEXED BY memories_profile`
	}
	// The WHERE clause is one of a few dozen shapes; each is prepared once.
	rows, err := s.queryRead(ctx, `SELECT rowid, `+memoryColumns+` FROM `+from+` WHERE `+
		strings.Join(where, " AND ")+` ORDER BY updated DESC, id`+limitSQL(limit), args...)
	if err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	out, err := scanMemories(rows)
	if err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	now := time.Now()
	for i := range out {
		out[i].Status = shownStatus(out[i], now)
	}
	return out, nil
}

// shownStatus is how a memory's status reads: a pending memory whose snooze
// has not run out reads "snoozed".
func shownStatus(m memory.Memory, now time.Time) memory.Status {
	if m.Status == memory.StatusPending && m.SnoozedUntil.After(now) {
		return memory.StatusSnoozed
	}
	return m.Status
}

// Memory reads one memory of a scope; ENOTFOUND if the scope has none by
// that id (another user's memory is not found, not forbidden).
func (s *Store) Memory(ctx context.Context, scope memory.Scope, id string) (memory.Memory, error) {
	m, err := scanMemory(s.r.QueryRowContext(ctx, `SELECT rowid, `+memoryColumns+` FROM memories
		WHERE namespace = ? AND user_id = ? AND id = ?`, scope.Namespace, scope.User, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return memory.Memory{}, memory.Errorf(memory.ENOTFOUND, "no memory %s", id)
	case err != nil:
		return memory.Memory{}, fmt.Errorf("read memory %s: %w", id, err)
	}
	m.Status = shownStatus(m.Memory, time.Now())
	return m.Memory, nil
}

// Pending is the confirmation queue: pending memories not snoozed past now.
func (s *Store) Pending(ctx context.Context, scope memory.Scope, now time.Time) ([]memory.Memory, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT rowid, `+memoryColumns+` FROM memories
		WHERE namespace = ? AND user_id = ? AND status = 'pending' AND snoozed_until <= ?
		ORDER BY created, id LIMIT 200`, scope.Namespace, scope.User, now.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	return scanMemories(rows)
}

// PendingFirst is the n pending memories not snoozed past now that are
// asked about first: session's (when not empty) first, newest first.
func (s *Store) PendingFirst(ctx context.Context, scope memory.Scope, now time.Time, session string, n int) ([]memory.Memory, error) {
	// Asked before every block: through a prepared statement (queryRead),
	// its limit written in (limitSQL).
	rows, err := s.queryRead(ctx, `SELECT rowid, `+memoryColumns+` FROM memories
		WHERE namespace = ? AND user_id = ? AND status = 'pending' AND snoozed_until <= ?
		ORDER BY ? <> '' AND session_id = ? DESC, created DESC, id`+limitSQL(n),
		scope.Namespace, scope.User, now.UnixNano(), session, session)
	if err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	return scanMemories(rows)
}

// History is a memory's changes, oldest first.
func (s *Store) History(ctx context.Context, scope memory.Scope, id string) ([]memory.Change, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT memory_id, change, old, new, fields, note, cause, time, said_at FROM memory_history
		WHERE namespace = ? AND user_id = ? AND memory_id = ? ORDER BY id`, scope.Namespace, scope.User, id)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer quiet.Close(rows)
	out := []memory.Change{}
	for rows.Next() {
		var c memory.Change
		var at, said int64
		var fields string
		if err := rows.Scan(&c.MemoryID, &c.Change, &c.Old, &c.New, &fields, &c.Note, &c.Cause, &at, &said); err != nil {
			return nil, err
		}
		if fields != "" {
			if err := json.Unmarshal([]byte(fields), &c.Fields); err != nil {
				return nil, fmt.Errorf("history of %s: fields: %w", id, err)
			}
		}
		c.Time, c.SaidAt = nsTime(at), nsTime(said)
		out = append(out, c)
	}
	return out, rows.Err()
}

// Projects lists the projects a scope's active memories name.
func (s *Store) Projects(ctx context.Context, scope memory.Scope) ([]string, error) {
	rows, err := s.queryRead(ctx, `SELECT DISTINCT project FROM memories
		WHERE namespace = ? AND user_id = ? AND status = 'active' AND project != '' ORDER BY project LIMIT 200`,
		scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("projects: %w", err)
	}
	defer quiet.Close(rows)
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
