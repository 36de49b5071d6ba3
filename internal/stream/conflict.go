package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// conflict is nil when sent, which JetStream reported as a duplicate of
// the message at seq, says what that message says (or p does not
// compare), and a memory.ECONFLICT error naming the stored event when it
// says something else.
//
// JetStream only reports duplicates within the stream's duplicate window
// (StreamsConfig.DuplicateWindow); past it the same source and id are
// stored again and the read model keeps the first it applied.
func (p *Publisher) conflict(ctx context.Context, e event.Event, sent *nats.Msg, seq uint64) error {
	if !p.Conflicts {
		return nil
	}
	s, err := p.memoryStream(ctx)
	if err != nil {
		return fmt.Errorf("compare %s with seq %d: %w", e.ID(), seq, err)
	}
	raw, err := s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		// Erased or aged out since: nothing is left to differ from, and
		// what JetStream dropped is what was asked to be gone.
		return nil
	}
	if err != nil {
		return fmt.Errorf("compare %s with seq %d: %w", e.ID(), seq, err)
	}
	same, err := sameContent(raw.Data, sent.Data)
	if err != nil {
		return fmt.Errorf("compare %s with seq %d: %w", e.ID(), seq, err)
	}
	if same {
		return nil
	}
	return memory.Errorf(memory.ECONFLICT, "event %s from %s is stored (seq %d) with other content: "+
		"a new write needs a new id; to retry, send what was stored", e.ID(), e.Source(), seq)
}

// memoryStream is MEMORY's handle, looked up once: the lookup is a
// request of its own, as long as the read.
func (p *Publisher) memoryStream(ctx context.Context) (jetstream.Stream, error) {
	p.memoryMu.Lock()
	defer p.memoryMu.Unlock()
	if p.memory == nil {
		js := p.js
		if p.Reads != nil {
			js = p.Reads
		}
		s, err := js.Stream(ctx, MemoryStream)
		if err != nil {
			return nil, err
		}
		p.memory = s
	}
	return p.memory, nil
}

// sameContent reports whether two stored encodings of an event (the same
// source and id) say the same thing: every attribute and the data, as
// JSON values, except the time and the tracing extensions. A time is
// stamped on arrival when the sender gave none, and each try of a send
// is its own trace, so a retry differs in those and is still the same
// write.
func sameContent(a, b []byte) (bool, error) {
	va, err := contentOf(a)
	if err != nil {
		return false, err
	}
	vb, err := contentOf(b)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(va, vb), nil
}

func contentOf(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	delete(v, "time")
	delete(v, events.ExtTraceParent)
	delete(v, events.ExtTraceState)
	return v, nil
}
