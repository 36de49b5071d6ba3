package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// Stats counts what a read model holds, for `engram stats`.
type Stats struct {
	Namespace string         `json:"namespace,omitempty"`
	User      string         `json:"user,omitempty"`
	Users     int            `json:"users"`
	Turns     int            `json:"turns"`
	Sessions  int            `json:"sessions"`
	Episodes  int            `json:"episodes"`
	Memories  int            `json:"memories"` // active
	ByStatus  map[string]int `json:"memories_by_status"`
	ByCat     map[string]int `json:"active_by_category"`
	LastSeq   uint64         `json:"last_seq"`
}

// ErrUnbuilt is a read model whose schema was never finished: its engram
// stopped while it was being made (a partition copy killed as it was
// created). Opening it with Open finishes it.
var ErrUnbuilt = errors.New("read model not fully made")

// ReadStats counts the read model at path, all of it or one namespace's
// or one user's. It opens the file read-only, so it may run beside the
// engram that writes it.
func ReadStats(ctx context.Context, path, namespace, user string) (Stats, error) {
	st := Stats{Namespace: namespace, User: user, ByStatus: map[string]int{}, ByCat: map[string]int{}}
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return st, fmt.Errorf("stats: open %s: %w", path, err)
	}
	defer quiet.Close(db) // a read-only pool
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	defer quiet.Rollback(tx)
	var version int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return st, fmt.Errorf("stats: schema version: %w", err)
	}
	if version < len(migrations) {
		return st, fmt.Errorf("stats: %s: %w (schema %d of %d): an engram that opens it finishes it", path, ErrUnbuilt, version, len(migrations))
	}
	where := ` WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR user_id = ?2)`
	args := []any{namespace, user}
	for _, c := range []struct {
		dst *int
		q   string
	}{
		// A user is anyone engram holds something of: turns, memories
		// (added by hand or migrated, with no turn) or daily summaries.
		{&st.Users, `SELECT count(*) FROM (SELECT namespace, user_id FROM sessions` + where +
			` UNION SELECT namespace, user_id FROM memories` + where + ` UNION SELECT namespace, user_id FROM daily_summaries` + where + `)`},
		{&st.Turns, `SELECT count(*) FROM turns` + where},
		{&st.Sessions, `SELECT count(*) FROM sessions` + where},
		{&st.Episodes, `SELECT count(*) FROM episodes` + where},
	} {
		if err := tx.QueryRowContext(ctx, c.q, args...).Scan(c.dst); err != nil {
			return st, fmt.Errorf("stats: %w", err)
		}
	}
	for _, g := range []struct {
		into map[string]int
		q    string
	}{
		{st.ByStatus, `SELECT status, count(*) FROM memories` + where + ` GROUP BY status`},
		{st.ByCat, `SELECT category, count(*) FROM memories` + where + ` AND status = 'active' GROUP BY category`},
	} {
		rows, err := tx.QueryContext(ctx, g.q, args...)
		if err != nil {
			return st, fmt.Errorf("stats: %w", err)
		}
		for rows.Next() {
			var k string
			var n int
			if err := rows.Scan(&k, &n); err != nil {
				quiet.Close(rows)
				return st, fmt.Errorf("stats: %w", err)
			}
			g.into[k] = n
		}
		quiet.Close(rows)
		if err := rows.Err(); err != nil {
			return st, fmt.Errorf("stats: %w", err)
		}
	}
	st.Memories = st.ByStatus["active"]
	seq, err := lastSeq(ctx, tx)
	if err != nil {
		return st, err
	}
	st.LastSeq = seq
	return st, nil
}

// ReadMemory reads one memory of a scope from the read model at path,
// read-only, beside a running engram; ENOTFOUND when the scope has none
// by that id.
func ReadMemory(ctx context.Context, path string, scope memory.Scope, id string) (memory.Memory, error) {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return memory.Memory{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer quiet.Close(db) // a read-only pool
	m, err := scanMemory(db.QueryRowContext(ctx, `SELECT rowid, `+memoryColumns+` FROM memories
		WHERE namespace = ? AND user_id = ? AND id = ?`, scope.Namespace, scope.User, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return memory.Memory{}, memory.Errorf(memory.ENOTFOUND, "no memory %s for user %q in namespace %q", id, scope.User, scope.Namespace)
	case err != nil:
		return memory.Memory{}, fmt.Errorf("read memory %s: %w", id, err)
	}
	return m.Memory, nil
}

// ReadTurns reads the stored turns dated in [since, until) from the read
// model at path, read-only, all of them or one namespace's or one user's,
// oldest first; at most limit of them.
func ReadTurns(ctx context.Context, path, namespace, user string, since, until time.Time, limit int) ([]memory.Turn, error) {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer quiet.Close(db) // a read-only pool
	rows, err := db.QueryContext(ctx, `SELECT `+turnColumns+`
		FROM turns WHERE time >= ? AND time < ? AND (? = '' OR namespace = ?) AND (? = '' OR user_id = ?)
		ORDER BY time, id LIMIT ?`, since.UnixNano(), until.UnixNano(), namespace, namespace, user, user, limit)
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	out, err := scanTurns(rows)
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	return out, nil
}

// Rows counts the users a read model holds and the rows of its main
// tables, for the operators' view of a partition's copy. Each count reads
// its table's smallest index: on a copy of a hundred million rows it takes
// seconds, so callers ask now and then, not per request.
func (s *Store) Rows(ctx context.Context) (users int, rows map[string]int64, err error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, nil, fmt.Errorf("count rows: %w", err)
	}
	defer quiet.Rollback(tx) // a read-only transaction
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT namespace, user_id FROM sessions
		UNION SELECT namespace, user_id FROM memories)`).Scan(&users); err != nil {
		return 0, nil, fmt.Errorf("count users: %w", err)
	}
	rows = map[string]int64{}
	for _, table := range []string{"turns", "memories", "episodes", "sessions"} {
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			return 0, nil, fmt.Errorf("count %s: %w", table, err)
		}
		rows[table] = n
	}
	return users, rows, nil
}

// AllUsers lists every user the read model holds a row of (a turn, a
// session or a memory), by namespace and user.
func (s *Store) AllUsers(ctx context.Context) ([]memory.Scope, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT namespace, user_id FROM sessions
		UNION SELECT namespace, user_id FROM turns UNION SELECT namespace, user_id FROM memories ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer quiet.Close(rows)
	var out []memory.Scope
	for rows.Next() {
		var sc memory.Scope
		if err := rows.Scan(&sc.Namespace, &sc.User); err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}
