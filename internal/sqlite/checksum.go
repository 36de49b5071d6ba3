package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"sort"
)

// checksummed lists every table of the read model with the order that makes
// its contents canonical. A table added to the schema must be added here;
// TestChecksumCoversSchema fails until it is.
var checksummed = map[string]string{
	"meta":           "key",
	"applied":        "seq, source, id, namespace, user_id",
	"turns":          "id",
	"sessions":       "namespace, user_id, session_id",
	"memories":       "namespace, user_id, id",
	"memory_history": "id",
	"extractions":    "namespace, user_id, request_id",
	// Consolidation (migration 3).
	"episodes":        "rid",
	"scratchpad":      "namespace, user_id",
	"daily_summaries": "namespace, user_id, date, channel",
	"profile":         "namespace, user_id, memory_id",
	"embeddings":      "namespace, user_id, model, hash",
}

// checksumColumns narrows what is hashed of a table where a column may
// differ between a live read model and a rebuilt one without the data
// differing: applied rows from before schema 7 have an empty scope, and
// their seq already names the event.
var checksumColumns = map[string]string{
	"applied": "source, id, seq, type",
}

// TableSums is the checksum of each table.
type TableSums map[string]string

// Checksum hashes every row of every table, in a canonical order, and
// returns the stream position they reflect; all of it is read in one
// transaction, so it is a consistent snapshot even while the projector
// writes. Two read models with the same checksum hold the same data. The
// full-text index is derived from turns by Apply, so turns cover it.
func (s *Store) Checksum(ctx context.Context) (TableSums, uint64, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("checksum: %w", err)
	}
	defer tx.Rollback()
	seq, err := lastSeq(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	out := TableSums{}
	for table, order := range checksummed {
		sum, err := tableSum(ctx, tx, table, order)
		if err != nil {
			return nil, 0, err
		}
		out[table] = sum
	}
	return out, seq, nil
}

func tableSum(ctx context.Context, tx *sql.Tx, table, order string) (string, error) {
	cols := "*"
	if c, ok := checksumColumns[table]; ok {
		cols = c
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+cols+` FROM `+table+` ORDER BY `+order)
	if err != nil {
		return "", fmt.Errorf("checksum %s: %w", table, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", fmt.Errorf("checksum %s: %w", table, err)
		}
		for _, v := range vals {
			fmt.Fprintf(h, "%T:%v\x1f", v, v)
		}
		h.Write([]byte{'\x1e'})
		n++
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("checksum %s: %w", table, err)
	}
	return fmt.Sprintf("%d:%s", n, hex.EncodeToString(h.Sum(nil))), nil
}

// Diff lists the tables whose sums differ between a and b.
func (a TableSums) Diff(b TableSums) []string {
	var out []string
	for t, s := range a {
		if b[t] != s {
			out = append(out, t)
		}
	}
	for t := range b {
		if _, ok := a[t]; !ok {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}
