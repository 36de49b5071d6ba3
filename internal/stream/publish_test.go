package stream

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A publish whose acknowledgement never comes (the node that took it
// died, the stream's leader moved) fails after the ack timeout instead of
// holding its caller, a worker's partition say, for good. Here the
// subject's only listener takes the message and never answers.
func TestPublishAckLost(t *testing.T) {
	t.Parallel()
	nc := startNATS(t)
	sink, err := nc.Subscribe(SubjectPrefix+".>", func(*nats.Msg) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Unsubscribe() })
	js, err := NewJetStream(nc, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	e, err := events.New("test", events.TypeTurnRecorded, "default", "ann",
		events.TurnRecorded{SessionID: "s", TurnIndex: 0, Role: "user", Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []Result, 1)
	go func() { done <- NewPublisher(js).PublishBatch(t.Context(), []event.Event{e}) }()
	select {
	case res := <-done:
		if err := res[0].Err; !errors.Is(err, jetstream.ErrAsyncPublishTimeout) || !strings.Contains(err.Error(), e.ID()) {
			t.Fatalf("publish with its ack lost: %v, want a timeout naming the event", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a publish whose ack never came still waits after 10 s")
	}
}

// A duplicate with other content is a conflict naming the stored event,
// one at a time and in a batch, when the publisher compares; the same
// content with another time or trace is still a duplicate; a publisher
// that does not compare (a worker's) keeps today's duplicate.
func TestPublishConflict(t *testing.T) {
	t.Parallel()
	js := startJS(t)
	turn := func(content string, at time.Time) event.Event {
		t.Helper()
		e, err := events.New("agent", events.TypeTurnRecorded, "default", "ann",
			events.TurnRecorded{SessionID: "s", TurnIndex: 0, Role: "user", Content: content})
		if err != nil {
			t.Fatal(err)
		}
		e.SetID("t-1")
		e.SetTime(at)
		return e
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	edge := NewPublisher(js)
	edge.Conflicts = ReadDigest(js)
	first, err := edge.Publish(t.Context(), turn("I live in Lisbon", at))
	if err != nil || first.Duplicate {
		t.Fatalf("first publish: %+v %v", first, err)
	}
	retry := turn("I live in Lisbon", at.Add(time.Minute))
	retry.SetExtension(events.ExtTraceParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if ack, err := edge.Publish(t.Context(), retry); err != nil || !ack.Duplicate || ack.Seq != first.Seq {
		t.Fatalf("a retry with another time and trace: %+v %v, want a duplicate of seq %d", ack, err, first.Seq)
	}
	want := fmt.Sprintf("event t-1 from agent is stored (seq %d) with other content", first.Seq)
	other := turn("I live in Porto", at)
	ack, err := edge.Publish(t.Context(), other)
	if memory.ErrorCode(err) != memory.ECONFLICT || !strings.Contains(err.Error(), want) || ack.Seq != first.Seq {
		t.Fatalf("other content: %+v %v, want a conflict saying %q", ack, err, want)
	}
	res := edge.PublishBatch(t.Context(), []event.Event{turn("I live in Lisbon", at), other})
	if res[0].Err != nil || !res[0].Ack.Duplicate {
		t.Fatalf("batch, the same: %+v", res[0])
	}
	if memory.ErrorCode(res[1].Err) != memory.ECONFLICT || res[1].Ack.Seq != first.Seq {
		t.Fatalf("batch, other content: %+v, want a conflict at seq %d", res[1], first.Seq)
	}
	if ack, err := NewPublisher(js).Publish(t.Context(), other); err != nil || !ack.Duplicate {
		t.Fatalf("a publisher that does not compare: %+v %v, want a duplicate", ack, err)
	}

	// The stored digest is given only for the event asked for, in the
	// namespace asked for: another namespace or id learns nothing.
	id := MsgID("default", "ann", "agent", "t-1")
	read := ReadDigest(js)
	stored, found, err := read(t.Context(), "default", id, first.Seq)
	if err != nil || !found {
		t.Fatalf("the stored event's digest: %q %v %v", stored, found, err)
	}
	for _, c := range []struct{ ns, id string }{{"other", id}, {"default", MsgID("default", "bob", "agent", "t-1")}} {
		if d, found, err := read(t.Context(), c.ns, c.id, first.Seq); err != nil || found || d != "" {
			t.Fatalf("asked as %s for %s: %q %v %v, want nothing found", c.ns, c.id, d, found, err)
		}
	}
	if _, found, err := read(t.Context(), "default", id, first.Seq+100); err != nil || found {
		t.Fatalf("a sequence past the stream: found %v, %v", found, err)
	}
}

// Two encodings of an event have one digest exactly when they say the
// same: not the order of their members, their time or their trace.
func TestDigest(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"id":"1","type":"t","data":{"x":1,"y":"a"}}`, `{"data":{"y":"a","x":1},"type":"t","id":"1"}`, true},
		{`{"id":"1","time":"2026-01-01T00:00:00Z","data":{}}`, `{"id":"1","time":"2026-01-02T00:00:00Z","data":{}}`, true},
		{`{"id":"1","traceparent":"00-a-b-01","data":{}}`, `{"id":"1","data":{}}`, true},
		{`{"id":"1","data":{"x":1}}`, `{"id":"1","data":{"x":2}}`, false},
		{`{"id":"1","data":{"x":1}}`, `{"id":"1","data":{"x":1.0}}`, false},
		{`{"id":"1","data":{"x":"a"}}`, `{"id":"1","data":{"x":"a","y":null}}`, false},
	} {
		a, err := Digest([]byte(tc.a))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Digest([]byte(tc.b))
		if err != nil {
			t.Fatal(err)
		}
		if got := a == b; got != tc.same {
			t.Errorf("%s and %s: same digest %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	if _, err := Digest([]byte(`not json`)); err == nil {
		t.Error("a body that is not JSON has a digest")
	}
}
