package stream

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream names.
const (
	MemoryStream     = "MEMORY"
	DeadLetterStream = "DEADLETTER"
)

// StreamsConfig sizes the streams. The zero value is a single node that
// keeps everything forever.
type StreamsConfig struct {
	Replicas int
	// DuplicateWindow is how long JetStream remembers a Nats-Msg-Id. Apply
	// is idempotent too, so this only saves work; it costs memory per id.
	DuplicateWindow time.Duration
}

// EnsureStreams creates or updates MEMORY and DEADLETTER. It is idempotent
// and safe to call from every worker at start.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, cfg StreamsConfig) error {
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.DuplicateWindow == 0 {
		cfg.DuplicateWindow = time.Hour
	}
	streams := []jetstream.StreamConfig{{
		Name:        MemoryStream,
		Description: "engram: every event, the source of truth",
		Subjects:    []string{SubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
		// Single messages are deleted only to erase a user (Erase), whose
		// messages' bytes must be overwritten, which a purge does not do.
		// A stream created when this was true keeps it (JetStream cannot
		// undo it); Erase then purges instead.
		DenyDelete: false,
	}, {
		Name:        DeadLetterStream,
		Description: "engram: events a worker could not process, with the reason",
		Subjects:    []string{DLQSubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.DuplicateWindow,
	}}
	for _, sc := range streams {
		if s, err := js.Stream(ctx, sc.Name); err == nil {
			have := s.CachedInfo().Config
			if have.DenyDelete {
				sc.DenyDelete = true
			}
			// Every worker calls this at start: a stream already as wanted
			// is left alone, since an update races consumers being created
			// by the workers already running (a data race inside
			// nats-server 2.15.2's file store, seen under -race).
			if sameStream(have, sc) {
				continue
			}
		}
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("ensure stream %s: %w", sc.Name, err)
		}
	}
	return nil
}

// sameStream reports whether have already holds every setting of want
// that EnsureStreams sets.
func sameStream(have, want jetstream.StreamConfig) bool {
	return have.Description == want.Description && slices.Equal(have.Subjects, want.Subjects) &&
		have.Storage == want.Storage && have.Retention == want.Retention && have.Replicas == want.Replicas &&
		have.Duplicates == want.Duplicates && have.DenyDelete == want.DenyDelete
}
