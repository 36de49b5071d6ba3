package stream

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publishRequest publishes an extraction request for user's turn 0.
func publishRequest(t *testing.T, js jetstream.JetStream, user, id string) {
	t.Helper()
	e, err := events.NewDerived("engram/batcher", events.TypeExtractionRequested, id, "default", user, time.Now().UTC(),
		&events.ExtractionRequested{RequestID: id, SessionID: "s", Reason: events.ReasonQuiet,
			Turns: []events.ExtractionTurn{{TurnIndex: 0, Role: "user", Content: "turn 0", Time: time.Now().UTC()}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPublisher(js).Publish(t.Context(), e); err != nil {
		t.Fatal(err)
	}
}

// publishDeadLetter stores a dead letter of the MEMORY message at seq,
// as a consumer that failed it would.
func publishDeadLetter(t *testing.T, js jetstream.JetStream, consumer string, seq uint64) {
	t.Helper()
	m, err := js.Stream(t.Context(), MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := m.GetMsg(t.Context(), seq)
	if err != nil {
		t.Fatal(err)
	}
	dl := nats.NewMsg(DLQSubjectPrefix + "." + consumer + "." + raw.Subject)
	dl.Data = raw.Data
	dl.Header.Set(HeaderDLQSubject, raw.Subject)
	dl.Header.Set(HeaderDLQSeq, strconv.FormatUint(seq, 10))
	if _, err := js.PublishMsg(t.Context(), dl); err != nil {
		t.Fatal(err)
	}
}

// SeqStoredAt places the cutoff by the stream's clock; ExpireTurns drops
// one user's raw turns, extraction requests and their dead letters below
// it and leaves the rest.
func TestExpireTurns(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	publishTurns(t, js, "ann", 3)
	publishTurns(t, js, "ben", 2)
	publishRequest(t, js, "ann", "q1") // seq 6
	publishRequest(t, js, "ben", "q2") // seq 7
	publishDeadLetter(t, js, "extractor", 6)
	publishDeadLetter(t, js, "projector", 1)
	publishDeadLetter(t, js, "projector", 4) // ben's
	mid := time.Now()
	publishTurns(t, js, "ann", 1)      // seq 8, re-records ann's turn 0
	publishRequest(t, js, "ann", "q3") // seq 9
	publishDeadLetter(t, js, "extractor", 9)
	cutoff, err := SeqStoredAt(t.Context(), js, mid)
	if err != nil {
		t.Fatal(err)
	}
	if cutoff != 8 {
		t.Fatalf("cutoff=%d, want 8", cutoff)
	}
	oldest, ok, err := OldestRawTurn(t.Context(), js)
	if err != nil || !ok || !oldest.Before(mid) {
		t.Fatalf("oldest raw turn stored %v (%v, %v), want before %v", oldest, ok, err, mid)
	}
	if c, err := SeqStoredAt(t.Context(), js, time.Now().Add(time.Hour)); err != nil || c != 10 {
		t.Fatalf("cutoff in the future=%d (%v), want 10, the next sequence", c, err)
	}
	x, err := ExpireTurns(t.Context(), js, "default", "ann", cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if x.Events != 4 || x.DeadLetters != 2 {
		t.Fatalf("expired %+v, want 4 events (3 turns, a request) and 2 dead letters", x)
	}
	s, _ := js.Stream(t.Context(), MemoryStream)
	info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(SubjectPrefix+".>"))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.State.Subjects; got["mem.default.ann.turn.recorded"] != 1 || got["mem.default.ben.turn.recorded"] != 2 ||
		got["mem.default.ann.extraction.requested"] != 1 || got["mem.default.ben.extraction.requested"] != 1 {
		t.Fatalf("left: %v, want ann's young turn and request, ben's two turns and request", got)
	}
	left, err := ListDeadLetters(t.Context(), js, DLQFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, d := range left {
		seqs = append(seqs, d.OriginalSeq)
	}
	if slices.Sort(seqs); !slices.Equal(seqs, []uint64{4, 9}) {
		t.Fatalf("dead letters left of MEMORY seqs %v, want ben's (4) and ann's young request's (9)", seqs)
	}
}

// A MEMORY stream created with deny_delete (JetStream cannot undo it) can
// only be purged: the operator expires by purging; the consolidator, which
// may neither delete nor purge, is refused and the stream stays as it was.
func TestExpireTurnsOnADenyDeleteStream(t *testing.T) {
	t.Parallel()
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

	worker := connectAs(t, emb, auth.SeedFile(RoleConsolidator, ""), nats.CustomInboxPrefix(InboxPrefix(RoleConsolidator)))
	wjs, err := jetstream.New(worker.nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if _, err := ExpireTurns(ctx, wjs, "default", "ann", 3); err == nil {
		t.Fatal("the consolidator expired turns on its own")
	}
	worker.denied(t, "$JS.API.STREAM.PURGE."+MemoryStream)
	if got := memoryMsgs(t, ojs); got != 3 {
		t.Fatalf("messages=%d after the refused expiry, want 3", got)
	}
	x, err := ExpireTurns(t.Context(), ojs, "default", "ann", 3)
	if err != nil || x.Events != 2 {
		t.Fatalf("operator expired %+v (%v), want 2 events", x, err)
	}
}
