package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// Turns' statements run under a context that cannot interrupt them (see
// fewRows), yet cancelling the apply's context still ends its
// transaction: all of the batch or none of it is applied, and the store
// takes the next batch. The cancel comes at a range of moments, so that
// some land before the transaction and some inside it.
func TestApplyCancelledMidway(t *testing.T) {
	t.Parallel()
	const n = 4000
	var batch []memory.Applied
	for i := range n {
		batch = append(batch, turn(uint64(i+1), "u", fmt.Sprintf("s%d", i/20), i%20, "deploy the service and read the logs"))
	}
	inside := 0
	for _, after := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		s := openTest(t)
		ctx, cancel := context.WithCancel(t.Context())
		stop := time.AfterFunc(after, cancel)
		err := firstError(s.Apply(ctx, batch))
		stop.Stop()
		cancel()
		if err != nil && !strings.Contains(err.Error(), "begin apply") {
			inside++
		}
		got, cerr := s.CountTurns(t.Context(), memory.Scope{Namespace: "ns", User: "u"})
		if cerr != nil {
			t.Fatal(cerr)
		}
		if want := map[bool]int{true: 0, false: n}[err != nil]; got != want {
			t.Fatalf("cancelled after %v: %d turns applied (error %v), want %d: all or none", after, got, err, want)
		}
		mustApply(t, s, turn(n+1, "u", "after", 0, "the next batch applies"))
		if last, err := s.LastSeq(t.Context()); err != nil || last != n+1 {
			t.Fatalf("cancelled after %v: LastSeq=%d, %v after the next batch, want %d", after, last, err, n+1)
		}
	}
	t.Logf("%d of 5 cancels came inside the transaction", inside)
}

// The cancelled context of an apply that has not begun stops it whole.
func TestApplyCancelledBefore(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := firstError(s.Apply(ctx, []memory.Applied{turn(1, "u", "s", 0, "x")})); err == nil {
		t.Fatal("a cancelled apply reported no error")
	}
	if n, err := s.CountTurns(t.Context(), memory.Scope{Namespace: "ns", User: "u"}); err != nil || n != 0 {
		t.Fatalf("CountTurns=%d, %v after a cancelled apply, want 0", n, err)
	}
}

// BenchmarkApplyTurns applies turns 512 to a transaction under a
// cancellable context, as the feed and the projector do.
func BenchmarkApplyTurns(b *testing.B) {
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	s, err := Open(ctx, b.TempDir()+"/b.db")
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	}()
	seq := uint64(0)
	for b.Loop() {
		batch := make([]memory.Applied, 512)
		for j := range batch {
			seq++
			batch[j] = turn(seq, "u", fmt.Sprint("s", seq/20), int(seq%20), "deploy the service to production with the new config and check the logs")
		}
		if err := firstError(s.Apply(ctx, batch)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(seq), "ns/turn")
}
