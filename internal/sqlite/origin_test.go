package sqlite

import (
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

// Reset leaves an empty read model that applies a stream from its start
// as a new one would; the recorded origin goes with the rest.
func TestReset(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	empty, _, err := s.Checksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetOrigin(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, turn(1, "u", "s", 0, "alpha"), turn(2, "u", "s", 1, "beta"))
	if err := s.Reset(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, seq, err := s.Checksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := empty.Diff(got); seq != 0 || len(d) > 0 {
		t.Fatalf("after reset: seq %d, tables %v differ from a new read model", seq, d)
	}
	if o, err := s.Origin(t.Context()); err != nil || o != "" {
		t.Fatalf("origin %q (%v), want none", o, err)
	}
	// The full-text index is empty too: the same rows apply again and are found once.
	mustApply(t, s, turn(1, "u", "s", 0, "alpha"))
	n := 0
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM turns_fts`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("full-text rows: %d, want 1", n)
	}
	res, err := s.RecallTurns(t.Context(), memory.Scope{Namespace: "ns", User: "u"}, textseg.Understand("alpha"), 10)
	if err != nil || len(res) != 1 {
		t.Fatalf("search alpha: %d hits (%v), want 1", len(res), err)
	}
}
