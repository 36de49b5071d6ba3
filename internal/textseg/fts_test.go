package textseg

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/engramhq/engram/internal/quiet"
	_ "modernc.org/sqlite"
)

// ftsTable is a real SQLite FTS5 table shaped like the ones the store keeps:
// contentless, so only the tokens of Index's output are stored.
type ftsTable struct {
	tb testing.TB
	db *sql.DB
}

func openFTS(tb testing.TB) *ftsTable {
	tb.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		tb.Fatalf("open sqlite: %v", err)
	}
	// Each connection to :memory: is its own database.
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	for _, stmt := range []string{
		fmt.Sprintf(`CREATE VIRTUAL TABLE f USING fts5(body, content='', contentless_delete=1, tokenize='%s')`, Tokenizer),
		`CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			tb.Fatalf("%s: %v", stmt, err)
		}
	}
	return &ftsTable{tb: tb, db: db}
}

// insert stores Index(text) as row id.
func (f *ftsTable) insert(id int64, text string) {
	f.tb.Helper()
	if _, err := f.db.Exec(`INSERT INTO f(rowid, body) VALUES (?, ?)`, id, Index(text)); err != nil {
		f.tb.Fatalf("insert %q: %v", text, err)
	}
}

func (f *ftsTable) clear() {
	f.tb.Helper()
	if _, err := f.db.Exec(`DELETE FROM f`); err != nil {
		f.tb.Fatalf("clear: %v", err)
	}
}

// search runs Match(query) and returns the ids found, best first. A query
// with nothing searchable finds nothing and runs no SQL.
func (f *ftsTable) search(query string) []int64 {
	f.tb.Helper()
	ids, err := f.run(Match(query))
	if err != nil {
		f.tb.Fatalf("search %q: MATCH %q: %v", query, Match(query), err)
	}
	return ids
}

func (f *ftsTable) run(expr string) ([]int64, error) {
	if expr == "" {
		return nil, nil
	}
	rows, err := f.db.Query(`SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank`, expr)
	if err != nil {
		return nil, err
	}
	defer quiet.Close(rows)
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// vocab returns every distinct token in the table.
func (f *ftsTable) vocab() map[string]bool {
	f.tb.Helper()
	rows, err := f.db.Query(`SELECT term FROM v`)
	if err != nil {
		f.tb.Fatalf("read vocabulary: %v", err)
	}
	defer quiet.Close(rows)
	terms := make(map[string]bool)
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			f.tb.Fatalf("read vocabulary: %v", err)
		}
		terms[t] = true
	}
	if err := rows.Err(); err != nil {
		f.tb.Fatalf("read vocabulary: %v", err)
	}
	return terms
}

func contains(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
