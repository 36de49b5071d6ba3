package sqlite

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram/events"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// A long list of matches is cut to the turns BM25 puts first: ana's one
// turn with "deploy", the rarer word of "coffee deploy", stays among the
// candidates though 150 of her turns say "coffee", more than are read.
func TestCandidatesKeepTheRareWord(t *testing.T) {
	s := openTest(t)
	batch := []memory.Applied{turn(1, "ana", "a", 0, "I deploy on Fridays")}
	for i := range 150 {
		batch = append(batch, turn(uint64(i+2), "ana", "a", i+1, fmt.Sprintf("coffee break %d", i)))
	}
	mustApply(t, s, batch...)
	hits, err := s.RecallTurns(t.Context(), memory.Scope{Namespace: "ns", User: "ana"}, textseg.Understand("coffee deploy"), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Content != "I deploy on Fridays" {
		got := "nothing"
		if len(hits) > 0 {
			got = fmt.Sprintf("%q", hits[0].Content)
		}
		t.Fatalf("ana's best turn for %q is %s, want %q", "coffee deploy", got, "I deploy on Fridays")
	}
}

// The candidates' turns are read by primary key, the list of ids leading
// the join: the planner, left to choose, walked every turn of the user in
// the (namespace, user_id) index to probe the few (100,000 index entries
// a query, for a user with 100k turns).
func TestTurnRowsReadByPrimaryKey(t *testing.T) {
	plan := queryPlan(t, openTest(t), turnRowsSQL, "[1,2,3]", "ns", "ana")
	if len(plan) != 2 || !strings.HasPrefix(plan[0], "SCAN j ") || !strings.HasPrefix(plan[1], "SEARCH t USING INTEGER PRIMARY KEY") {
		t.Fatalf("plan of turnRowsSQL:\n%s\nwant the ids scanned, each turn searched by its primary key", strings.Join(plan, "\n"))
	}
}

// A superseded memory, which the index still holds for history, never
// takes an active memory's place among the candidates of a long list.
func TestMemoryCandidatesAreActive(t *testing.T) {
	s := openTest(t)
	scope := memory.Scope{Namespace: "ns", User: "ana"}
	var batch []memory.Applied
	seq := uint64(0)
	// 150 memories say "tea": more than the candidates a query reads.
	for i := range 150 {
		seq++
		batch = append(batch, slotted(seq, fmt.Sprintf("m%d", i), i, fmt.Sprintf("tea note %d", i)))
	}
	mustApply(t, s, batch...)
	// 120 of them are superseded by a new value of their slot, which
	// says "kettle"; the old versions, still indexed, say "tea".
	batch = batch[:0]
	for i := range 120 {
		seq++
		batch = append(batch, slotted(seq, fmt.Sprintf("n%d", i), i, fmt.Sprintf("kettle note %d", i)))
	}
	mustApply(t, s, batch...)
	var superseded int
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM memories WHERE status = 'superseded'`).Scan(&superseded); err != nil {
		t.Fatal(err)
	}
	if superseded != 120 {
		t.Fatalf("%d memories superseded, want 120", superseded)
	}
	hits, err := s.RecallMemories(t.Context(), scope, textseg.Understand("tea"), 200)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(hits), 30; got != want {
		t.Fatalf("%d memories found for tea, want the %d active ones that say it", got, want)
	}
	for _, h := range hits {
		if h.Status != memory.StatusActive {
			t.Fatalf("memory %s (%s) found, want only active ones", h.ID, h.Status)
		}
	}
}

// slotted is ana's memory id, the one value of slot n.
func slotted(seq uint64, id string, n int, content string) memory.Applied {
	return derived(seq, "ana", events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: id, Kind: "fact", Category: "identity",
		Subject: fmt.Sprintf("person%d", n), Predicate: "location", Content: content, Importance: 0.5, Confidence: 1, Tier: 2})
}

// FTS5 writes a document's length as a SQLite varint.
func TestVarint(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want int
		ok   bool
	}{
		{[]byte{0x00}, 0, true},
		{[]byte{0x7f}, 127, true},
		{[]byte{0x81, 0x00}, 128, true},
		{[]byte{0x82, 0x2c}, 300, true},
		{[]byte{0xff, 0xff, 0x7f}, 1<<21 - 1, true},
		{[]byte{0x81}, 0, false},
		{nil, 0, false},
	} {
		got, ok := varint(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("varint(%x) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// queryPlan is what EXPLAIN QUERY PLAN says of query, a line a step.
func queryPlan(t *testing.T, s *Store, query string, args ...any) []string {
	t.Helper()
	rows, err := s.r.QueryContext(t.Context(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(rows)
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
