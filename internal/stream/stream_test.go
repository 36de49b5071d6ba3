package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

func startJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(startNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(t.Context(), js, StreamsConfig{}); err != nil {
		t.Fatal(err)
	}
	// Idempotent: a second worker starting does the same.
	if err := EnsureStreams(t.Context(), js, StreamsConfig{}); err != nil {
		t.Fatalf("second EnsureStreams: %v", err)
	}
	return js
}

// startNATS starts an embedded server with JetStream and no streams, and
// connects to it.
func startNATS(t *testing.T) *nats.Conn {
	t.Helper()
	emb, err := StartEmbedded(EmbeddedConfig{StoreDir: t.TempDir(), Sync: "1s"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	nc, err := Connect(ConnConfig{Name: "test"}, emb.ConnectOption())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func publishTurns(t *testing.T, js jetstream.JetStream, user string, n int) {
	t.Helper()
	p := NewPublisher(js)
	for i := range n {
		e, err := events.New("test", events.TypeTurnRecorded, "default", user,
			events.TurnRecorded{SessionID: "s", TurnIndex: i, Role: "user", Content: fmt.Sprint("turn ", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Publish(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
}

// The fate table: success acks, a permanent error dead-letters at once, a
// transient one is retried until it succeeds or runs out of deliveries
// and is then dead-lettered. Nothing is dropped.
func TestConsumerFates(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "u", 4) // seq 1..4
	cons, err := NewConsumer(t.Context(), js, ConsumerConfig{
		Stream: MemoryStream, Durable: "fates", MaxDeliver: 3,
		Backoff: func(int) time.Duration { return 10 * time.Millisecond },
	}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	tries := map[uint64]int{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cons.Run(ctx, func(_ context.Context, msgs []*Message) []error {
			mu.Lock()
			defer mu.Unlock()
			errs := make([]error, len(msgs))
			for i, m := range msgs {
				tries[m.Seq]++
				switch m.Seq {
				case 2: // permanent
					errs[i] = memory.Errorf(memory.EINVALID, "cannot apply seq 2")
				case 3: // fails once, then succeeds
					if tries[3] == 1 {
						errs[i] = errors.New("flaky")
					}
				case 4: // always fails: out of deliveries
					errs[i] = &memory.RetryError{Err: errors.New("rate limited"), After: 5 * time.Millisecond}
				}
			}
			return errs
		})
	}()
	dlq, err := js.Stream(t.Context(), DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := dlq.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dead letters = %d, want 2", info.State.Msgs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for seq, want := range map[uint64]int{1: 1, 2: 1, 3: 2, 4: 3} {
		if tries[seq] != want {
			t.Errorf("seq %d tried %d times, want %d", seq, tries[seq], want)
		}
	}
	var reasons []string
	for seq := uint64(1); seq <= 2; seq++ {
		m, err := dlq.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		reasons = append(reasons, m.Header.Get(HeaderDLQSeq)+":"+m.Header.Get(HeaderDLQReason))
		if m.Header.Get(HeaderDLQSubject) != Subject("default", "u", "turn.recorded") {
			t.Errorf("dead letter lost its subject: %v", m.Header)
		}
	}
	if reasons[0] != "2:invalid: cannot apply seq 2" || reasons[1] != "4:rate limited" {
		t.Fatalf("dead letters = %q", reasons)
	}
}

func TestSubjectTokens(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"alice", "user-1_x", "a.b", "*", ">", "张三", "a b", "%41", "", "mem.x.y"} {
		enc := EncodeToken(id)
		for _, c := range enc {
			if c == '.' || c == '*' || c == '>' || c == ' ' || c > 127 {
				t.Errorf("EncodeToken(%q) = %q has unsafe %q", id, enc, c)
			}
		}
		dec, err := DecodeToken(enc)
		if err != nil || dec != id {
			t.Errorf("DecodeToken(EncodeToken(%q)) = %q, %v", id, dec, err)
		}
	}
	if EncodeToken("a.b") == EncodeToken("a%2Eb") {
		t.Fatal("encoding is not injective")
	}
	ns, user, typ, err := ParseSubject(Subject("acme corp", "李.雷", "context.compressing"))
	if err != nil || ns != "acme corp" || user != "李.雷" || typ != "context.compressing" {
		t.Fatalf("ParseSubject = %q %q %q %v", ns, user, typ, err)
	}
}

func FuzzSubjectToken(f *testing.F) {
	for _, s := range []string{"alice", "a.b", "张三", "%", "%zz", "*>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dec, err := DecodeToken(EncodeToken(s))
		if err != nil || dec != s {
			t.Fatalf("round trip of %q = %q, %v", s, dec, err)
		}
		_, _ = DecodeToken(s) // never panics on arbitrary input
	})
}

// A message published with Nats-Expected-* headers can still be
// dead-lettered: those headers are not copied to the dead letter.
func TestDeadLetterDropsNatsHeaders(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	e, err := events.New("test", events.TypeTurnRecorded, "default", "u",
		events.TurnRecorded{SessionID: "s", TurnIndex: 0, Role: "user", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Encode(EventSubject(e), e)
	if err != nil {
		t.Fatal(err)
	}
	m.Header.Set("Nats-Expected-Stream", MemoryStream)
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	cons, err := NewConsumer(t.Context(), js, ConsumerConfig{Stream: MemoryStream, Durable: "hdr"}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	refuse := func(_ context.Context, msgs []*Message) []error {
		errs := make([]error, len(msgs))
		for i := range errs {
			errs[i] = memory.Errorf(memory.EINVALID, "no")
		}
		return errs
	}
	go func() { _ = cons.Run(ctx, refuse) }() // it ends when the test does
	dlq, err := js.Stream(t.Context(), DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if info, err := dlq.Info(t.Context()); err == nil && info.State.Msgs == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the message was never dead-lettered")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A worker starting against streams already as wanted leaves them alone:
// only a changed setting updates them (an update races the consumers the
// running workers create).
func TestEnsureStreamsUpdatesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	updates := make(chan string, 16)
	sub, err := js.Conn().Subscribe("$JS.EVENT.ADVISORY.STREAM.UPDATED.>", func(m *nats.Msg) { updates <- m.Subject })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := js.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(t.Context(), js, StreamsConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(t.Context(), js, StreamsConfig{DuplicateWindow: 2 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 {
		select {
		case s := <-updates:
			got = append(got, s)
		case <-time.After(10 * time.Second):
			t.Fatalf("updates seen: %v, want MEMORY's and DEADLETTER's for the new duplicate window", got)
		}
	}
	if err := js.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-updates:
		t.Fatalf("updates seen: %v and %s; the unchanged call updated too", got, s)
	default:
	}
}

// A handler slower than AckWait keeps its message, and the messages queued
// behind it, while its instance lives: neither a second instance on the
// same durable nor the instance itself is handed one again. AckWait is
// only how long a dead instance's messages wait.
func TestSlowHandlerKeepsItsMessages(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "u", 3)
	const ackWait = 600 * time.Millisecond
	type handling struct{ instance, delivered int }
	var mu sync.Mutex
	handled := map[uint64][]handling{}
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	for i := range 2 {
		cons, err := NewConsumer(t.Context(), js, ConsumerConfig{Stream: MemoryStream, Durable: "slow", AckWait: ackWait, Batch: 1},
			zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			err := cons.Run(ctx, func(_ context.Context, msgs []*Message) []error {
				for _, m := range msgs {
					mu.Lock()
					handled[m.Seq] = append(handled[m.Seq], handling{i, m.Delivered})
					mu.Unlock()
					if m.Seq == 1 {
						<-release // an LLM call four AckWaits long
					}
				}
				return nil
			})
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
		})
		if i == 0 {
			// The second instance starts once the first holds all three:
			// seq 1 in its handler, 2 and 3 queued behind it.
			wait.Until(t, "the first instance to hold every message", func() bool {
				info, err := cons.cons.Info(t.Context())
				return err == nil && info.NumAckPending == 3 && info.NumPending == 0
			})
		}
	}
	// Nothing can be polled for here: what is tested is that nothing
	// happens while the handler runs past AckWait, four times over.
	time.Sleep(4 * ackWait)
	close(release)
	wait.Until(t, "seq 2 and 3 to be handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled[2]) > 0 && len(handled[3]) > 0
	})
	// Anything redelivered would come within an AckWait.
	time.Sleep(2 * ackWait)
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for seq := uint64(1); seq <= 3; seq++ {
		if h := handled[seq]; len(h) != 1 || h[0] != (handling{0, 1}) {
			t.Errorf("seq %d handled as %+v (instance, delivery), want once, by the first instance, on its first delivery", seq, h)
		}
	}
}

// A consumer that batches but pulls one at a time holds every message it
// was handed while a batch outlasts AckWait: none waits in the client's
// buffer, unseen, to be delivered again.
func TestPullOneHoldsEveryMessage(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "u", 10)
	const ackWait = 600 * time.Millisecond
	cons, err := NewConsumer(t.Context(), js, ConsumerConfig{Stream: MemoryStream, Durable: "slowbatch", AckWait: ackWait, Batch: 4, Pull: 1},
		zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	handled := map[uint64][]int{} // seq → the delivery count of each handling
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- cons.Run(ctx, func(_ context.Context, msgs []*Message) []error {
			for _, m := range msgs {
				mu.Lock()
				handled[m.Seq] = append(handled[m.Seq], m.Delivered)
				mu.Unlock()
				if m.Seq == 1 {
					<-release
				}
			}
			return nil
		})
	}()
	wait.Until(t, "seq 1 in the handler", func() bool { mu.Lock(); defer mu.Unlock(); return len(handled[1]) > 0 })
	// Nothing can be polled for: what is tested is that nothing is
	// delivered again while the batch runs four AckWaits.
	time.Sleep(4 * ackWait)
	close(release)
	wait.Until(t, "every message handled", func() bool { mu.Lock(); defer mu.Unlock(); return len(handled) == 10 })
	time.Sleep(2 * ackWait) // a redelivery would come within an AckWait
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for seq := uint64(1); seq <= 10; seq++ {
		if d := handled[seq]; len(d) != 1 || d[0] != 1 {
			t.Errorf("seq %d handled on deliveries %v, want once, on the first", seq, d)
		}
	}
}

// Decide reads a message's fate from its error's code alone.
func TestDecide(t *testing.T) {
	const maxDeliver = 3
	wrapped := func(code string) error { return fmt.Errorf("apply 7: %w", memory.Errorf(code, "x")) }
	for _, tc := range []struct {
		name      string
		err       error
		delivered int
		want      Fate
	}{
		{"success", nil, 1, FateAck},
		{"success on the last try", nil, maxDeliver, FateAck},
		{"invalid", wrapped(memory.EINVALID), 1, FateDeadLetter},
		{"too large", wrapped(memory.ETOOLARGE), 1, FateDeadLetter},
		{"unavailable", wrapped(memory.EUNAVAILABLE), 1, FateRetry},
		{"unavailable, out of tries", wrapped(memory.EUNAVAILABLE), maxDeliver, FateDeadLetter},
		{"internal", wrapped(memory.EINTERNAL), 2, FateRetry},
		{"no code", errors.New("connection reset"), 1, FateRetry},
		{"no code, out of tries", errors.New("connection reset"), maxDeliver, FateDeadLetter},
		{"not found", wrapped(memory.ENOTFOUND), 1, FateRetry},
		{"rate limited", &memory.RetryError{Err: errors.New("429"), After: time.Minute}, 1, FateRetry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.err, tc.delivered, maxDeliver); got != tc.want {
				t.Fatalf("Decide(%v, %d)=%v, want %v", tc.err, tc.delivered, got, tc.want)
			}
		})
	}
}
