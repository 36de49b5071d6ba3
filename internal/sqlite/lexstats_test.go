package sqlite

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

// Each user's counts of turns and memories (BM25's document counts, kept
// by triggers so no query counts rows) follow every write: apply, update,
// delete, forget; a user with nothing left has no row, as after a rebuild.
func TestScopeCountsFollowEveryWrite(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	counts := func(user string) (turns, mems int) {
		t.Helper()
		err := s.r.QueryRowContext(t.Context(), `SELECT turns, memories FROM scope_counts WHERE namespace = 'ns' AND user_id = ?`, user).Scan(&turns, &mems)
		if err != nil && !strings.Contains(err.Error(), "no rows") {
			t.Fatal(err)
		}
		var ct, cm int
		if err := errors.Join(
			s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM turns WHERE namespace = 'ns' AND user_id = ?`, user).Scan(&ct),
			s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM memories WHERE namespace = 'ns' AND user_id = ?`, user).Scan(&cm)); err != nil {
			t.Fatal(err)
		}
		if turns != ct || mems != cm {
			t.Fatalf("%s: scope_counts %d turns %d memories, rows %d and %d", user, turns, mems, ct, cm)
		}
		return turns, mems
	}
	mustApply(t, s, turn(1, "ana", "s", 0, "alpha"), turn(2, "ana", "s", 1, "beta"), turn(3, "bob", "s", 0, "gamma"),
		added(4, "ana", "m1", "ana likes tea", 0.5))
	if tu, me := counts("ana"); tu != 2 || me != 1 {
		t.Fatalf("ana: %d turns %d memories, want 2 and 1", tu, me)
	}
	mustApply(t, s, turn(5, "ana", "s", 1, "beta, said again"))
	counts("ana")
	counts("bob")
	mustApply(t, s, derived(6, "ana", events.TypeUserForgotten, &events.UserForgotten{Reason: "request"}))
	if tu, me := counts("ana"); tu != 0 || me != 0 {
		t.Fatalf("after forget: %d turns %d memories", tu, me)
	}
	var rows int
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM scope_counts WHERE user_id = 'ana'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("a forgotten user keeps %d scope_counts rows", rows)
	}
	if tu, _ := counts("bob"); tu != 1 {
		t.Fatalf("bob: %d turns, want 1", tu)
	}
}

// A word no turn held when a query last counted it is found in the turn
// that says it next: a cached document frequency never hides a new
// document (Store.dfs).
func TestNewWordIsFoundAtOnce(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	scope := memory.Scope{Namespace: "ns", User: "ana"}
	var batch []memory.Applied
	for i := range 40 {
		batch = append(batch, turn(uint64(i+1), "ana", "s", i, fmt.Sprintf("we talked about the weather, day %d", i)))
	}
	mustApply(t, s, batch...)
	find := func(word string) int {
		t.Helper()
		hits, err := s.RecallTurns(t.Context(), scope, textseg.Understand(word), 10)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range hits {
			if strings.Contains(h.Content, word) {
				n++
			}
		}
		return n
	}
	if n := find("zebra"); n != 0 {
		t.Fatalf("zebra found %d times before anyone said it", n)
	}
	find("weather") // cached: a word most turns hold
	mustApply(t, s, turn(41, "ana", "s", 40, "the zoo got a zebra"))
	if n := find("zebra"); n != 1 {
		t.Fatalf("zebra found %d times after it was said, want 1", n)
	}
	// Said again in a rewritten turn, with the count of turns unchanged.
	mustApply(t, s, turn(42, "ana", "s", 0, "we talked about the okapi"))
	if n := find("okapi"); n != 1 {
		t.Fatalf("okapi found %d times after a turn was rewritten with it, want 1", n)
	}
}

// A long query keeps its rare words wherever they stand: a memory that
// holds only a word of an early, lightly weighted sentence of a long
// dialogue is found, though the last sentence alone has more than a
// hundred heavier terms, words every other memory holds (the 48 heaviest
// were all that was weighed).
func TestLongQueryKeepsItsRareWords(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	scope := memory.Scope{Namespace: "ns", User: "ana"}
	var common []string
	for i := range 120 {
		common = append(common, fmt.Sprintf("w%03dx", i))
	}
	var batch []memory.Applied
	for i := range 30 {
		batch = append(batch, added(uint64(i+1), "ana", fmt.Sprintf("c%d", i), strings.Join(common, " "), 0.5))
	}
	batch = append(batch, added(31, "ana", "rare", "the quokka sanctuary opens in March", 0.5))
	mustApply(t, s, batch...)
	dialogue := "I read about a quokka once. " + strings.Join(common, " ") + "?"
	hits, err := s.RecallMemories(t.Context(), scope, textseg.Understand(dialogue), 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ID == "rare" {
			return
		}
	}
	t.Fatalf("the memory holding the dialogue's one rare word was not recalled among %d", len(hits))
}
