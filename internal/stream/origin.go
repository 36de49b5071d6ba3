package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MemoryOrigin identifies this incarnation of the MEMORY stream: a stream
// deleted and recreated under the same name has another. It is the
// stream's creation time (which every replica reports alike), so a read
// model that recorded it can tell its stream from a new one whose
// sequences start over. lastSeq is the stream's last sequence.
func MemoryOrigin(ctx context.Context, js jetstream.JetStream) (origin string, lastSeq uint64, err error) {
	s, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return "", 0, fmt.Errorf("stream %s: %w", MemoryStream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("stream %s info: %w", MemoryStream, err)
	}
	return info.Created.UTC().Format(time.RFC3339Nano), info.State.LastSeq, nil
}
