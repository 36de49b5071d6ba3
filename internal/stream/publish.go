package stream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const jetstreamMsgID = jetstream.MsgIDHeader

// PublishAckTimeout is how long a publish waits for JetStream's
// acknowledgement before it fails. Without one, nats.go waits for an
// asynchronous publish's acknowledgement forever, and one can be lost:
// the node the client was connected to dies after taking the message, or
// the stream's leader moves. A worker waiting on it stops consuming its
// partition for good (seen in the cluster soak: a consolidator's
// partition stuck with 500 messages unacknowledged). The publish fails
// instead, and is tried again; the event's Nats-Msg-Id has JetStream
// store it once however often it is sent.
const PublishAckTimeout = 10 * time.Second

// NewJetStream is the JetStream context engram publishes through, with
// acknowledgements awaited at most ackTimeout (PublishAckTimeout).
func NewJetStream(nc *nats.Conn, ackTimeout time.Duration) (jetstream.JetStream, error) {
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096), jetstream.WithPublishAsyncTimeout(ackTimeout))
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return js, nil
}

// MsgID is the JetStream deduplication id of an event: CloudEvents say
// source + id identify an event, so the same pair published twice is
// stored once. The pair is the tenant's, not the stream's: namespace and
// user are part of the key, so a client of one namespace can never make
// another's event a "duplicate" by sending its source and id first.
// Hashed so that long sources keep the header small.
func MsgID(namespace, user, source, id string) string {
	h := sha256.Sum256([]byte(namespace + "\x00" + user + "\x00" + source + "\x00" + id))
	return hex.EncodeToString(h[:16])
}

// HeaderVia names the edge an event came in by ("http"), so the
// projector can tell them from events agents published straight to NATS.
const HeaderVia = "Engram-Via"

// Publisher publishes events to the MEMORY stream and returns only once
// JetStream has stored them.
type Publisher struct {
	js jetstream.JetStream
	// Via, when set, is sent in the HeaderVia header of every event.
	Via string
	// Stored, when set, is told of the events JetStream stored for the
	// first time (not duplicates), after their acknowledgements are in.
	// It must not block: the caller is waiting for its answer.
	Stored func([]Stored)
	// Conflicts, when set, compares an event JetStream reports as a
	// duplicate with the one stored under its source and id, by their
	// digests: other content is an error (memory.ECONFLICT) that names
	// the stored event, never a duplicate, so a client that reused an id
	// hears that its write was not kept. The edge sets it: ReadDigest
	// where its process may read MEMORY, AskDigest where it may not (an
	// ingest apart). Workers leave it nil: a worker's retry may carry
	// another answer (an LLM's second try), and the first one stored is
	// the one that counts.
	Conflicts StoredDigest
}

// Stored is an event as JetStream stored it: its sequence and the message.
type Stored struct {
	Seq uint64
	Msg *nats.Msg
	// Event and Data, when Data is set, are the event as it was published
	// and its data as events.Validate decoded it in this process (see
	// PublishBatchData): what decoding Msg would give, without decoding
	// and validating it again.
	Event event.Event
	Data  any
}

// encode makes e's message; validated says e is an event this process
// validated (see encode).
func (p *Publisher) encode(e event.Event, validated bool) (*nats.Msg, error) {
	m, err := encode(EventSubject(e), e, validated)
	if err == nil && p.Via != "" {
		m.Header.Set(HeaderVia, p.Via)
	}
	return m, err
}

// NewPublisher returns a Publisher on js.
func NewPublisher(js jetstream.JetStream) *Publisher { return &Publisher{js: js} }

// Ack is what JetStream said about one published event.
type Ack struct {
	Seq       uint64
	Duplicate bool
}

// EventSubject is the subject an event is published on.
func EventSubject(e event.Event) string {
	return Subject(events.Namespace(e), events.User(e), e.Type())
}

// Publish stores one event and waits for JetStream's acknowledgement.
func (p *Publisher) Publish(ctx context.Context, e event.Event) (Ack, error) {
	return p.PublishData(ctx, e, nil)
}

// PublishData is Publish of an event this process has validated: data is
// what events.Validate returned for e exactly as it is published (nil:
// unknown). Stored is given it along with the message.
func (p *Publisher) PublishData(ctx context.Context, e event.Event, data any) (Ack, error) {
	m, err := p.encode(e, data != nil)
	if err != nil {
		return Ack{}, err
	}
	pa, err := p.js.PublishMsg(ctx, m)
	if err != nil {
		return Ack{}, fmt.Errorf("publish %s: %w", e.ID(), err)
	}
	ack := Ack{Seq: pa.Sequence, Duplicate: pa.Duplicate}
	if pa.Duplicate {
		return ack, p.conflict(ctx, e, m, pa.Sequence)
	}
	if p.Stored != nil {
		p.Stored([]Stored{{Seq: pa.Sequence, Msg: m, Event: e, Data: data}})
	}
	return ack, nil
}

// Result is the outcome of one event of a batch.
type Result struct {
	Ack Ack
	Err error
}

// storedRun is how many stored events PublishBatch gathers before it
// tells Stored.
const storedRun = 64

// PublishBatch publishes events asynchronously and waits for every
// acknowledgement, so the whole batch costs about one round trip.
func (p *Publisher) PublishBatch(ctx context.Context, evs []event.Event) []Result {
	return p.PublishBatchData(ctx, evs, nil)
}

// PublishBatchData is PublishBatch of events this process has validated:
// datas[i] (when datas is not nil) is what events.Validate returned for
// evs[i] exactly as it is published, or nil when unknown.
func (p *Publisher) PublishBatchData(ctx context.Context, evs []event.Event, datas []any) []Result {
	if datas != nil && len(datas) != len(evs) {
		panic(fmt.Sprintf("stream: PublishBatchData: %d datas for %d events", len(datas), len(evs)))
	}
	out := make([]Result, len(evs))
	futures := make([]jetstream.PubAckFuture, len(evs))
	msgs := make([]*nats.Msg, len(evs))
	for i, e := range evs {
		m, err := p.encode(e, datas != nil && datas[i] != nil)
		if err != nil {
			out[i].Err = err
			continue
		}
		msgs[i] = m
		if futures[i], err = p.js.PublishMsgAsync(m); err != nil {
			out[i].Err = fmt.Errorf("publish %s: %w", e.ID(), err)
		}
	}
	// The stored are told in runs as their acks come in, not at the end,
	// so that their consumer works beside the rest of the batch.
	var stored []Stored
	tell := func() {
		if len(stored) > 0 {
			p.Stored(stored)
			stored = nil
		}
	}
	for i, f := range futures {
		if f == nil {
			continue
		}
		select {
		case pa := <-f.Ok():
			out[i].Ack = Ack{Seq: pa.Sequence, Duplicate: pa.Duplicate}
			if pa.Duplicate {
				out[i].Err = p.conflict(ctx, evs[i], msgs[i], pa.Sequence)
			} else if p.Stored != nil {
				st := Stored{Seq: pa.Sequence, Msg: msgs[i]}
				if datas != nil && datas[i] != nil {
					st.Event, st.Data = evs[i], datas[i]
				}
				if stored = append(stored, st); len(stored) == storedRun {
					tell()
				}
			}
		case err := <-f.Err():
			out[i].Err = fmt.Errorf("publish %s: %w", evs[i].ID(), err)
		case <-ctx.Done():
			out[i].Err = fmt.Errorf("publish %s: %w", evs[i].ID(), ctx.Err())
		}
	}
	if p.Stored != nil {
		tell()
	}
	return out
}
