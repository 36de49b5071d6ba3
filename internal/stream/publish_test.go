package stream

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A publish whose acknowledgement never comes (the node that took it
// died, the stream's leader moved) fails after the ack timeout instead of
// holding its caller, a worker's partition say, for good. Here the
// subject's only listener takes the message and never answers.
func TestPublishAckLost(t *testing.T) {
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
