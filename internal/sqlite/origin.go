package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/engramhq/engram/internal/quiet"
)

// Origin is the stream the read model was built from (see
// stream.MemoryOrigin); "" when none was recorded yet.
func (s *Store) Origin(ctx context.Context) (string, error) {
	var v string
	err := s.w.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'stream_origin'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read stream_origin: %w", err)
	}
	return v, nil
}

// SetOrigin records the stream the read model is built from. A rebuild
// records it too, so a rebuilt read model checksums equal to the live one.
func (s *Store) SetOrigin(ctx context.Context, origin string) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('stream_origin', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, origin)
	if err != nil {
		return fmt.Errorf("write stream_origin: %w", err)
	}
	return nil
}

// AppliedBetween counts the events the read model applied from stream
// sequences in [from, to), and the lowest of them: read to tell whether
// MEMORY still holds every event the read model was built from. It reads
// every applied event (there is no index by sequence, which each apply
// would pay for), so it is asked only when the stream's first sequence
// moved.
func (s *Store) AppliedBetween(ctx context.Context, from, to uint64) (n, lowest uint64, err error) {
	err = s.r.QueryRowContext(ctx, `SELECT count(*), coalesce(min(seq), 0) FROM applied WHERE seq >= ? AND seq < ?`,
		max(from, 1), to).Scan(&n, &lowest)
	if err != nil {
		return 0, 0, fmt.Errorf("count applied events below seq %d: %w", to, err)
	}
	return n, lowest, nil
}

// Reset empties the read model, in one transaction, keeping its schema:
// the projector then applies its stream from the start. Readers see the
// old contents or none, never half. It must not run beside Apply.
func (s *Store) Reset(ctx context.Context) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reset read model: %w", err)
	}
	defer quiet.Rollback(tx)
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return fmt.Errorf("reset read model: %w", err)
	}
	var tables, virtual []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			quiet.Close(rows)
			return fmt.Errorf("reset read model: %w", err)
		}
		if strings.HasPrefix(strings.ToUpper(def), "CREATE VIRTUAL TABLE") {
			virtual = append(virtual, name)
		} else {
			tables = append(tables, name)
		}
	}
	quiet.Close(rows)
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reset read model: %w", err)
	}
	for _, v := range virtual {
		// The full-text tables are contentless: 'delete-all' empties them
		// and their shadow tables.
		if _, err := tx.ExecContext(ctx, `INSERT INTO "`+v+`" ("`+v+`") VALUES ('delete-all')`); err != nil {
			return fmt.Errorf("reset %s: %w", v, err)
		}
	}
	for _, t := range tables {
		if shadow(t, virtual) {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM "`+t+`"`); err != nil {
			return fmt.Errorf("reset %s: %w", t, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("reset read model: %w", err)
	}
	s.seen.Store(0)
	for i := range s.vectors.gens {
		s.vectors.gens[i].Add(1)
	}
	return nil
}

// shadow reports whether table belongs to one of the virtual tables.
func shadow(table string, virtual []string) bool {
	for _, v := range virtual {
		if strings.HasPrefix(table, v+"_") {
			return true
		}
	}
	return false
}
