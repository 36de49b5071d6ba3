package stream

import (
	"context"
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
