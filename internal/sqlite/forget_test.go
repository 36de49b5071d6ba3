package sqlite

import (
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// An event of a forgotten user dated before their erasure — a worker's
// conclusion that was in flight when the user was forgotten, say — is not
// applied; one dated after is (the user came back).
func TestForgottenUserStaysForgotten(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	scope := memory.Scope{Namespace: "ns", User: "u"}
	receipt := memory.Applied{Envelope: memory.Envelope{Seq: 10, Source: "engram/operator", ID: "forget-1",
		Type: events.TypeUserForgotten, Scope: scope, Time: time.Unix(10, 0).UTC()}, Data: &events.UserForgotten{}}
	mustApply(t, s, turn(1, "u", "s", 0, "before"), receipt, turn(11, "u", "s", 0, "late but dated before"))
	late := turn(12, "u", "s", 1, "in flight")
	late.Time = time.Unix(5, 0).UTC()
	mustApply(t, s, late)
	if n, _ := s.CountTurns(t.Context(), scope); n != 1 {
		t.Fatalf("turns = %d, want 1 (the one dated after the erasure)", n)
	}
	after := turn(13, "u", "s", 2, "back again")
	after.Time = time.Unix(20, 0).UTC()
	mustApply(t, s, after)
	if n, _ := s.CountTurns(t.Context(), scope); n != 2 {
		t.Fatalf("turns = %d, want 2", n)
	}

	// In one transaction, the erasure time looked up once holds for each
	// event of the user, and a second forget in the batch moves it.
	again := memory.Applied{Envelope: memory.Envelope{Seq: 16, Source: "engram/operator", ID: "forget-2",
		Type: events.TypeUserForgotten, Scope: scope, Time: time.Unix(30, 0).UTC()}, Data: &events.UserForgotten{}}
	stale, fresh, staleAgain, fresh2 := turn(14, "u", "s", 3, "stale"), turn(15, "u", "s", 4, "fresh"),
		turn(17, "u", "s", 5, "stale after the second forget"), turn(18, "u", "s", 6, "fresh after it")
	stale.Time, fresh.Time, staleAgain.Time, fresh2.Time = time.Unix(6, 0).UTC(), time.Unix(21, 0).UTC(),
		time.Unix(25, 0).UTC(), time.Unix(31, 0).UTC()
	mustApply(t, s, stale, fresh, again, staleAgain, fresh2)
	if n, _ := s.CountTurns(t.Context(), scope); n != 1 {
		t.Fatalf("turns = %d, want 1 (the one dated after the second erasure)", n)
	}
}
