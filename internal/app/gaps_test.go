package app

import (
	"path/filepath"
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/projector"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap/zaptest"
)

// A message the consumer passed over (lost in flight when MEMORY's leader
// died, redelivered only after its ack wait) is not lost to the read
// model: the projector reads it from the stream and applies it in order.
// Found by clustertest's failover soak, where a retriever kept acknowledged
// turns out of its read model for good.
func TestProjectorAppliesWhatTheConsumerPassed(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleIngest)
	// The projector's reads are a reader's (a retriever's); this process
	// is an ingest, which may read nothing of MEMORY: it borrows the
	// operator's connection its embedded server gives it.
	a.js = a.op.js
	for i, text := range []string{"第一条", "the second, passed over", "第三条"} {
		mustAccept(t, postEvent(t, a, turnEvent("gap-"+text, "gus", "s1", i, "user", text)))
	}
	delivered := func(seq uint64) *stream.Message {
		t.Helper()
		m, err := a.nextStored(t.Context(), seq)
		if err != nil || m == nil || m.Seq != seq {
			t.Fatalf("read seq %d: %+v, %v", seq, m, err)
		}
		m.Delivered = 1
		return m
	}
	scope := memory.Scope{Namespace: "default", User: "gus"}
	readModel := func() *sqlite.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "engram.db"))
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
	log := zaptest.NewLogger(t)

	// The projector alone: seq 2 is behind the position once 3 is applied.
	plain := readModel()
	h := a.project(projector.New(plain, log))
	h(t.Context(), []*stream.Message{delivered(1)})
	h(t.Context(), []*stream.Message{delivered(3)})
	h(t.Context(), []*stream.Message{delivered(2)}) // the redelivery, after its ack wait
	if n, _ := plain.CountTurns(t.Context(), scope); n != 2 {
		t.Fatalf("the plain projector kept %d turns; the test no longer shows the skip", n)
	}

	live := readModel()
	a.store = live
	h = a.inOrder(a.project(projector.New(live, log)), log)
	for _, batch := range [][]*stream.Message{{delivered(1)}, {delivered(3)}, {delivered(2)}} {
		for _, err := range h(t.Context(), batch) {
			if err != nil {
				t.Fatalf("apply seq %d: %v", batch[0].Seq, err)
			}
		}
	}
	if n, _ := live.CountTurns(t.Context(), scope); n != 3 {
		t.Fatalf("turns = %d, want 3", n)
	}
	if last, _ := live.LastSeq(t.Context()); last != 3 {
		t.Fatalf("position %d, want 3", last)
	}
}
