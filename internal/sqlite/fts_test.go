package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// What an edit or a delete replaces leaves the full-text index's pages
// at once, without a forget: a memory updated, deleted, ignored or
// rewritten by a merge, a turn recorded again, an episode built again.
// The old words stay only where the read model keeps them on purpose
// (a memory's history, a rejected memory's row).
func TestReplacedTextLeavesTheIndex(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "engram.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(s)
	seq := uint64(0)
	next := func(a memory.Applied) memory.Applied {
		seq++
		a.Seq, a.ID, a.Time = seq, fmt.Sprintf("x%d", seq), time.Unix(int64(seq), 0).UTC()
		return a
	}
	memAdd := func(user, id, content string, confidence float64) memory.Applied {
		return next(derived(0, user, events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: id, Kind: "fact", Category: "decision",
			Subject: "project", Predicate: "codename", Content: content, Importance: 0.9, Confidence: confidence}))
	}
	episode := func(user, summary string) memory.Applied {
		return next(derived(0, user, events.TypeEpisodeBuilt, &events.Episode{ID: "ep-1", SessionID: "s1", Summary: summary,
			Outcome: "completed", Started: time.Unix(1, 0), Ended: time.Unix(2, 0), Source: events.SourceCompression, Turns: []int{0}}))
	}
	// Each old word is the only one of its user to start with "qx", so
	// the index stores it whole, not as the end of a shared prefix.
	for _, tc := range []struct {
		name, word string
		before     []memory.Applied
		after      []memory.Applied
		kept       []string // tables that keep the old text on purpose
		find       func(context.Context, memory.Scope, string) (int, error)
		now        string // what the index finds instead
	}{
		{name: "memory updated", word: "qxupdatedword",
			before: []memory.Applied{memAdd("u1", "m1", "the codename is qxupdatedword", 1)},
			after: []memory.Applied{next(derived(0, "u1", events.TypeMemoryUpdated,
				&events.MemoryUpdated{MemoryID: "m1", Content: ptr("the codename is plainname")}))},
			kept: []string{"memory_history"}, find: s.countMemories, now: "plainname"},
		{name: "memory deleted", word: "qxdeletedword",
			before: []memory.Applied{memAdd("u2", "m2", "the codename is qxdeletedword", 1)},
			after:  []memory.Applied{next(derived(0, "u2", events.TypeMemoryDeleted, &events.MemoryDeleted{MemoryID: "m2"}))},
			find:   s.countMemories},
		{name: "pending ignored", word: "qxignoredword",
			before: []memory.Applied{memAdd("u3", "m3", "the codename is qxignoredword", memory.ConfidencePending)},
			after:  []memory.Applied{next(derived(0, "u3", events.TypePendingIgnored, &events.PendingDecision{MemoryID: "m3"}))},
			kept:   []string{"memories", "memory_history"}, find: s.countMemories},
		{name: "memory merged", word: "qxmergedword",
			before: []memory.Applied{memAdd("u4", "m4", "the codename is qxmergedword", 1),
				next(added(0, "u4", "m5", "the codename is also plain", 0.5))},
			after: []memory.Applied{next(derived(0, "u4", events.TypeMemoriesMerged, &events.MemoriesMerged{Into: "m4", Merged: []string{"m5"},
				Importance: 0.9, Content: ptr("the codename is mergedname"), ClusterID: "c1"}))},
			kept: []string{"memory_history"}, find: s.countMemories, now: "mergedname"},
		{name: "turn recorded again", word: "qxturnword",
			before: []memory.Applied{next(turn(0, "u5", "s1", 0, "the qxturnword ships"))},
			after:  []memory.Applied{next(turn(0, "u5", "s1", 0, "the release ships"))},
			find:   s.countTurns, now: "release"},
		{name: "episode built again", word: "qxepisodeword",
			before: []memory.Applied{episode("u6", "talked about qxepisodeword")},
			after:  []memory.Applied{episode("u6", "talked about the launch")},
			find:   s.countEpisodes, now: "launch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustApply(t, s, tc.before...)
			if err := s.Scrub(t.Context()); err != nil {
				t.Fatal(err)
			}
			stem := tc.word[:len(tc.word)-2] // porter may rewrite a word's end
			if got := wordPages(t, s, path, stem); got[fts(tc.before[0])] == 0 {
				t.Fatalf("%q is not on the index's pages before the change: %v", tc.word, got)
			}
			mustApply(t, s, tc.after...)
			if err := s.Scrub(t.Context()); err != nil {
				t.Fatal(err)
			}
			for owner, n := range wordPages(t, s, path, stem) {
				if !slices.Contains(tc.kept, owner) {
					t.Errorf("%q is still in %s (%d times)", tc.word, owner, n)
				}
			}
			scope := tc.before[0].Scope
			if n, err := tc.find(t.Context(), scope, tc.word); err != nil || n != 0 {
				t.Errorf("%q finds %d rows (%v), want none", tc.word, n, err)
			}
			if tc.now != "" {
				if n, err := tc.find(t.Context(), scope, tc.now); err != nil || n != 1 {
					t.Errorf("%q finds %d rows (%v), want 1", tc.now, n, err)
				}
			}
		})
	}
	indexMatchesRows(t, s)
}

// fts is the full-text table a's record is indexed in.
func fts(a memory.Applied) string {
	switch a.Type {
	case events.TypeTurnRecorded:
		return "turns_fts_data"
	case events.TypeEpisodeBuilt:
		return "episodes_fts_data"
	}
	return "memories_fts_data"
}

// wordPages counts word's occurrences in the database file, by the table
// or index whose page holds it ("free" for a page no b-tree owns).
func wordPages(t *testing.T, s *Store, path, word string) map[string]int {
	t.Helper()
	owners := map[int64]string{}
	rows, err := s.w.QueryContext(t.Context(), `SELECT name, pageno FROM dbstat`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var page int64
		if err := rows.Scan(&name, &page); err != nil {
			t.Fatal(err)
		}
		owners[page] = name
	}
	quiet.Close(rows)
	var size int64
	if err := s.w.QueryRowContext(t.Context(), `PRAGMA page_size`).Scan(&size); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	for off := int64(0); off < int64(len(b)); off += size {
		if n := bytes.Count(b[off:min(off+size, int64(len(b)))], []byte(word)); n > 0 {
			owner, ok := owners[off/size+1]
			if !ok {
				owner = "free"
			}
			found[owner] += n
		}
	}
	return found
}

// indexMatchesRows checks that each full-text table holds, for every row
// it indexes, exactly the words the row's text gives now (what a rebuild
// or a migration's reindex writes), and nothing of rows no longer there:
// a delete that named other words than those indexed would leave some.
func indexMatchesRows(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	conn, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(conn)
	for _, f := range []struct {
		f  ftsTable
		id string
	}{{turnsFTS, "t.id"}, {memoriesFTS, "m.rowid"}, {episodesFTS, "e.rid"}} {
		rebuilt := "temp.rebuilt_" + f.f.name
		for _, q := range []string{
			`DROP TABLE IF EXISTS ` + rebuilt,
			`CREATE VIRTUAL TABLE ` + rebuilt + ` USING fts5(body, content='', tokenize='` + textseg.Tokenizer + `')`,
			`DROP TABLE IF EXISTS temp.vocab_live`,
			`DROP TABLE IF EXISTS temp.vocab_rebuilt`,
			`CREATE VIRTUAL TABLE temp.vocab_live USING fts5vocab(main, ` + f.f.name + `, 'instance')`,
			`CREATE VIRTUAL TABLE temp.vocab_rebuilt USING fts5vocab(temp, rebuilt_` + f.f.name + `, 'instance')`,
		} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = reindexTable(ctx, tx, rebuilt, f.f.rows+` WHERE `+f.id+` IN (SELECT id FROM main.`+f.f.name+`_docsize)`, f.f.body)
		if err == nil {
			err = tx.Commit()
		} else {
			quiet.Rollback(tx) // the reindex's error is the one to report
		}
		if err != nil {
			t.Fatalf("rebuild %s: %v", f.f.name, err)
		}
		live, again := instances(t, conn, "temp.vocab_live"), instances(t, conn, "temp.vocab_rebuilt")
		if live != again {
			t.Errorf("%s differs from its rows' text:\nlive:\n%s\nfrom the rows:\n%s", f.f.name, live, again)
		}
		var held, rows int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM `+f.f.name+`_docsize`).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM (`+f.f.rows+` WHERE `+f.id+` IN (SELECT id FROM `+f.f.name+`_docsize))`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if held != rows {
			t.Errorf("%s holds %d rows, %d of them still in the read model", f.f.name, held, rows)
		}
	}
}

func instances(t *testing.T, conn *sql.Conn, vocab string) string {
	t.Helper()
	rows, err := conn.QueryContext(t.Context(), `SELECT term, doc, offset FROM `+vocab+` ORDER BY term, doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(rows)
	var b strings.Builder
	for rows.Next() {
		var term string
		var doc, off int64
		if err := rows.Scan(&term, &doc, &off); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %d\n", term, doc, off)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// After every kind of change, forgets and expiries among them, the index
// holds what the rows give, and the index's own check passes.
func TestIndexMatchesRowsAfterChanges(t *testing.T) {
	s := openTest(t)
	seq := uint64(1)
	for i, c := range canaries {
		seq = plantCanaries(t, s, seq, "zed", c)
		seq = plantCanaries(t, s, seq, "kim", fmt.Sprintf("keepsake%d", i))
		seq = plantCanaries(t, s, seq, "ann", fmt.Sprintf("annword%d", i))
	}
	indexMatchesRows(t, s)
	mustApply(t, s, memory.Applied{Envelope: memory.Envelope{Seq: seq, Source: "engram/operator", ID: "forget-1",
		Type: events.TypeUserForgotten, Scope: memory.Scope{Namespace: "ns", User: "zed"}, Time: time.Unix(int64(seq), 0).UTC()},
		Data: &events.UserForgotten{}},
		derived(seq+1, "ann", events.TypeTurnsExpired, &events.TurnsExpired{BeforeSeq: seq / 2, StoredBefore: time.Unix(1, 0)}))
	indexMatchesRows(t, s)
	for _, table := range []string{"turns_fts", "memories_fts", "episodes_fts"} {
		if _, err := s.w.ExecContext(t.Context(), `INSERT INTO `+table+` (`+table+`, rank) VALUES ('integrity-check', 0)`); err != nil {
			t.Errorf("%s: %v", table, err)
		}
	}
}

// A read model from before schema 13, whose index kept the words of a
// memory edited and of a turn recorded again (marked deleted, still on
// the pages), opens with them gone and its index what its rows give.
func TestMigrationDropsDeletedWords(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v12.db")
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for i, m := range migrations[:12] {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(m.sql); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
		if m.fill != nil {
			if err := m.fill(ctx, tx); err != nil {
				t.Fatalf("migration %d: %v", i+1, err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	alice := memory.Scope{Namespace: "ns", User: "alice"}
	// What schema 12 did on an edit: the row changed, its index row
	// deleted (a mark) and written again.
	for _, stmt := range []string{
		`PRAGMA user_version = 12`,
		`INSERT INTO turns (id, namespace, user_id, session_id, turn_index, role, content, time, tokens, event_source, event_id, seq)
			VALUES (7, 'ns', 'alice', 's1', 0, 'user', 'the release ships', 1, 5, 'x', 'e1', 1)`,
		`INSERT INTO turns_fts (rowid, body) VALUES (7, '` + textseg.IndexIn(partition(alice), "the qxturnword ships") + `')`,
		`DELETE FROM turns_fts WHERE rowid = 7`,
		`INSERT INTO turns_fts (rowid, body) VALUES (7, '` + textseg.IndexIn(partition(alice), "the release ships") + `')`,
		`INSERT INTO memories (rowid, id, namespace, user_id, kind, category, subject, predicate, content, importance, confidence,
			status, source, source_events, created, updated)
			VALUES (3, 'm1', 'ns', 'alice', 'fact', 'decision', 'project', 'codename', 'the codename is plainname', 0.5, 0.9,
			'active', 'llm', '[]', 1, 1)`,
		`INSERT INTO memories_fts (rowid, body) VALUES (3, '` + memoryBody(alice, "project", "codename", "the codename is qxupdatedword") + `')`,
		`DELETE FROM memories_fts WHERE rowid = 3`,
		`INSERT INTO memories_fts (rowid, body) VALUES (3, '` + memoryBody(alice, "project", "codename", "the codename is plainname") + `')`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"qxturnwor", "qxupdatedwor"} {
		if !bytes.Contains(b, []byte(w)) {
			t.Fatalf("schema 12 did not keep %q: the test shows nothing", w)
		}
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(s)
	if err := s.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"qxturnwor", "qxupdatedwor"} {
		if got := wordPages(t, s, path, w); len(got) != 0 {
			t.Errorf("after the migration %q is still in %v", w, got)
		}
	}
	for _, tc := range []struct {
		find  func(context.Context, memory.Scope, string) (int, error)
		query string
	}{{s.countTurns, "release"}, {s.countMemories, "plainname"}} {
		if n, err := tc.find(ctx, alice, tc.query); err != nil || n != 1 {
			t.Errorf("%q finds %d rows (%v), want 1", tc.query, n, err)
		}
	}
	indexMatchesRows(t, s)
	// And it deletes by words from now on.
	mustApply(t, s, derived(10, "alice", events.TypeMemoryDeleted, &events.MemoryDeleted{MemoryID: "m1"}))
	indexMatchesRows(t, s)
}
