package stream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SeqStoredAt places the cutoff by the stream's clock; ExpireTurns drops
// one user's raw turns below it and leaves the rest.
func TestExpireTurns(t *testing.T) {
	js := startJS(t)
	publishTurns(t, js, "ann", 3)
	publishTurns(t, js, "ben", 2)
	mid := time.Now()
	publishTurns(t, js, "ann", 1) // seq 6, re-records ann's turn 0
	cutoff, err := SeqStoredAt(t.Context(), js, mid)
	if err != nil {
		t.Fatal(err)
	}
	if cutoff != 6 {
		t.Fatalf("cutoff=%d, want 6", cutoff)
	}
	oldest, ok, err := OldestRawTurn(t.Context(), js)
	if err != nil || !ok || !oldest.Before(mid) {
		t.Fatalf("oldest raw turn stored %v (%v, %v), want before %v", oldest, ok, err, mid)
	}
	if c, err := SeqStoredAt(t.Context(), js, time.Now().Add(time.Hour)); err != nil || c != 7 {
		t.Fatalf("cutoff in the future=%d (%v), want 7, the next sequence", c, err)
	}
	n, err := ExpireTurns(t.Context(), js, "default", "ann", cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("expired %d events, want 3", n)
	}
	s, _ := js.Stream(t.Context(), MemoryStream)
	info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(SubjectPrefix+".>"))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.State.Subjects; got["mem.default.ann.turn.recorded"] != 1 || got["mem.default.ben.turn.recorded"] != 2 {
		t.Fatalf("left: %v, want ann's young turn and ben's two", got)
	}
}

// A MEMORY stream created with deny_delete (JetStream cannot undo it) can
// only be purged: a worker, which may not purge, gets an error that names
// the way out and leaves the stream as it was; the operator expires.
func TestExpireTurnsOnADenyDeleteStream(t *testing.T) {
	emb, auth := startAuthServer(t)
	op := connectAs(t, emb, auth.SeedFile(RoleOperator, ""))
	ojs, err := jetstream.New(op.nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(t.Context(), ojs, StreamsConfig{}); err != nil {
		t.Fatal(err)
	}
	s, _ := ojs.Stream(t.Context(), MemoryStream)
	cfg := s.CachedInfo().Config
	if err := ojs.DeleteStream(t.Context(), MemoryStream); err != nil {
		t.Fatal(err)
	}
	cfg.DenyDelete = true
	if _, err := ojs.CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	publishTurns(t, ojs, "ann", 3)

	worker := connectAs(t, emb, auth.SeedFile(RoleWorker, ""))
	wjs, err := jetstream.New(worker.nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := ExpireTurns(ctx, wjs, "default", "ann", 3); err == nil || !strings.Contains(err.Error(), "deny_delete") {
		t.Fatalf("worker on a deny_delete stream: err=%v, want one naming deny_delete", err)
	}
	if got := memoryMsgs(t, ojs); got != 3 {
		t.Fatalf("messages=%d after the refused expiry, want 3", got)
	}
	n, err := ExpireTurns(t.Context(), ojs, "default", "ann", 3)
	if err != nil || n != 2 {
		t.Fatalf("operator expired %d (%v), want 2", n, err)
	}
}
