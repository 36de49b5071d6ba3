package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

// seqsSeen runs a consumer named durable until the test ends and records
// the sequences its handler is given.
type seqsSeen struct {
	mu   sync.Mutex
	seqs []uint64
}

func (s *seqsSeen) add(seq uint64) {
	s.mu.Lock()
	s.seqs = append(s.seqs, seq)
	s.mu.Unlock()
}

func (s *seqsSeen) count(seq uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.seqs {
		if q == seq {
			n++
		}
	}
	return n
}

func runConsumer(t *testing.T, js jetstream.JetStream, durable string) *seqsSeen {
	t.Helper()
	return runConsumerLogged(t, js, durable, zaptest.NewLogger(t))
}

func runConsumerLogged(t *testing.T, js jetstream.JetStream, durable string, log *zap.Logger) *seqsSeen {
	t.Helper()
	cons, err := NewConsumer(t.Context(), js, ConsumerConfig{Stream: MemoryStream, Durable: durable, Batch: 1, Pull: 1}, log)
	if err != nil {
		t.Fatal(err)
	}
	seen := &seqsSeen{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- cons.Run(ctx, func(_ context.Context, msgs []*Message) []error {
			for _, m := range msgs {
				seen.add(m.Seq)
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return seen
}

// waitSaying polls cond for up to 20 s and says what it last saw.
func waitSaying(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last saw %s", what, saw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Members lists a group's running instances, and not one that stopped:
// engram replay refuses while any runs (app.Replay).
func TestMembersAreTheRunningInstances(t *testing.T) {
	js := startJS(t)
	if got, err := Members(t.Context(), js, "extractor"); err != nil || len(got) != 0 {
		t.Fatalf("before any instance: %v, %v", got, err)
	}
	l, err := OpenLeases(t.Context(), js, LeaseConfig{Group: "extractor", Instance: "x1", N: 1}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx, func(ctx context.Context, _ int) { <-ctx.Done() }) }()
	waitSaying(t, "x1 among the members", func() (bool, string) {
		got, err := Members(t.Context(), js, "extractor")
		return err == nil && len(got) == 1 && got[0] == "x1", fmt.Sprint(got, err)
	})
	if got, _ := Members(t.Context(), js, "consolidator"); len(got) != 0 {
		t.Errorf("consolidator members %v, want none", got)
	}
	cancel()
	<-done
	if got, err := Members(t.Context(), js, "extractor"); err != nil || len(got) != 0 {
		t.Fatalf("after x1 stopped: %v, %v", got, err)
	}
}

// A worker whose consumer is deleted under it (nats consumer rm, a
// replay that raced its start) does not stop silently: it binds to the
// consumer made again in its place, or makes it again itself, and
// handles what comes next.
func TestConsumerSurvivesItsDeletion(t *testing.T) {
	js := startJS(t)
	publishTurns(t, js, "u", 2)
	seen := runConsumer(t, js, "w")
	waitSaying(t, "the first two turns", func() (bool, string) { return seen.count(2) == 1, "" })

	// Deleted and made again starting at seq 2, as a replay does.
	c, err := js.Consumer(t.Context(), MemoryStream, "w")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.CachedInfo().Config
	if err := js.DeleteConsumer(t.Context(), MemoryStream, "w"); err != nil {
		t.Fatal(err)
	}
	cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, 2
	if _, err := js.CreateConsumer(t.Context(), MemoryStream, cfg); err != nil {
		t.Fatal(err)
	}
	publishTurns(t, js, "v", 1) // seq 3
	waitSaying(t, "seq 2 again and seq 3", func() (bool, string) {
		return seen.count(2) == 2 && seen.count(3) == 1, fmt.Sprintf("seq 2 ×%d, seq 3 ×%d", seen.count(2), seen.count(3))
	})

	// Deleted and left deleted: made again as at start.
	if err := js.DeleteConsumer(t.Context(), MemoryStream, "w"); err != nil {
		t.Fatal(err)
	}
	publishTurns(t, js, "x", 1) // seq 4
	waitSaying(t, "seq 4", func() (bool, string) { return seen.count(4) >= 1, fmt.Sprintf("seq 4 ×%d", seen.count(4)) })
}

// A consumer deleted with its stream is not made again on the stream made
// in its place: following another MEMORY is the operator's decision
// (engram streams accept), not the worker's. It waits to be stopped.
func TestConsumerDoesNotFollowARecreatedStream(t *testing.T) {
	js := startJS(t)
	publishTurns(t, js, "u", 1)
	core, logs := observer.New(zapcore.ErrorLevel)
	seen := runConsumerLogged(t, js, "w", zap.New(zapcore.NewTee(zaptest.NewLogger(t).Core(), core)))
	waitSaying(t, "the first turn", func() (bool, string) { return seen.count(1) == 1, "" })
	s, err := js.Stream(t.Context(), MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	if err := js.DeleteStream(t.Context(), MemoryStream); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	publishTurns(t, js, "v", 2) // seq 1 and 2 of the new stream
	waitSaying(t, "the worker to say its stream changed", func() (bool, string) {
		n := logs.FilterMessageSnippet("the stream was deleted or made again").Len()
		return n == 1, fmt.Sprintf("%d such errors", n)
	})
	if _, err := js.Consumer(t.Context(), MemoryStream, "w"); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Fatalf("the worker's consumer on the new stream: %v, want none", err)
	}
	if seen.count(2) != 0 {
		t.Fatalf("the worker handled the new stream's seq 2")
	}
}
