package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// Quality reads a namespace's counts and quality figures (seed 004 §9)
// from the read model; window is how soon after being written a memory must be
// ignored or superseded to be a wrong write (0: memory.DefaultWrongWriteWindow).
// namespace "" reads all namespaces. Every figure comes from event times, so a rebuild reads the same.
func (s *Store) Quality(ctx context.Context, namespace string, window time.Duration) (memory.Stats, error) {
	return quality(ctx, s.r, namespace, window)
}

// ReadQuality is Store.Quality on the read model at path, opened
// read-only, so it may run beside the engram that writes it.
func ReadQuality(ctx context.Context, path, namespace string, window time.Duration) (memory.Stats, error) {
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return memory.Stats{}, fmt.Errorf("quality: open %s: %w", path, err)
	}
	defer db.Close()
	return quality(ctx, db, namespace, window)
}

func quality(ctx context.Context, db *sql.DB, namespace string, window time.Duration) (memory.Stats, error) {
	if window <= 0 {
		window = memory.DefaultWrongWriteWindow
	}
	st := memory.Stats{Namespace: namespace, Memories: map[string]int{}, WindowDays: window.Hours() / 24}
	one := func(what, q string, dst *int, args ...any) error {
		if err := db.QueryRowContext(ctx, q, args...).Scan(dst); err != nil {
			return fmt.Errorf("stats: %s: %w", what, err)
		}
		return nil
	}
	if err := one("users", `SELECT COUNT(*) FROM (
		SELECT user_id FROM turns WHERE (?1 = '' OR namespace = ?1) UNION SELECT user_id FROM memories WHERE (?1 = '' OR namespace = ?1))`,
		&st.Users, namespace); err != nil {
		return st, err
	}
	if err := one("turns", `SELECT COUNT(*) FROM turns WHERE (?1 = '' OR namespace = ?1)`, &st.Turns, namespace); err != nil {
		return st, err
	}
	if err := one("episodes", `SELECT COUNT(*) FROM episodes WHERE (?1 = '' OR namespace = ?1)`, &st.Episodes, namespace); err != nil {
		return st, err
	}
	rows, err := db.QueryContext(ctx, `SELECT status, COUNT(*) FROM memories WHERE (?1 = '' OR namespace = ?1) GROUP BY status`, namespace)
	if err != nil {
		return st, fmt.Errorf("stats: memories: %w", err)
	}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			rows.Close()
			return st, fmt.Errorf("stats: memories: %w", err)
		}
		st.Memories[status] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("stats: memories: %w", err)
	}
	for _, status := range []memory.Status{memory.StatusActive, memory.StatusPending, memory.StatusSuperseded,
		memory.StatusRejected, memory.StatusArchived} {
		st.Memories[string(status)] += 0
	}
	if err := db.QueryRowContext(ctx, `SELECT
		COUNT(DISTINCT CASE WHEN change = 'confirmed' THEN user_id || char(0) || memory_id END),
		COUNT(DISTINCT CASE WHEN change = 'ignored' THEN user_id || char(0) || memory_id END)
		FROM memory_history WHERE (?1 = '' OR namespace = ?1) AND change IN ('confirmed', 'ignored')`, namespace).
		Scan(&st.Confirmed, &st.Ignored); err != nil {
		return st, fmt.Errorf("stats: decided: %w", err)
	}
	// A memory superseded by the event that wrote it entered the history
	// already superseded (said before what replaced it): it was never
	// current, so it was not written wrong.
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(w.memory_id) FROM memory_history c
		LEFT JOIN (SELECT h.namespace, h.user_id, h.memory_id, MIN(h.time) AS time FROM memory_history h
			WHERE (?1 = '' OR h.namespace = ?1) AND h.change IN ('ignored', 'superseded') AND NOT EXISTS (
				SELECT 1 FROM memory_history b WHERE b.namespace = h.namespace AND b.user_id = h.user_id
					AND b.memory_id = h.memory_id AND b.change = 'created' AND b.cause = h.cause)
			GROUP BY h.namespace, h.user_id, h.memory_id) w
		ON w.namespace = c.namespace AND w.user_id = c.user_id AND w.memory_id = c.memory_id AND w.time - c.time <= ?2
		WHERE (?1 = '' OR c.namespace = ?1) AND c.change = 'created'`, namespace, window.Nanoseconds()).
		Scan(&st.Written, &st.WrongWrites); err != nil {
		return st, fmt.Errorf("stats: wrong writes: %w", err)
	}
	st.ConfirmationRate = memory.Ratio(float64(st.Confirmed), float64(st.Confirmed+st.Ignored))
	st.WrongWriteRate = memory.Ratio(float64(st.WrongWrites), float64(st.Written))
	return st, nil
}
