package sqlite

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

// TurnsAround returns each neighbour of the hits once, the best hits
// reaching one turn further, and never a hit itself: hits 3 and 4 of
// session a are each other's neighbours, and their windows overlap.
func TestTurnsAroundReadsEachNeighbourOnce(t *testing.T) {
	s := openTest(t)
	var batch []memory.Applied
	for i := range 10 {
		batch = append(batch, turn(uint64(len(batch)+1), "ana", "a", i, fmt.Sprintf("a%d", i)),
			turn(uint64(len(batch)+2), "ana", "b", i, fmt.Sprintf("b%d", i)))
	}
	batch = append(batch, turn(uint64(len(batch)+1), "bo", "a", 2, "bo's a2"))
	mustApply(t, s, batch...)
	scope := memory.Scope{Namespace: "ns", User: "ana"}
	hits := turnHits(t, s, scope, "a3", "a4", "b8")
	around, err := s.TurnsAround(t.Context(), scope, hits, 1, 1) // a3 reaches two turns
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range around {
		got = append(got, h.Content)
	}
	slices.Sort(got)
	if want := []string{"a1", "a2", "a5", "b7", "b9"}; !slices.Equal(got, want) {
		t.Errorf("turns around a3 (reaching 2), a4 and b8 = %q, want %q", got, want)
	}
}

// The hits' own turns are not read again: the caller holds them, and in
// a long session the best hits are each other's neighbours, so they were
// most of what TurnsAround read. Here the hits are alone in their
// sessions, 20 turns of 32 KB: what the read allocates stays far below
// the 640 KB their text would.
func TestTurnsAroundLeavesTheHitsUnread(t *testing.T) {
	s := openTest(t)
	var batch []memory.Applied
	var contents []string
	for i := range 20 {
		c := fmt.Sprintf("turn %d %s", i, strings.Repeat("x", 32<<10))
		batch = append(batch, turn(uint64(i+1), "ana", fmt.Sprintf("s%d", i), 0, c))
		contents = append(contents, c)
	}
	mustApply(t, s, batch...)
	scope := memory.Scope{Namespace: "ns", User: "ana"}
	hits := turnHits(t, s, scope, contents...)
	read := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		around, err := s.TurnsAround(t.Context(), scope, hits, 1, 5)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(around) != 0 {
			t.Fatalf("turns around turns alone in their sessions: %d, want none", len(around))
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	read() // the statement is prepared on the first
	if got := read(); got > 128<<10 {
		t.Errorf("reading the turns around 20 hits of 32 KB, alone in their sessions, allocated %d KB: the hits were read again", got>>10)
	}
}

// turnHits reads the turns of scope with the given contents, as a recall
// path finds them.
func turnHits(t *testing.T, s *Store, scope memory.Scope, contents ...string) []memory.TurnHit {
	t.Helper()
	rows, err := s.r.QueryContext(t.Context(), `SELECT `+turnHitColumns+` FROM turns t WHERE namespace = ? AND user_id = ?`,
		scope.Namespace, scope.User)
	if err != nil {
		t.Fatal(err)
	}
	all, err := scanTurnHits(rows, 0)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	var hits []memory.TurnHit
	for _, c := range contents {
		i := slices.IndexFunc(all, func(h memory.TurnHit) bool { return h.Content == c })
		if i < 0 {
			t.Fatalf("no turn of %v says %.20q", scope, c)
		}
		hits = append(hits, all[i])
	}
	return hits
}

// A run goes to SQL as one string, and SQL reads back its session and
// turn indexes whatever their sign and size.
func TestAroundRunReadsBack(t *testing.T) {
	s := openTest(t)
	for _, c := range []struct {
		session     string
		first, last int
	}{{"s", 0, 2}, {"session-7", -2, 1}, {"会话 ·", math.MinInt64, math.MaxInt64}, {"", -1, -1}} {
		var session string
		var first, last int
		run := aroundRun(c.session, c.first, c.last)
		err := s.r.QueryRowContext(t.Context(), fmt.Sprintf(`SELECT substr(?1, %d), CAST(substr(?1, 1, %d) AS INTEGER), CAST(substr(?1, %d, %[2]d) AS INTEGER)`,
			2*runDigits+1, runDigits, runDigits+1), run).Scan(&session, &first, &last)
		if err != nil {
			t.Fatal(err)
		}
		if session != c.session || first != c.first || last != c.last {
			t.Errorf("run %q reads back as %q, %d, %d; want %q, %d, %d", run, session, first, last, c.session, c.first, c.last)
		}
	}
}

// Each run is one range of the unique index on (namespace, user_id,
// session_id, turn_index), its bounds read from the run's string.
func TestTurnsAroundSearchesTheIndex(t *testing.T) {
	plan := queryPlan(t, openTest(t), turnsAroundSQL, `["x"]`, "ns", "ana", "[1]")
	if !slices.ContainsFunc(plan, func(d string) bool {
		return strings.HasPrefix(d, "SEARCH t USING INDEX") && strings.Contains(d, "session_id=? AND turn_index>? AND turn_index<?")
	}) {
		t.Fatalf("plan of turnsAroundSQL:\n%s\nwant each run a range of the turns' unique index", strings.Join(plan, "\n"))
	}
}
