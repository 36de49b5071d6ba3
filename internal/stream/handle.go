package stream

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The handles a composer (internal/app) holds: it gets them from Connect,
// NewJetStream and ConnectAs and hands them back to this package's
// functions, so that it names nats.go nowhere itself.
type (
	// JetStream is a connection's JetStream API.
	JetStream = jetstream.JetStream
	// Conn is a connection to NATS.
	Conn = nats.Conn
	// ConnOption changes how Connect connects.
	ConnOption = nats.Option
	// StreamInfo is a stream's configuration and state.
	StreamInfo = jetstream.StreamInfo
	// StreamConfig is a stream's configuration.
	StreamConfig = jetstream.StreamConfig
)

// NotReady says whether an error is NATS or JetStream not answering (yet),
// rather than something a retry won't change: a cluster that has just
// formed answers late while it elects its leaders.
func NotReady(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrNoServers) ||
		errors.As(err, &apiErr) && apiErr.Code == 503
}

// ErrStreamNotFound is the error of reading a stream that is not there.
var ErrStreamNotFound = jetstream.ErrStreamNotFound
