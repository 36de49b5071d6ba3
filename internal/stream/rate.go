package stream

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// PublishRate measures JetStream's own acknowledged rate for msgs: each is
// published, with a dedup id, to a fresh stream on an embedded server of
// its own with sync policy, with async acks, and the rate is taken when the
// last ack is in. It is the bound of ingest under a durability policy, for
// benchmarks to hold engram's ingest against.
func PublishRate(ctx context.Context, sync Sync, msgs [][]byte) (float64, error) {
	dir, err := os.MkdirTemp("", "engram-jsrate-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	emb, err := StartEmbedded(EmbeddedConfig{StoreDir: dir, Sync: sync})
	if err != nil {
		return 0, err
	}
	defer emb.Shutdown()
	nc, err := nats.Connect("", emb.ConnectOption())
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		return 0, err
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "RATE", Subjects: []string{"rate.>"},
		Storage: jetstream.FileStorage, Duplicates: time.Hour}); err != nil {
		return 0, err
	}
	start := time.Now()
	for i, m := range msgs {
		if _, err := js.PublishAsync("rate.events", m, jetstream.WithMsgID(fmt.Sprintf("rate/%d", i)),
			jetstream.WithStallWait(time.Minute)); err != nil {
			return 0, err
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return float64(len(msgs)) / time.Since(start).Seconds(), nil
}
