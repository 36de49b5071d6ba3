package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ReplayBatch is a run of messages read by Replay, in stream order.
// Undecodable holds the sequences that could not be decoded; a projector
// dead-letters those, so a replay skips them the same way.
type ReplayBatch struct {
	Messages    []*Message
	Undecodable []uint64
	// Last is the highest sequence read so far.
	Last uint64
}

// Replay reads MEMORY from sequence 1 through to (inclusive) with an
// ordered consumer, which needs no acks and leaves nothing behind, and
// hands fn batches of up to size messages. It stops early, without error,
// if the stream holds nothing past the last message read.
func Replay(ctx context.Context, js jetstream.JetStream, to uint64, size, maxEventBytes int, fn func(ReplayBatch) error) error {
	return ReplayKept(ctx, js, to, size, maxEventBytes, nil, fn)
}

// ReplayKept is Replay of the messages keep keeps, by their subject (all
// when keep is nil): the others are read, not decoded, and handed to
// nobody, as a partition's projector passes them over (ConsumerConfig.Keep).
func ReplayKept(ctx context.Context, js jetstream.JetStream, to uint64, size, maxEventBytes int,
	keep func(subject string) bool, fn func(ReplayBatch) error) error {
	if to == 0 {
		return nil
	}
	oc, err := js.OrderedConsumer(ctx, MemoryStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	var last uint64
	idle, tries := 0, 0
	for last < to {
		// Stored messages are there to be had: take what is available now
		// instead of waiting for a full batch; only an empty answer earns
		// one patient look before deciding the stream has ended.
		var fetched jetstream.MessageBatch
		if idle == 0 {
			fetched, err = oc.FetchNoWait(size)
		} else {
			fetched, err = oc.Fetch(size, jetstream.FetchMaxWait(2*time.Second))
		}
		if err != nil && replayRetry(ctx, err, &tries) {
			continue
		}
		if err != nil {
			return fmt.Errorf("replay after seq %d: %w", last, err)
		}
		var b ReplayBatch
		n := 0
		for m := range fetched.Messages() {
			n++
			if keep != nil && !keep(m.Subject()) {
				if md, err := m.Metadata(); err == nil && md.Sequence.Stream <= to {
					last = max(last, md.Sequence.Stream)
				}
				continue
			}
			msg, derr := decodeMsg(m, maxEventBytes, nil)
			if msg.Seq > to {
				continue
			}
			last = max(last, msg.Seq)
			if derr != nil {
				b.Undecodable = append(b.Undecodable, msg.Seq)
				continue
			}
			b.Messages = append(b.Messages, msg)
		}
		if err := fetched.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			if n == 0 && replayRetry(ctx, err, &tries) {
				continue
			}
			return fmt.Errorf("replay after seq %d: %w", last, err)
		}
		tries = 0
		if n == 0 {
			if idle++; idle < 2 {
				continue
			}
			// Nothing more to read: the end of the stream, or the rest
			// of it was purged (a user's erasure).
			return ctx.Err()
		}
		idle = 0
		b.Last = last
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// replayRetry says whether a fetch that failed is worth asking again, and
// waits a moment first: on a cluster, a fetch can find no responder while
// the stream's or the consumer's leader moves, and the ordered consumer
// recreates itself on the next one. A few tries, then the error stands.
func replayRetry(ctx context.Context, err error, tries *int) bool {
	if *tries >= 10 || ctx.Err() != nil ||
		!errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoHeartbeat) {
		return false
	}
	*tries++
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Duration(*tries) * 200 * time.Millisecond):
		return true
	}
}
