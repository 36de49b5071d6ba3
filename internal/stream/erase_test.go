package stream

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

// Erase removes one user's events below the receipt, however their
// subject spelt the user, and leaves everyone else's.
func TestErase(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "nb", 3)
	publishTurns(t, js, "other", 2)
	// The same user on a non-canonical subject, as a client may publish.
	if _, err := js.Publish(t.Context(), "mem.default.%6Eb.turn.recorded", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	er, err := Erase(t.Context(), js, "default", "nb", 0)
	if err != nil {
		t.Fatal(err)
	}
	if er.Events != 4 || er.Unlinked {
		t.Fatalf("erasure = %+v, want 4 events overwritten", er)
	}
	s, _ := js.Stream(t.Context(), MemoryStream)
	info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(SubjectPrefix+".>"))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 || info.State.Subjects["mem.default.other.turn.recorded"] != 2 {
		t.Fatalf("left: %d messages %v", info.State.Msgs, info.State.Subjects)
	}
}

// A MEMORY stream created with deny_delete (before engram erased users)
// keeps it; Erase then purges and says the bytes were only unlinked.
func TestEraseOnADenyDeleteStream(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	s, _ := js.Stream(t.Context(), MemoryStream)
	cfg := s.CachedInfo().Config
	if err := js.DeleteStream(t.Context(), MemoryStream); err != nil {
		t.Fatal(err)
	}
	cfg.DenyDelete = true
	if _, err := js.CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(t.Context(), js, StreamsConfig{}); err != nil {
		t.Fatalf("EnsureStreams on a deny_delete stream: %v", err)
	}
	publishTurns(t, js, "nb", 3)
	er, err := Erase(t.Context(), js, "default", "nb", 3)
	if err != nil {
		t.Fatal(err)
	}
	if !er.Unlinked || er.Events != 2 {
		t.Fatalf("erasure = %+v, want 2 purged (below the receipt at 3), unlinked only", er)
	}
}

// Listening on port 0 takes a free port, not nats-server's default 4222,
// which another engram (or test) on the machine may hold.
func TestEmbeddedPortZeroIsFree(t *testing.T) {
	t.Parallel()
	emb, err := StartEmbedded(EmbeddedConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Sync: "1s"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	if u := emb.ClientURL(); strings.HasSuffix(u, ":4222") || strings.HasSuffix(u, ":0") || u == "" {
		t.Fatalf("listening at %q, want a free port", u)
	}
}

// ReplayFrom makes a worker's consumer deliver again from a point, and
// the worker starting again (NewConsumer) keeps that point.
func TestReplayFrom(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "u", 5)
	cfg := ConsumerConfig{Stream: MemoryStream, Durable: "worker", FilterSubjects: []string{SubjectPrefix + ".>"}}
	c, err := NewConsumer(t.Context(), js, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.cons.Fetch(5)
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		if err := m.Ack(); err != nil {
			t.Fatal(err)
		}
	}
	pending := func() uint64 {
		t.Helper()
		cons, err := js.Consumer(t.Context(), MemoryStream, "worker")
		if err != nil {
			t.Fatal(err)
		}
		info, err := cons.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return info.NumPending
	}
	if got := pending(); got != 0 {
		t.Fatalf("pending before the replay = %d", got)
	}
	if err := ReplayFrom(t.Context(), js, "worker", 3, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != 3 {
		t.Fatalf("pending after a replay from seq 3 = %d, want 3", got)
	}
	if _, err := NewConsumer(t.Context(), js, cfg, zaptest.NewLogger(t)); err != nil {
		t.Fatalf("the worker starting again: %v", err)
	}
	if got := pending(); got != 3 {
		t.Fatalf("pending after the worker started again = %d, want 3", got)
	}
	if err := ReplayFrom(t.Context(), js, "nobody", 1, time.Time{}); err == nil {
		t.Fatal("replay of a consumer that does not exist")
	}
}
