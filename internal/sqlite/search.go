package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// TurnID renders a turn's row id as the id search results carry.
func TurnID(id int64) string { return "t_" + strconv.FormatInt(id, 10) }

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

// Unextracted returns turns never extracted whose time is before before,
// oldest first, across every scope (the extractor's recovery and sweep).
func (s *Store) Unextracted(ctx context.Context, before time.Time, limit int) ([]memory.Turn, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+turnColumns+`
		FROM turns WHERE extracted = 0 AND time < ? ORDER BY time, id LIMIT ?`, before.UnixNano(), limit)
	if err != nil {
		return nil, fmt.Errorf("unextracted turns: %w", err)
	}
	return scanTurns(rows)
}

// UnextractedThrough is Unextracted less the turns whose last writing
// event comes after stream sequence through: what a consumer that has
// acknowledged the stream up to through has seen, and no more (the rest
// it is yet to deliver).
func (s *Store) UnextractedThrough(ctx context.Context, before time.Time, through uint64, limit int) ([]memory.Turn, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+turnColumns+`
		FROM turns WHERE extracted = 0 AND time < ? AND seq <= ? ORDER BY time, id LIMIT ?`, before.UnixNano(), int64(through), limit)
	if err != nil {
		return nil, fmt.Errorf("unextracted turns through %d: %w", through, err)
	}
	return scanTurns(rows)
}

// HandledTurns are the turns of one session that need no request: those
// extracted, each with the stream sequence of the version extracted, and
// those of a request made since and still on its way to an extractor,
// with math.MaxUint64 (whatever their version).
func (s *Store) HandledTurns(ctx context.Context, scope memory.Scope, session string, since time.Time) (map[int]uint64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT turn_index, seq FROM turns
			WHERE namespace = ?1 AND user_id = ?2 AND session_id = ?3 AND extracted = 1
		UNION ALL SELECT j.value, -1 FROM extractions x, json_each(x.turns) j
			WHERE x.namespace = ?1 AND x.user_id = ?2 AND x.session_id = ?3 AND x.status = 'requested'
				AND x.requested >= ?4`,
		scope.Namespace, scope.User, session, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("handled turns of session %q: %w", session, err)
	}
	defer quiet.Close(rows)
	out := map[int]uint64{}
	for rows.Next() {
		var i int
		var seq int64
		if err := rows.Scan(&i, &seq); err != nil {
			return nil, fmt.Errorf("handled turns of session %q: %w", session, err)
		}
		if seq < 0 {
			out[i] = math.MaxUint64
		} else {
			out[i] = max(out[i], uint64(seq))
		}
	}
	return out, rows.Err()
}

// turnColumns are the columns scanTurns reads, in its order.
const turnColumns = `id, namespace, user_id, agent, session_id, turn_index, role, content,
	tool_calls, tool_results, attachments, channel, project, time, tokens, event_source, event_id`

// scanTurns reads rows of turnColumns, and closes them.
func scanTurns(rows *sql.Rows) ([]memory.Turn, error) {
	defer quiet.Close(rows)
	var out []memory.Turn
	for rows.Next() {
		var t memory.Turn
		var at int64
		if err := rows.Scan(&t.ID, &t.Scope.Namespace, &t.Scope.User, &t.Agent, &t.SessionID, &t.TurnIndex, &t.Role,
			&t.Content, &t.ToolCalls, &t.ToolResults, &t.Attachments, &t.Channel, &t.Project, &at, &t.Tokens,
			&t.EventSource, &t.EventID); err != nil {
			return nil, err
		}
		t.Time = time.Unix(0, at).UTC()
		out = append(out, t)
	}
	return out, rows.Err()
}

// RequestedTurns is, per user and session, the turns of extraction
// requests that have no answer yet: they are on their way to an
// extractor, and a batcher that recovers waiting turns must not ask for
// them a second time.
func (s *Store) RequestedTurns(ctx context.Context) (map[memory.Scope]map[string]map[int]bool, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT namespace, user_id, session_id, turns FROM extractions WHERE status = 'requested'`)
	if err != nil {
		return nil, fmt.Errorf("requested turns: %w", err)
	}
	defer quiet.Close(rows)
	out := map[memory.Scope]map[string]map[int]bool{}
	for rows.Next() {
		var scope memory.Scope
		var session, list string
		if err := rows.Scan(&scope.Namespace, &scope.User, &session, &list); err != nil {
			return nil, fmt.Errorf("requested turns: %w", err)
		}
		var turns []int
		if err := json.Unmarshal([]byte(list), &turns); err != nil {
			return nil, fmt.Errorf("requested turns of session %q: %w", session, err)
		}
		if out[scope] == nil {
			out[scope] = map[string]map[int]bool{}
		}
		if out[scope][session] == nil {
			out[scope][session] = map[int]bool{}
		}
		for _, i := range turns {
			out[scope][session][i] = true
		}
	}
	return out, rows.Err()
}
