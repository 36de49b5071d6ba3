package sqlite

import (
	"maps"
	"math"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// HandledTurns: extracted turns with the sequence of the version
// extracted, turns of a request on its way whatever their version, and
// not a turn edited since it was extracted.
func TestHandledTurns(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	r1 := requested(4, "u", "s", "q1", 0, 1)
	mustApply(t, s, turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b"), turn(3, "u", "s", 2, "c"), r1, result(5, r1),
		requested(6, "u", "s", "q2", 2), turn(7, "u", "s", 1, "b, edited"), turn(8, "v", "s", 0, "another user"))
	u := memory.Scope{Namespace: "ns", User: "u"}
	got, err := s.HandledTurns(t.Context(), u, "s", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[int]uint64{0: 1, 2: math.MaxUint64}); !maps.Equal(got, want) {
		t.Fatalf("handled = %v, want %v", got, want)
	}
	// A request with no result, made before since, is not waited for.
	got, err = s.HandledTurns(t.Context(), u, "s", time.Unix(7, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := (map[int]uint64{0: 1}); !maps.Equal(got, want) {
		t.Fatalf("handled since the request = %v, want %v", got, want)
	}
}
