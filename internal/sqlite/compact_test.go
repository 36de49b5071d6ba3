package sqlite

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
	"github.com/engramhq/engram/internal/wait"
)

// segmentedStore is a store whose turns came in many transactions: its
// turns index holds several segments, as a read model's does after
// ingest.
func segmentedStore(t *testing.T) *Store {
	t.Helper()
	s := openTest(t)
	seq := uint64(0)
	for b := range 12 {
		var batch []memory.Applied
		for i := range 20 {
			seq++
			batch = append(batch, turn(seq, "ana", fmt.Sprintf("s%d", b), i, fmt.Sprintf("turn %d of batch %d about coffee and deploys", i, b)))
		}
		mustApply(t, s, batch...)
	}
	segs, err := s.TextSegments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if segs["turns_fts"] < 2 {
		t.Fatalf("turns_fts has %d segments after 12 transactions, want several", segs["turns_fts"])
	}
	return s
}

func recallIDs(t *testing.T, s *Store, q string) []int64 {
	t.Helper()
	hits, err := s.RecallTurns(t.Context(), memory.Scope{Namespace: "ns", User: "ana"}, textseg.Understand(q), 20)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

// An idle read model's full-text index is merged into one segment (each
// segment costs every term a query looks up a seek), and finds the same
// turns in the same order after.
func TestCompactMergesAnIdleIndex(t *testing.T) {
	s := segmentedStore(t)
	before := recallIDs(t, s, "coffee batch 3")
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		s.Compact(ctx, Compaction{Every: time.Millisecond, Segments: 1, Pages: 16, Share: 1}, func(err error) { t.Error(err) })
	})
	wait.For(t, "turns_fts merged into one segment", func() error {
		segs, err := s.TextSegments(t.Context())
		if err != nil {
			return err
		}
		if segs["turns_fts"] != 1 {
			return fmt.Errorf("%d segments", segs["turns_fts"])
		}
		return nil
	})
	if got := recallIDs(t, s, "coffee batch 3"); !slices.Equal(got, before) {
		t.Fatalf("after compaction the turns found are %v, want %v as before", got, before)
	}
}

// While events keep arriving nothing is merged: compaction waits for a
// look at which the read model has not moved.
func TestCompactWaitsForIdle(t *testing.T) {
	s := segmentedStore(t)
	want, err := s.TextSegments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c := Compaction{Every: time.Hour, Segments: 1, Pages: 16, Share: 1}
	var last uint64 // never seen: the first look finds the read model moved
	var spent time.Duration
	var since time.Time
	if err := s.compactOnce(t.Context(), c, &last, &spent, &since); err != nil {
		t.Fatal(err)
	}
	got, err := s.TextSegments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got["turns_fts"] != want["turns_fts"] {
		t.Fatalf("a look at a read model that had just moved merged turns_fts from %d to %d segments, want it left", want["turns_fts"], got["turns_fts"])
	}
	mustApply(t, s, turn(1000, "ana", "late", 0, "one more turn"))
	if err := s.compactOnce(t.Context(), c, &last, &spent, &since); err != nil {
		t.Fatal(err)
	}
	if !since.IsZero() {
		t.Fatal("compaction began on a read model that had moved since the last look")
	}
	if err := s.compactOnce(t.Context(), c, &last, &spent, &since); err != nil {
		t.Fatal(err)
	}
	if got, err = s.TextSegments(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got["turns_fts"] != 1 {
		t.Fatalf("after an idle look turns_fts has %d segments, want 1", got["turns_fts"])
	}
}

// A batch of turns adds one segment to the full-text index, not one a
// turn: under steady ingest the segments a query seeks in come from
// transactions, not events. Each turn's words stay found.
func TestABatchOfTurnsIsOneSegment(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	var batch []memory.Applied
	for i := range 10 {
		batch = append(batch, turn(uint64(i+1), "ana", "s", i, fmt.Sprintf("turn word%d about coffee", i)))
	}
	mustApply(t, s, batch...)
	segs, err := s.TextSegments(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := segs["turns_fts"]; got != 1 {
		t.Errorf("turns_fts has %d segments after one batch of 10 turns, want 1", got)
	}
	for i := range 10 {
		if got := recallIDs(t, s, fmt.Sprintf("word%d", i)); len(got) != 1 {
			t.Errorf("word%d finds turns %v, want one", i, got)
		}
	}
}
