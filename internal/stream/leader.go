package stream

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// waitLeader waits, up to limit, until a replicated consumer has a
// leader. On a cluster a consumer is created before its leader is
// elected; a pull sent meanwhile gets no responders and is then not
// retried until the pull's heartbeat runs out, half a minute later.
func waitLeader(ctx context.Context, cons jetstream.Consumer, limit time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		info, err := cons.Info(ctx)
		if err == nil && (info.Cluster == nil || info.Cluster.Leader != "") {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
