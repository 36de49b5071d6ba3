package stream

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A process started while the bus is electing leaders tries again; one
// whose start fails for another reason does not.
func TestNotReady(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("reset consumer projector-extractor-1: %w", context.DeadlineExceeded), true},
		{fmt.Errorf("create consumer batcher: %w", nats.ErrTimeout), true},
		{fmt.Errorf("stream info: %w", jetstream.ErrNoStreamResponse), true},
		{fmt.Errorf("ensure streams: %w", &jetstream.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}), true},
		{errors.New("extract: quiet_gap: must be positive"), false},
		{fmt.Errorf("create consumer: %w", &jetstream.APIError{Code: 400, Description: "consumer name in subject does not match durable name in request"}), false},
	} {
		if got := NotReady(c.err); got != c.want {
			t.Errorf("NotReady(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
