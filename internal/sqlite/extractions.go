package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// ExtractionRecord is one row of the extraction bookkeeping: a request
// and how it ended. Turns is the JSON array of the turn indices asked for.
type ExtractionRecord struct {
	Namespace, User, Session string
	RequestID, Reason        string
	Turns                    string
	Status                   string
}

// ExtractionRecords lists every extraction request of every scope, for
// operators' checks (each turn extracted once) across read models.
func (s *Store) ExtractionRecords(ctx context.Context) ([]ExtractionRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT namespace, user_id, session_id, request_id, reason, turns, status
		FROM extractions ORDER BY namespace, user_id, session_id, requested, request_id`)
	if err != nil {
		return nil, fmt.Errorf("extraction records: %w", err)
	}
	defer quiet.Close(rows)
	var out []ExtractionRecord
	for rows.Next() {
		var r ExtractionRecord
		if err := rows.Scan(&r.Namespace, &r.User, &r.Session, &r.RequestID, &r.Reason, &r.Turns, &r.Status); err != nil {
			return nil, fmt.Errorf("extraction records: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// AppliedAny reports whether the read model has applied any of the events
// of source with the given ids in scope (or before events were kept per
// scope): a worker asks before doing again what it concluded before.
func (s *Store) AppliedAny(ctx context.Context, scope memory.Scope, source string, ids ...string) (bool, error) {
	if len(ids) == 0 {
		return false, nil
	}
	js, err := json.Marshal(ids)
	if err != nil {
		return false, err
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM applied
		WHERE (namespace = ? AND user_id = ? OR namespace = '' AND user_id = '') AND source = ?
			AND id IN (SELECT value FROM json_each(?))`, scope.Namespace, scope.User, source, string(js)).Scan(&n); err != nil {
		return false, fmt.Errorf("applied %s: %w", source, err)
	}
	return n > 0, nil
}
