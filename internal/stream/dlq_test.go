package stream

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

func listDLQ(t *testing.T, js jetstream.JetStream, f DLQFilter) []DeadLetter {
	t.Helper()
	dls, err := ListDeadLetters(t.Context(), js, f)
	if err != nil {
		t.Fatalf("ListDeadLetters(%+v): %v", f, err)
	}
	return dls
}

func seqsOf(dls []DeadLetter) string {
	var s []string
	for _, d := range dls {
		s = append(s, strconv.FormatUint(d.Seq, 10))
	}
	return strings.Join(s, ",")
}

// Messages a real consumer gives up on can be listed, read and redriven;
// a redriven message is on MEMORY again, as it was, and is consumed again.
func TestDeadLetterRedrive(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "ann", 2) // MEMORY seq 1, 2
	publishTurns(t, js, "ben", 2) // MEMORY seq 3, 4
	mem, err := js.Stream(t.Context(), MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := NewConsumer(t.Context(), js, ConsumerConfig{Stream: MemoryStream, Durable: "picky"}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	// The handler refuses seq 2 and 4 the first time they come and takes
	// anything redriven, as a fixed bug would.
	var mu sync.Mutex
	var applied []string
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cons.Run(ctx, func(_ context.Context, msgs []*Message) []error {
			mu.Lock()
			defer mu.Unlock()
			errs := make([]error, len(msgs))
			for i, m := range msgs {
				if m.Seq == 2 || m.Seq == 4 {
					errs[i] = memory.Errorf(memory.EINVALID, "cannot apply %s", m.Event.ID())
					continue
				}
				applied = append(applied, m.Subject+" "+m.Event.ID())
			}
			return errs
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	wait.Until(t, "two dead letters", func() bool {
		dls, err := ListDeadLetters(t.Context(), js, DLQFilter{})
		return err == nil && len(dls) == 2
	})

	all := listDLQ(t, js, DLQFilter{})
	annSubject := Subject("default", "ann", "turn.recorded")
	first := all[0]
	orig, err := mem.GetMsg(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	origID := first.EventID
	if origID == "" || first.EventType != "turn.recorded" {
		t.Fatalf("event id %q type %q, want an id and turn.recorded", first.EventID, first.EventType)
	}
	if got, want := first.Subject, annSubject; got != want {
		t.Fatalf("Subject = %q, want %q", got, want)
	}
	if first.Consumer != "picky" || first.OriginalSeq != 2 || first.Deliveries != 1 ||
		first.Reason != "invalid: cannot apply "+origID || first.Time.IsZero() || first.Size != len(orig.Data) {
		t.Fatalf("dead letter = %+v", first)
	}
	if !bytes.Equal(first.Data, orig.Data) {
		t.Fatalf("dead letter body differs from the original:\n%s\n%s", first.Data, orig.Data)
	}

	t.Run("filters", func(t *testing.T) {
		for _, c := range []struct {
			f    DLQFilter
			want string
		}{
			{DLQFilter{Consumer: "picky"}, seqsOf(all)},
			{DLQFilter{Consumer: "other"}, ""},
			{DLQFilter{Subject: "mem.default.ben.>"}, seqsOf(all[1:])},
			{DLQFilter{Subject: "mem.*.*.turn.recorded"}, seqsOf(all)},
			{DLQFilter{Subject: "mem.*.*.session.ended"}, ""},
			{DLQFilter{Limit: 1}, seqsOf(all[:1])},
			{DLQFilter{After: all[0].Seq}, seqsOf(all[1:])},
		} {
			if got := seqsOf(listDLQ(t, js, c.f)); got != c.want {
				t.Errorf("%+v: seqs %q, want %q", c.f, got, c.want)
			}
		}
		for _, f := range []DLQFilter{{Consumer: "a.b"}, {Subject: "mem..x"}, {Subject: "mem.>.x"}, {Subject: "mem.a*"}} {
			if _, err := ListDeadLetters(t.Context(), js, f); err == nil {
				t.Errorf("%+v: no error", f)
			}
		}
	})

	t.Run("get", func(t *testing.T) {
		d, err := GetDeadLetter(t.Context(), js, first.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if d.Seq != first.Seq || d.Header.Get(HeaderDLQReason) != first.Reason || !bytes.Equal(d.Data, first.Data) {
			t.Fatalf("GetDeadLetter = %+v, want %+v", d, first)
		}
		if _, err := GetDeadLetter(t.Context(), js, 999); !errors.Is(err, ErrNoDeadLetter) {
			t.Fatalf("GetDeadLetter(999) error = %v, want ErrNoDeadLetter", err)
		}
	})

	t.Run("redrive", func(t *testing.T) {
		newSeq, err := Redrive(t.Context(), js, first.Seq)
		if err != nil {
			t.Fatal(err)
		}
		if newSeq <= 4 {
			t.Fatalf("redriven to seq %d, want a new seq after 4", newSeq)
		}
		m, err := mem.GetMsg(t.Context(), newSeq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != annSubject || !bytes.Equal(m.Data, orig.Data) {
			t.Fatalf("redriven message %s %s, want %s %s", m.Subject, m.Data, annSubject, orig.Data)
		}
		if got, want := m.Header.Get(HeaderContentType), orig.Header.Get(HeaderContentType); got != want {
			t.Errorf("Content-Type = %q, want %q", got, want)
		}
		if got, want := m.Header.Get(HeaderRedrivenFrom), strconv.FormatUint(first.Seq, 10); got != want {
			t.Errorf("%s = %q, want %q", HeaderRedrivenFrom, got, want)
		}
		if got, want := m.Header.Get(jetstream.MsgIDHeader), "redrive-"+strconv.FormatUint(first.Seq, 10); got != want {
			t.Errorf("Nats-Msg-Id = %q, want %q", got, want)
		}
		for k := range m.Header {
			if strings.HasPrefix(k, "Engram-Dlq-") {
				t.Errorf("redriven message kept %s", k)
			}
		}
		want := annSubject + " " + origID
		wait.Until(t, "the redriven message to be consumed", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, a := range applied {
				if a == want {
					return true
				}
			}
			return false
		})
		if got := seqsOf(listDLQ(t, js, DLQFilter{})); got != seqsOf(all[1:]) {
			t.Fatalf("dead letters after redrive = %q, want %q", got, seqsOf(all[1:]))
		}
		if _, err := Redrive(t.Context(), js, first.Seq); !errors.Is(err, ErrNoDeadLetter) {
			t.Fatalf("second redrive error = %v, want ErrNoDeadLetter", err)
		}
	})

	t.Run("a redrive interrupted before the delete is not applied twice", func(t *testing.T) {
		second := all[1]
		// What a crash leaves: the republish stored, the dead letter still there.
		m := nats.NewMsg(second.Subject)
		m.Header.Set(jetstream.MsgIDHeader, "redrive-"+strconv.FormatUint(second.Seq, 10))
		m.Data = second.Data
		ack, err := js.PublishMsg(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		before, err := mem.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		newSeq, err := Redrive(t.Context(), js, second.Seq)
		if err != nil {
			t.Fatal(err)
		}
		after, err := mem.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if newSeq != ack.Sequence || after.State.Msgs != before.State.Msgs {
			t.Fatalf("redrive stored seq %d (want the earlier %d); MEMORY %d → %d messages",
				newSeq, ack.Sequence, before.State.Msgs, after.State.Msgs)
		}
		if got := len(listDLQ(t, js, DLQFilter{})); got != 0 {
			t.Fatalf("%d dead letters left, want 0", got)
		}
	})

	t.Run("a dead letter that cannot go back stays", func(t *testing.T) {
		// Hand-written, as a binary-mode event from an agent: ce-* headers
		// and a body that is not JSON, on a subject MEMORY does not hold.
		m := nats.NewMsg(DLQSubjectPrefix + ".agent.elsewhere.x")
		m.Header.Set("ce-id", "bin-1")
		m.Header.Set("ce-type", "turn.recorded")
		m.Header.Set(HeaderDLQSubject, "elsewhere.x")
		m.Header.Set(HeaderDLQReason, "decode: bad")
		m.Data = []byte("not json")
		ack, err := js.PublishMsg(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		dls := listDLQ(t, js, DLQFilter{Consumer: "agent"})
		if len(dls) != 1 || dls[0].EventID != "bin-1" || dls[0].EventType != "turn.recorded" || dls[0].Subject != "elsewhere.x" {
			t.Fatalf("dead letters = %+v", dls)
		}
		if _, err := Redrive(t.Context(), js, ack.Sequence); err == nil {
			t.Fatal("redrive to a subject outside MEMORY succeeded")
		}
		if _, err := GetDeadLetter(t.Context(), js, ack.Sequence); err != nil {
			t.Fatalf("a failed redrive lost the dead letter: %v", err)
		}
	})
}

// Redriving everything visits each dead letter once, even when a redriven
// message is dead-lettered again while the walk is under way.
func TestEachDeadLetterStopsAtStart(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "ann", 3)
	cons, err := NewConsumer(t.Context(), js, ConsumerConfig{Stream: MemoryStream, Durable: "never"}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cons.Run(ctx, func(_ context.Context, msgs []*Message) []error {
			errs := make([]error, len(msgs))
			for i := range msgs {
				errs[i] = memory.Errorf(memory.EINVALID, "still broken")
			}
			return errs
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	dlq, err := js.Stream(t.Context(), DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	count := func() uint64 {
		info, err := dlq.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	wait.For(t, "three dead letters", func() error { return wait.Equal(count(), 3) })

	var visited []uint64
	err = EachDeadLetter(t.Context(), js, DLQFilter{}, func(d DeadLetter) error {
		visited = append(visited, d.Seq)
		if _, err := Redrive(t.Context(), js, d.Seq); err != nil {
			return err
		}
		// Let the consumer fail it again before the walk goes on.
		wait.Until(t, "the redriven message to be dead-lettered again", func() bool {
			info, err := dlq.Info(t.Context())
			return err == nil && info.State.LastSeq > d.Seq+2
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(visited), 3; got != want {
		t.Fatalf("visited %v, want %d dead letters", visited, want)
	}
	if got, want := count(), uint64(3); got != want {
		t.Fatalf("%d dead letters after redriving all, want %d (each failed again)", got, want)
	}
	again := listDLQ(t, js, DLQFilter{})
	if got, want := again[0].Header.Get(HeaderRedrivenFrom), "1"; got != want {
		t.Fatalf("re-dead-lettered message %s = %q, want %q", HeaderRedrivenFrom, got, want)
	}
}
