package stream

import (
	"context"
	"errors"
	"fmt"

	"github.com/engramhq/engram/internal/memory"
	"github.com/nats-io/nats.go/jetstream"
)

// Load reads one event of MEMORY by its sequence, as a consumer would
// have delivered it.
func Load(ctx context.Context, js jetstream.JetStream, seq uint64, maxEventBytes int) (*memory.Applied, error) {
	s, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", MemoryStream, err)
	}
	raw, err := s.GetMsg(ctx, seq)
	if err != nil {
		return nil, fmt.Errorf("read seq %d: %w", seq, err)
	}
	e, data, err := Decode(raw.Subject, raw.Header, raw.Data, maxEventBytes)
	if err != nil {
		return nil, fmt.Errorf("decode seq %d: %w", seq, err)
	}
	m := &Message{Event: e, Data: data, Subject: raw.Subject, Seq: raw.Sequence, Delivered: 1, Stored: raw.Time}
	a := m.Applied()
	return &a, nil
}

// NextStored reads the first message MEMORY holds at seq or after (nil
// when there is none), not marked delivered (Delivered 0). A message that
// does not decode is skipped: the projector dead-lettered it when it was
// delivered, and a rebuild skips it too.
func NextStored(ctx context.Context, js jetstream.JetStream, seq uint64, maxEventBytes int) (*Message, error) {
	s, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", MemoryStream, err)
	}
	for {
		raw, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(SubjectPrefix+".>"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read from seq %d: %w", seq, err)
		}
		m := &Message{Subject: raw.Subject, Seq: raw.Sequence, Stored: raw.Time, Via: raw.Header.Get(HeaderVia)}
		m.Event, m.Data, err = Decode(raw.Subject, raw.Header, raw.Data, maxEventBytes)
		if err == nil {
			return m, nil
		}
		seq = raw.Sequence + 1
	}
}
