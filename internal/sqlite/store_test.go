package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"github.com/engramhq/engram/internal/textseg"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	return openIn(t, t.TempDir())
}

// openIn opens the read model engram.db in dir, closed when the test ends.
func openIn(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(dir, "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func turn(seq uint64, user, session string, index int, content string) memory.Applied {
	return memory.Applied{
		Envelope: memory.Envelope{Seq: seq, Source: "test", ID: fmt.Sprintf("e%d", seq), Type: events.TypeTurnRecorded,
			Scope: memory.Scope{Namespace: "ns", User: user}, Time: time.Unix(int64(seq), 0).UTC()},
		Data: &events.TurnRecorded{SessionID: session, TurnIndex: index, Role: "user", Content: content},
	}
}

func mustApply(t *testing.T, s *Store, batch ...memory.Applied) {
	t.Helper()
	for i, err := range s.Apply(t.Context(), batch) {
		if err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
	}
}

// Every table of the schema is in the checksum, so rebuild compares all of
// it. A new table fails this test until it is added to checksummed.
func TestChecksumCoversSchema(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	rows, err := s.r.QueryContext(t.Context(), `SELECT name FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(rows)
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if _, ok := checksummed[name]; !ok {
			t.Errorf("table %s is not in checksummed", name)
		}
	}
}

func TestApplyIsIdempotentAndOrdered(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s, turn(1, "u", "s", 0, "alpha"), turn(2, "u", "s", 1, "beta"))
	before, seq, err := s.Checksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if seq != 2 {
		t.Fatalf("last seq %d, want 2", seq)
	}
	// Redelivered (same seq) and republished (same source+id, new seq).
	again := turn(2, "u", "s", 1, "beta")
	republished := turn(2, "u", "s", 1, "beta")
	republished.Seq = 3
	mustApply(t, s, again, republished)
	after, _, err := s.Checksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after["turns"] != before["turns"] || after["applied"] != before["applied"] {
		t.Fatalf("re-applying changed the read model: %v → %v", before, after)
	}
	if n, _ := s.CountTurns(t.Context(), memory.Scope{Namespace: "ns", User: "u"}); n != 2 {
		t.Fatalf("turns = %d, want 2", n)
	}
}

// One event that cannot be applied is reported alone; the rest of its
// batch commits.
func TestApplyIsolatesABadEvent(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	bad := turn(2, "u", "s", 1, "x")
	bad.Data = "not an event"
	errs := s.Apply(t.Context(), []memory.Applied{turn(1, "u", "s", 0, "first"), bad, turn(3, "u", "s", 2, "third")})
	if errs == nil || errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Fatalf("errs = %v, want only the second to fail", errs)
	}
	if got := memory.ErrorCode(errs[1]); got != memory.EINVALID {
		t.Fatalf("bad event's code %q, want %q", got, memory.EINVALID)
	}
	if n, _ := s.CountTurns(t.Context(), memory.Scope{Namespace: "ns", User: "u"}); n != 2 {
		t.Fatalf("turns = %d, want 2", n)
	}
	if seq, _ := s.LastSeq(t.Context()); seq != 3 {
		t.Fatalf("position %d, want 3", seq)
	}
}

func TestSearchScopeAndSafety(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		turn(1, "a", "s", 0, "我在北京工作，用 c++ 写代码"),
		turn(2, "b", "s", 0, "我在北京工作，用 c++ 写代码"),
		turn(3, "a", "s", 1, `she said "quote" AND -minus content:x NEAR(y)`),
	)
	for _, q := range []string{"北京", "c++", `"quote`, "AND", "-minus", "content:x", "NEAR(y)", "*", ")", `""`} {
		res, err := s.RecallTurns(t.Context(), memory.Scope{Namespace: "ns", User: "a"}, textseg.Understand(q), 10)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		for _, r := range res {
			if !strings.HasPrefix(r.Key, "t_") || r.Key == "t_2" {
				t.Fatalf("search %q as user a returned %s (user b's turn is t_2)", q, r.Key)
			}
		}
	}
	res, _ := s.RecallTurns(t.Context(), memory.Scope{Namespace: "ns", User: "a"}, textseg.Understand("北京"), 10)
	if len(res) != 1 || res[0].Key != "t_1" {
		t.Fatalf("北京 → %+v", res)
	}
}

// A query of stopwords alone finds its matches newest first; a query with
// a word ranks by BM25.
func TestStopwordSearchNewestFirst(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	mustApply(t, s,
		turn(1, "ana", "s", 0, "the the the the the cluster"),
		turn(2, "ana", "s", 1, "the report is late"),
		turn(3, "ana", "s", 2, "the end"),
	)
	scope := memory.Scope{Namespace: "ns", User: "ana"}
	hits, err := s.RecallTurns(t.Context(), scope, textseg.Understand("the"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].TurnIndex != 2 || hits[1].TurnIndex != 1 {
		t.Fatalf("stopword query = %+v, want turns 2 then 1", hits)
	}
	hits, err = s.RecallTurns(t.Context(), scope, textseg.Understand("the cluster"), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].TurnIndex != 0 {
		t.Fatalf("\"the cluster\" = %+v, want turn 0", hits)
	}
	mustApply(t, s, added(4, "ana", "m-old", "the old note", 0.5), added(5, "ana", "m-new", "the new note", 0.5))
	mems, err := s.RecallMemories(t.Context(), scope, textseg.Understand("the"), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) != 2 || mems[0].ID != "m-new" {
		t.Fatalf("stopword memory query = %+v, want m-new first", mems)
	}
}

// Position is a hint that never leads to a wrong apply: after another
// writer of the same file moved the position, or after a reset, a run
// started from the hint is declined and the hint corrected.
func TestPositionHintIsCheckedByApplyNext(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "test.db")
	open := func() *Store {
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		return s
	}
	s, other := open(), open()
	position := func(want uint64) {
		t.Helper()
		if got, err := s.Position(t.Context()); err != nil || got != want {
			t.Fatalf("position hint %d (%v), want %d", got, err, want)
		}
	}
	position(0)
	if ok, err := s.ApplyNext(t.Context(), []memory.Applied{turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b")}); !ok || err != nil {
		t.Fatalf("the next run: ok %v, err %v", ok, err)
	}
	position(2)
	if errs := other.Apply(t.Context(), []memory.Applied{turn(3, "u", "s", 2, "c")}); errs != nil {
		t.Fatal(errs)
	}
	position(2) // stale: the other writer's apply is not seen
	if ok, err := s.ApplyNext(t.Context(), []memory.Applied{turn(3, "u", "s", 2, "c")}); ok || err != nil {
		t.Fatalf("a run from a stale hint: ok %v, err %v; want declined", ok, err)
	}
	position(3)
	if err := s.Reset(t.Context()); err != nil {
		t.Fatal(err)
	}
	position(0)
	if ok, err := s.ApplyNext(t.Context(), []memory.Applied{turn(1, "u", "s", 0, "a")}); !ok || err != nil {
		t.Fatalf("the first run after a reset: ok %v, err %v", ok, err)
	}
	if n, _ := s.CountTurns(t.Context(), memory.Scope{Namespace: "ns", User: "u"}); n != 1 {
		t.Fatalf("turns after reset and one run = %d, want 1", n)
	}
}

// ApplyNext applies a run only right after the position and only whole:
// a run that does not follow, or one with a failing event in the middle,
// leaves the read model as it was, for Apply to take the events in turn.
func TestApplyNextIsAllOrNothingInOrder(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	scope := memory.Scope{Namespace: "ns", User: "u"}
	check := func(wantTurns int, wantSeq uint64) {
		t.Helper()
		if n, _ := s.CountTurns(t.Context(), scope); n != wantTurns {
			t.Fatalf("turns = %d, want %d", n, wantTurns)
		}
		if seq, _ := s.LastSeq(t.Context()); seq != wantSeq {
			t.Fatalf("position %d, want %d", seq, wantSeq)
		}
	}
	if ok, err := s.ApplyNext(t.Context(), []memory.Applied{turn(2, "u", "s", 1, "b"), turn(3, "u", "s", 2, "c")}); ok || err != nil {
		t.Fatalf("a run past a gap: ok %v, err %v; want declined", ok, err)
	}
	check(0, 0)
	if ok, err := s.ApplyNext(t.Context(), []memory.Applied{turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b")}); !ok || err != nil {
		t.Fatalf("the next run: ok %v, err %v", ok, err)
	}
	check(2, 2)
	bad := turn(4, "u", "s", 3, "x")
	bad.Data = "not an event"
	if ok, err := s.ApplyNext(t.Context(), []memory.Applied{turn(3, "u", "s", 2, "c"), bad, turn(5, "u", "s", 4, "e")}); ok || err == nil {
		t.Fatalf("a run with a failing event: ok %v, err %v; want an error", ok, err)
	}
	check(2, 2)
	if ok, err := s.ApplyNext(t.Context(), []memory.Applied{turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b")}); ok || err != nil {
		t.Fatalf("a run already applied: ok %v, err %v; want declined", ok, err)
	}
	if _, err := s.ApplyNext(t.Context(), []memory.Applied{turn(3, "u", "s", 2, "c"), turn(5, "u", "s", 4, "e")}); err == nil {
		t.Fatal("a run with a hole in it was taken")
	}
	errs := s.Apply(t.Context(), []memory.Applied{turn(3, "u", "s", 2, "c"), bad, turn(5, "u", "s", 4, "e")})
	if errs == nil || errs[1] == nil {
		t.Fatalf("Apply after the declined run: errs %v, want the bad event's", errs)
	}
	check(4, 5)
}

// A read model whose making stopped part way (its process killed while
// the schema was written) is named as such by ReadStats, not reported
// as a missing table; Open finishes it.
func TestStatsOfAnUnbuiltReadModel(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "engram-3of4.db")
	db, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), migrations[0].sql); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStats(t.Context(), path, "", ""); !errors.Is(err, ErrUnbuilt) {
		t.Fatalf("stats of a read model made to schema 1: %v, want ErrUnbuilt", err)
	}
	st, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStats(t.Context(), path, "", ""); err != nil {
		t.Fatalf("stats once Open finished it: %v", err)
	}
}

// The writer lets the log grow to walCheckpointPages before copying it
// back: at SQLite's default of 1,000 the same hot pages were copied every
// few commits under steady ingest.
func TestWriterCheckpointsALongLog(t *testing.T) {
	s := openTest(t)
	for pragma, want := range map[string]int{"wal_autocheckpoint": walCheckpointPages, "journal_size_limit": walKeepBytes} {
		var got int
		if err := s.w.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("writer's %s = %d, want %d", pragma, got, want)
		}
	}
}
