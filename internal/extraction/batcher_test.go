package extraction

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

type recorder struct {
	mu  sync.Mutex
	got []*events.ExtractionRequested
}

func (r *recorder) emit(_ context.Context, evs ...memory.Outgoing) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range evs {
		r.got = append(r.got, e.Data.(*events.ExtractionRequested))
	}
	return nil
}

func (r *recorder) requests() []*events.ExtractionRequested {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*events.ExtractionRequested(nil), r.got...)
}

var scope = memory.Scope{Namespace: "default", User: "u"}

func turn(session string, index int, content string) memory.Applied {
	return memory.Applied{Envelope: memory.Envelope{Scope: scope, Type: events.TypeTurnRecorded, Time: time.Now()},
		Data: &events.TurnRecorded{SessionID: session, TurnIndex: index, Role: "user", Content: content}}
}

func handle(t *testing.T, b *Batcher, evs ...memory.Applied) {
	t.Helper()
	for _, err := range b.Handle(t.Context(), evs) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// start runs the batcher's loop inside the bubble until the test ends.
func start(t *testing.T, cfg Config, source memory.TurnSource) (*Batcher, *recorder) {
	r := &recorder{}
	b := NewBatcher(cfg, r.emit, zap.NewNop())
	runBatcher(t, b, source)
	return b, r
}

// runBatcher runs b's loop until the test ends.
func runBatcher(t *testing.T, b *Batcher, source memory.TurnSource) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := b.Run(ctx, source); err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func TestQuietGap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b, r := start(t, DefaultConfig(), nil)
		handle(t, b, turn("s1", 0, "我叫李雷"), turn("s1", 1, "I like tea"))
		time.Sleep(2 * time.Minute)
		handle(t, b, turn("s1", 2, "one more"))
		time.Sleep(2*time.Minute + 50*time.Second)
		synctest.Wait()
		if n := len(r.requests()); n != 0 {
			t.Fatalf("requested after 2m50s of quiet, want none before 3m")
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		got := r.requests()
		if len(got) != 1 || got[0].Reason != ReasonQuiet || len(got[0].Turns) != 3 {
			t.Fatalf("requests = %+v, want one quiet request of 3 turns", got)
		}
		for i, tt := range got[0].Turns {
			if tt.TurnIndex != i {
				t.Fatalf("turns out of order: %+v", got[0].Turns)
			}
		}
	})
}

func TestTokenCapCompressionAndEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultConfig()
		b, r := start(t, cfg, nil)
		long := strings.Repeat("长", cfg.TokenCap/2)
		handle(t, b, turn("s1", 0, long))
		if n := len(r.requests()); n != 0 {
			t.Fatalf("requested below the token cap")
		}
		handle(t, b, turn("s1", 1, long))
		if got := r.requests(); len(got) != 1 || got[0].Reason != ReasonTokenCap || len(got[0].Turns) != 2 {
			t.Fatalf("at the token cap: %+v", got)
		}
		// Compression: at once, with the turns leaving the window and what
		// was waiting; a turn already requested is not asked for again.
		handle(t, b, turn("s1", 2, "waiting"))
		handle(t, b, memory.Applied{Envelope: memory.Envelope{Scope: scope, Type: events.TypeContextCompressing, Time: time.Now()},
			Data: &events.ContextCompressing{SessionID: "s1", Summary: "they talked", Turns: []events.TurnRecorded{
				{TurnIndex: 1, Role: "user", Content: long}, {TurnIndex: 3, Role: "assistant", Content: "unseen"}}}})
		got := r.requests()
		if len(got) != 2 || got[1].Reason != ReasonCompressing || got[1].Summary != "they talked" {
			t.Fatalf("after compression: %+v", got)
		}
		if idx := indices(got[1].Turns); len(idx) != 2 || idx[0] != 2 || idx[1] != 3 {
			t.Fatalf("compression request covers %v, want [2 3]", idx)
		}
		handle(t, b, turn("s2", 0, "hello"), memory.Applied{Envelope: memory.Envelope{Scope: scope, Type: events.TypeSessionEnded},
			Data: &events.SessionEnded{SessionID: "s2", MessageCount: 1}})
		if got := r.requests(); len(got) != 3 || got[2].Reason != ReasonEnded || got[2].SessionID != "s2" {
			t.Fatalf("after session end: %+v", got)
		}
	})
}

// A turn compressed while it waited keeps the time it was recorded at:
// its facts were said then, not when the agent compressed.
func TestCompressedTurnKeepsItsTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b, r := start(t, DefaultConfig(), nil)
		said := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
		recorded := turn("s1", 0, "I live in Lisbon")
		recorded.Time, recorded.Seq = said, 7
		handle(t, b, recorded)
		handle(t, b, memory.Applied{Envelope: memory.Envelope{Scope: scope, Type: events.TypeContextCompressing, Time: said.Add(time.Hour)},
			Data: &events.ContextCompressing{SessionID: "s1", Turns: []events.TurnRecorded{
				{TurnIndex: 0, Role: "user", Content: "I live in Lisbon"}, {TurnIndex: 1, Role: "user", Content: "unseen"}}}})
		got := r.requests()
		if len(got) != 1 || len(got[0].Turns) != 2 {
			t.Fatalf("requests %+v, want one of two turns", got)
		}
		if at := got[0].Turns[0].Time; !at.Equal(said) {
			t.Fatalf("the recorded turn is dated %v, want %v", at, said)
		}
		if at := got[0].Turns[1].Time; !at.Equal(said.Add(time.Hour)) {
			t.Fatalf("the turn seen only in the snapshot is dated %v, want the compression's time", at)
		}
	})
}

func TestLongBatchesAreSplit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.MaxTurns = 10
		b, r := start(t, cfg, nil)
		for i := range 25 {
			handle(t, b, turn("s1", i, "x"))
		}
		handle(t, b, memory.Applied{Envelope: memory.Envelope{Scope: scope}, Data: &events.SessionEnded{SessionID: "s1"}})
		got := r.requests()
		if len(got) != 3 || len(got[0].Turns) != 10 || len(got[2].Turns) != 5 || got[0].RequestID == got[1].RequestID {
			t.Fatalf("split = %d requests", len(got))
		}
	})
}

type fakeSource []memory.Turn

func (f fakeSource) Unextracted(context.Context, time.Time, int) ([]memory.Turn, error) {
	return f, nil
}

// After a restart the batcher picks up turns the read model still has as
// unextracted; the daily sweep at 03:00 requests whatever is left.
func TestRecoveryAndSweep(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.QuietGap = 24 * time.Hour // only the sweep will fire
		src := fakeSource{{Scope: scope, SessionID: "old", TurnIndex: 4, Role: "user", Content: "left over", Time: time.Now()}}
		_, r := start(t, cfg, src)
		untilSweep := time.Until(nextAt(time.Now(), cfg.SweepAt))
		time.Sleep(untilSweep - time.Minute)
		synctest.Wait()
		if n := len(r.requests()); n != 0 {
			t.Fatalf("requested before the sweep")
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		got := r.requests()
		if len(got) != 1 || got[0].Reason != ReasonSweep || got[0].Turns[0].TurnIndex != 4 {
			t.Fatalf("sweep = %+v", got)
		}
	})
}

func TestRequestIDIsStable(t *testing.T) {
	t.Parallel()
	a := []events.ExtractionTurn{{TurnIndex: 1}, {TurnIndex: 2}}
	id := RequestID(scope, "s", a)
	if again := RequestID(scope, "s", slices.Clone(a)); id != again || id == RequestID(scope, "s", a[:1]) ||
		id == RequestID(memory.Scope{Namespace: "default", User: "v"}, "s", a) {
		t.Fatal("request ids must be a function of scope, session and turns")
	}
}

// A request whose publish failed may have been stored all the same (its
// acknowledgement lost with a NATS node): it is sent again as it was, and
// the turns that came since go in a request of their own, so no turn is
// in two requests, whichever way the first publish went.
func TestUnsurePublishSentAgainAsItWas(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	fail := true
	emit := func(ctx context.Context, evs ...memory.Outgoing) error {
		_ = r.emit(ctx, evs...) // stored, acknowledgement lost
		if fail {
			fail = false
			return errors.New("nats: no response from stream")
		}
		return nil
	}
	cfg := DefaultConfig()
	b := NewBatcher(cfg, emit, zap.NewNop())
	long := strings.Repeat("长", cfg.TokenCap/2)
	errs := b.Handle(t.Context(), []memory.Applied{turn("s1", 0, long), turn("s1", 1, long)})
	if errs[1] == nil {
		t.Fatal("the failed publish at the token cap was not reported")
	}
	handle(t, b, turn("s1", 2, "one more"))
	handle(t, b, memory.Applied{Envelope: memory.Envelope{Scope: scope, Type: events.TypeSessionEnded, Time: time.Now()},
		Data: &events.SessionEnded{SessionID: "s1", MessageCount: 3}})
	in := map[int]map[string]bool{}
	for _, req := range r.requests() {
		for _, tt := range req.Turns {
			if in[tt.TurnIndex] == nil {
				in[tt.TurnIndex] = map[string]bool{}
			}
			in[tt.TurnIndex][req.RequestID] = true
		}
	}
	for i := range 3 {
		if len(in[i]) != 1 {
			t.Errorf("turn %d is in %d requests, want 1: %v", i, len(in[i]), in[i])
		}
	}
}

// A turn that comes after its session's end (JetStream delivering it
// again after a node died with its first delivery) is requested at once,
// in a request of its own, and a turn already requested is not asked
// for again; a session that goes on after its end is batched as before.
func TestTurnAfterItsSessionEnded(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	b := NewBatcher(DefaultConfig(), r.emit, zap.NewNop())
	at := func(a memory.Applied, seq uint64) memory.Applied { a.Seq = seq; return a }
	end := memory.Applied{Envelope: memory.Envelope{Seq: 4, Scope: scope, Type: events.TypeSessionEnded, Time: time.Now()},
		Data: &events.SessionEnded{SessionID: "s1", MessageCount: 3}}
	handle(t, b, at(turn("s1", 0, "我叫李雷"), 1), at(turn("s1", 2, "I like tea"), 3), end)
	handle(t, b, at(turn("s1", 1, "late"), 2), at(turn("s1", 0, "我叫李雷"), 1), at(turn("s1", 2, "I like tea"), 3))
	got := r.requests()
	if len(got) != 2 {
		t.Fatalf("requests = %d, want 2 (the session at its end, then its late turn)", len(got))
	}
	if late := got[1]; late.Reason != ReasonEnded || len(late.Turns) != 1 || late.Turns[0].TurnIndex != 1 {
		t.Fatalf("the late turn's request = %+v, want turn 1 alone, reason %s", late, ReasonEnded)
	}
	handle(t, b, at(turn("s1", 3, "resumed"), 5), at(turn("s1", 4, "and on"), 6))
	if got := r.requests(); len(got) != 2 {
		t.Fatalf("the turns of a session resumed after its end were requested at once: %+v", got[2:])
	}
}

// A partition taken over gets again what the holder before had handled
// and not acknowledged: turns the read model has as extracted (or in a
// request on its way) are not requested again, unless what came is a
// later version of the turn (an edit the read model has not applied yet).
func TestHandledTurnsAreNotRequestedAgain(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	b := NewBatcher(DefaultConfig(), r.emit, zap.NewNop())
	b.Handled = func(context.Context, memory.Scope, string, time.Time) (map[int]uint64, error) {
		return map[int]uint64{4: 5, 5: 6, 3: 4, 2: math.MaxUint64}, nil
	}
	at := func(a memory.Applied, seq uint64) memory.Applied { a.Seq = seq; return a }
	end := memory.Applied{Envelope: memory.Envelope{Seq: 13, Scope: scope, Type: events.TypeSessionEnded, Time: time.Now()},
		Data: &events.SessionEnded{SessionID: "s1", MessageCount: 8}}
	handle(t, b, at(turn("s1", 2, "in a request on its way"), 3), at(turn("s1", 4, "extracted"), 5),
		at(turn("s1", 5, "extracted"), 6), at(turn("s1", 3, "edited since"), 9),
		at(turn("s1", 6, "new"), 11), at(turn("s1", 7, "new"), 12), end)
	got := r.requests()
	if len(got) != 1 {
		t.Fatalf("requests = %d, want 1", len(got))
	}
	var idx []int
	for _, tt := range got[0].Turns {
		idx = append(idx, tt.TurnIndex)
	}
	if !slices.Equal(idx, []int{3, 6, 7}) {
		t.Fatalf("requested turns %v, want [3 6 7]: the edit and the new ones", idx)
	}
}
