package sqlite

import (
	"context"
	"fmt"

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
