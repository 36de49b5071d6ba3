package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/engramhq/engram/internal/quiet"
)

// checksummed lists every table of the read model with the order that makes
// its contents canonical. A table added to the schema must be added here;
// TestChecksumCoversSchema fails until it is.
var checksummed = map[string]string{
	"meta":           "key",
	"applied":        "seq, source, id, namespace, user_id",
	"turns":          "namespace, user_id, session_id, turn_index",
	"sessions":       "namespace, user_id, session_id",
	"memories":       "namespace, user_id, id",
	"memory_history": "namespace, user_id, memory_id, time, change, old, new, cause",
	"extractions":    "namespace, user_id, request_id",
	// Consolidation (migration 3).
	"episodes":        "namespace, user_id, id",
	"scratchpad":      "namespace, user_id",
	"daily_summaries": "namespace, user_id, date, channel, part",
	"profile":         "namespace, user_id, memory_id",
	"embeddings":      "namespace, user_id, model, hash",
	"forgotten":       "namespace, user_id",
	// Per-user statistics (migration 12).
	"scope_counts": "namespace, user_id",
	// Identities and reports (migration 16).
	"identities": "namespace, user_id",
	"reports":    "namespace, user_id, date",
}

// checksumSkip lists columns left out of a table's sum, where a live read
// model and a rebuilt one may differ without their data differing: applied
// rows from before schema 7 have an empty scope (their seq names the
// event); and row ids number rows in the order they were written, so once
// a user is forgotten (their events erased from the stream) a rebuild
// numbers the others' rows differently, with the same data; a turn's
// span of events (first_seq, carried_seq) is only approximated for turns
// recorded before schema 10; how often a user's texts changed counts
// changes whose events a forget or retention may since have erased.
var checksumSkip = map[string][]string{
	"scope_counts":   {"turn_changes", "memory_changes"},
	"applied":        {"namespace", "user_id"},
	"turns":          {"id", "first_seq", "carried_seq"},
	"memory_history": {"id"},
	"episodes":       {"rid"},
}

// TableSums is the checksum of each table.
type TableSums map[string]string

// Checksum hashes every row of every table, in a canonical order, and
// returns the stream position they reflect; all of it is read in one
// transaction, so it is a consistent snapshot even while the projector
// writes. Two read models with the same checksum hold the same data. The
// full-text index is derived from turns by Apply, so turns cover it.
func (s *Store) Checksum(ctx context.Context) (TableSums, uint64, error) {
	return s.checksum(ctx, false)
}

// ContentChecksum is Checksum without stream positions: the meta table
// and every seq column are left out. Two read models built from the same
// events in the same order have equal content checksums even where the
// events sit at other sequences of another stream (an export imported
// elsewhere).
func (s *Store) ContentChecksum(ctx context.Context) (TableSums, error) {
	sums, _, err := s.checksum(ctx, true)
	return sums, err
}

// ContentChecksumOf is ContentChecksum of the tables named, each without
// its columns in skip as well: for comparing read models built by
// different processes, where a column records when a process did its
// work (a wall-clock time) rather than what the events say.
func (s *Store) ContentChecksumOf(ctx context.Context, tables []string, skip map[string][]string) (TableSums, error) {
	return s.ContentChecksumWhere(ctx, tables, skip, nil)
}

// ContentChecksumWhere is ContentChecksumOf of the rows of the users keep
// keeps (all when keep is nil): a whole read model's rows of one
// partition's users sum as that partition's copy does. Every table named
// must have namespace and user_id columns when keep is set.
func (s *Store) ContentChecksumWhere(ctx context.Context, tables []string, skip map[string][]string,
	keep func(namespace, user string) bool) (TableSums, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("checksum: %w", err)
	}
	defer quiet.Rollback(tx)
	out := TableSums{}
	for _, table := range tables {
		order, ok := checksummed[table]
		if !ok {
			return nil, fmt.Errorf("checksum: no table %q in the read model", table)
		}
		sum, err := tableSumWhere(ctx, tx, table, order, true, keep, skip[table]...)
		if err != nil {
			return nil, err
		}
		out[table] = sum
	}
	return out, nil
}

func (s *Store) checksum(ctx context.Context, content bool) (TableSums, uint64, error) {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("checksum: %w", err)
	}
	defer quiet.Rollback(tx)
	seq, err := lastSeq(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	out := TableSums{}
	for table, order := range checksummed {
		if content && table == "meta" {
			continue
		}
		sum, err := tableSum(ctx, tx, table, order, content)
		if err != nil {
			return nil, 0, err
		}
		out[table] = sum
	}
	return out, seq, nil
}

func tableSum(ctx context.Context, tx *sql.Tx, table, order string, content bool, also ...string) (string, error) {
	return tableSumWhere(ctx, tx, table, order, content, nil, also...)
}

func tableSumWhere(ctx context.Context, tx *sql.Tx, table, order string, content bool, keep func(namespace, user string) bool,
	also ...string) (string, error) {
	skip := append(slices.Clone(checksumSkip[table]), also...)
	if content {
		skip = append(skip, "seq")
	}
	cols, err := summedColumns(ctx, tx, table, skip)
	if err != nil {
		return "", err
	}
	if keep != nil {
		// The user's columns first, to filter by; not summed.
		cols = `namespace AS k_ns, user_id AS k_user, ` + cols
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+cols+` FROM `+table+` ORDER BY `+order)
	if err != nil {
		return "", fmt.Errorf("checksum %s: %w", table, err)
	}
	defer quiet.Close(rows)
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
		summed := vals
		if keep != nil {
			ns, _ := vals[0].(string)
			user, _ := vals[1].(string)
			if !keep(ns, user) {
				continue
			}
			summed = vals[2:]
		}
		for _, v := range summed {
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

// summedColumns is the select list of a table's sum: every column but
// those in skip.
func summedColumns(ctx context.Context, tx *sql.Tx, table string, skip []string) (string, error) {
	if len(skip) == 0 {
		return "*", nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return "", fmt.Errorf("checksum %s: columns: %w", table, err)
	}
	defer quiet.Close(rows)
	var cols []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return "", fmt.Errorf("checksum %s: columns: %w", table, err)
		}
		if !slices.Contains(skip, name) {
			cols = append(cols, name)
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("checksum %s: columns: %w", table, err)
	}
	return strings.Join(cols, ", "), nil
}
