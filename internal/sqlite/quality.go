package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// Quality reads the counts and quality figures (seed 004 §9) of a
// namespace, or of one of its users, from the read model; window is how
// soon after being written a memory must be superseded to count as
// superseded soon (0: memory.DefaultWrongWriteWindow). namespace "" reads
// all namespaces, user "" all users. Every figure comes from event times,
// so a rebuild reads the same.
func (s *Store) Quality(ctx context.Context, namespace, user string, window time.Duration) (memory.Stats, error) {
	return quality(ctx, s.r, namespace, user, window)
}

// ReadQuality is Store.Quality on the read model at path, opened
// read-only, so it may run beside the engram that writes it.
func ReadQuality(ctx context.Context, path, namespace, user string, window time.Duration) (memory.Stats, error) {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return memory.Stats{}, fmt.Errorf("quality: open %s: %w", path, err)
	}
	defer quiet.Close(db) // a read-only pool
	return quality(ctx, db, namespace, user, window)
}

func quality(ctx context.Context, db *sql.DB, namespace, user string, window time.Duration) (memory.Stats, error) {
	if window <= 0 {
		window = memory.DefaultWrongWriteWindow
	}
	st := memory.Stats{Namespace: namespace, User: user, Memories: map[string]int{}, WindowDays: window.Hours() / 24}
	one := func(what, q string, dst *int, args ...any) error {
		if err := db.QueryRowContext(ctx, q, args...).Scan(dst); err != nil {
			return fmt.Errorf("stats: %s: %w", what, err)
		}
		return nil
	}
	// ?1 is the namespace, ?2 the user; "" matches every one.
	const in = `(?1 = '' OR namespace = ?1) AND (?2 = '' OR user_id = ?2)`
	if err := one("users", `SELECT COUNT(*) FROM (
		SELECT namespace, user_id FROM turns WHERE `+in+` UNION SELECT namespace, user_id FROM memories WHERE `+in+`
		UNION SELECT namespace, user_id FROM daily_summaries WHERE `+in+`)`,
		&st.Users, namespace, user); err != nil {
		return st, err
	}
	if err := one("turns", `SELECT COUNT(*) FROM turns WHERE `+in, &st.Turns, namespace, user); err != nil {
		return st, err
	}
	if err := one("episodes", `SELECT COUNT(*) FROM episodes WHERE `+in, &st.Episodes, namespace, user); err != nil {
		return st, err
	}
	rows, err := db.QueryContext(ctx, `SELECT status, COUNT(*) FROM memories WHERE `+in+` GROUP BY status`, namespace, user)
	if err != nil {
		return st, fmt.Errorf("stats: memories: %w", err)
	}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			quiet.Close(rows)
			return st, fmt.Errorf("stats: memories: %w", err)
		}
		st.Memories[status] = n
	}
	quiet.Close(rows)
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("stats: memories: %w", err)
	}
	for _, status := range []memory.Status{memory.StatusActive, memory.StatusPending, memory.StatusSuperseded,
		memory.StatusRejected, memory.StatusArchived} {
		st.Memories[string(status)] += 0
	}
	if err := db.QueryRowContext(ctx, `SELECT
		COUNT(DISTINCT CASE WHEN change = 'confirmed' THEN namespace || char(0) || user_id || char(0) || memory_id END),
		COUNT(DISTINCT CASE WHEN change = 'ignored' THEN namespace || char(0) || user_id || char(0) || memory_id END)
		FROM memory_history WHERE `+in+` AND change IN ('confirmed', 'ignored')`, namespace, user).
		Scan(&st.Confirmed, &st.Ignored); err != nil {
		return st, fmt.Errorf("stats: decided: %w", err)
	}
	// Superseded soon is churn, not error: a user who moved and said so
	// replaced a memory that was right when written. A memory superseded
	// by the event that wrote it entered the history already superseded
	// (said before what replaced it): it was never current, so it was not
	// replaced at all.
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(w.memory_id) FROM memory_history c
		LEFT JOIN (SELECT h.namespace, h.user_id, h.memory_id, MIN(h.time) AS time FROM memory_history h
			WHERE (?1 = '' OR h.namespace = ?1) AND (?2 = '' OR h.user_id = ?2) AND h.change = 'superseded' AND NOT EXISTS (
				SELECT 1 FROM memory_history b WHERE b.namespace = h.namespace AND b.user_id = h.user_id
					AND b.memory_id = h.memory_id AND b.change = 'created' AND b.cause = h.cause)
			GROUP BY h.namespace, h.user_id, h.memory_id) w
		ON w.namespace = c.namespace AND w.user_id = c.user_id AND w.memory_id = c.memory_id AND w.time - c.time <= ?3
		WHERE (?1 = '' OR c.namespace = ?1) AND (?2 = '' OR c.user_id = ?2) AND c.change = 'created'`,
		namespace, user, window.Nanoseconds()).
		Scan(&st.Written, &st.SupersededSoon); err != nil {
		return st, fmt.Errorf("stats: superseded soon: %w", err)
	}
	st.ConfirmationRate = memory.Ratio(float64(st.Confirmed), float64(st.Confirmed+st.Ignored))
	// Seed 004 §9: 错误写入率 = rejected / confirmed, of the candidates a
	// user decided (pending → rejected is "ignore").
	st.WrongWrites = st.Ignored
	st.WrongWriteRate = memory.Ratio(float64(st.Ignored), float64(st.Confirmed))
	return st, nil
}
