package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Backlog is what one durable consumer of MEMORY has yet to finish.
type Backlog struct {
	Name string
	// Pending is what it has not been handed yet; AckPending, what it
	// was handed and has not acknowledged.
	Pending, AckPending uint64
}

// Backlogs is every durable consumer of MEMORY's backlog, read now.
func Backlogs(ctx context.Context, js jetstream.JetStream) ([]Backlog, error) {
	mem, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", MemoryStream, err)
	}
	var out []Backlog
	consumers := mem.ListConsumers(ctx)
	for ci := range consumers.Info() {
		out = append(out, Backlog{Name: ci.Name, Pending: ci.NumPending, AckPending: uint64(max(ci.NumAckPending, 0))})
	}
	if err := consumers.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return out, err
	}
	return out, nil
}

// DeadLetters is how many messages DEADLETTER holds now.
func DeadLetters(ctx context.Context, js jetstream.JetStream) (uint64, error) {
	dlq, err := js.Stream(ctx, DeadLetterStream)
	if err != nil {
		return 0, err
	}
	info, err := dlq.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// Head is MEMORY's last sequence, read now.
func Head(ctx context.Context, js jetstream.JetStream) (uint64, error) {
	info, err := MemoryInfo(ctx, js)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// AckFloor is the last sequence up to which durable, a consumer of
// MEMORY, has acknowledged everything (events a projector dead-lettered
// included, which leave no position in its read model).
func AckFloor(ctx context.Context, js jetstream.JetStream, durable string) (uint64, error) {
	c, err := js.Consumer(ctx, MemoryStream, durable)
	if err != nil {
		return 0, err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.AckFloor.Stream, nil
}

// ConsumerNames are the names of MEMORY's consumers.
func ConsumerNames(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	mem, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return nil, err
	}
	var out []string
	names := mem.ConsumerNames(ctx)
	for name := range names.Name() {
		out = append(out, name)
	}
	return out, names.Err()
}

// DeleteConsumer deletes consumer name of MEMORY.
func DeleteConsumer(ctx context.Context, js jetstream.JetStream, name string) error {
	return js.DeleteConsumer(ctx, MemoryStream, name)
}

// WorkersBusy says whether a durable consumer of MEMORY other than the
// read models' (projector-…), with a worker pulling from it, has a message
// waiting or in flight; one it cannot read counts as busy.
func WorkersBusy(ctx context.Context, js jetstream.JetStream) (bool, error) {
	s, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return false, err
	}
	busy := false
	names := s.ConsumerNames(ctx)
	for name := range names.Name() {
		if strings.HasPrefix(name, "projector-") {
			continue
		}
		c, err := s.Consumer(ctx, name)
		if err != nil {
			busy = true
			continue
		}
		info, err := c.Info(ctx)
		if err != nil || info.Config.Durable == "" {
			busy = busy || err != nil
			continue
		}
		// Work waiting counts only where a worker is pulling: a
		// stopped one (forget run offline) has nothing in flight.
		if (info.NumPending > 0 || info.NumAckPending > 0) && info.NumWaiting > 0 {
			busy = true
		}
	}
	if names.Err() != nil {
		busy = true
	}
	return busy, nil
}
