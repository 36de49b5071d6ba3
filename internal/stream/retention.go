package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/nats-io/nats.go/jetstream"
)

// RawTurnTypes are the event types that carry an agent's raw turns, which
// retention ages out: recorded turns, and the snapshots of turns leaving
// an agent's window.
var RawTurnTypes = []string{events.TypeTurnRecorded, events.TypeContextCompressing}

// SeqStoredAt is the sequence of the first MEMORY message the stream
// stored at or after t, or the next sequence when there is none: every
// message below it was stored before t. The stream's own clock decides,
// not an event's time, which a client sets.
func SeqStoredAt(ctx context.Context, js jetstream.JetStream, t time.Time) (uint64, error) {
	mem, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return 0, fmt.Errorf("retention: %w", err)
	}
	// A consumer starting at t is placed by the server on the first
	// message stored at or after it; it is deleted at once, and by the
	// server if this process dies first.
	c, err := mem.CreateConsumer(ctx, jetstream.ConsumerConfig{
		Description:       "engram retention: where the cutoff falls",
		DeliverPolicy:     jetstream.DeliverByStartTimePolicy,
		OptStartTime:      &t,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute,
		MemoryStorage:     true,
	})
	if err != nil {
		return 0, fmt.Errorf("retention: find the cutoff: %w", err)
	}
	info := c.CachedInfo()
	if err := mem.DeleteConsumer(context.WithoutCancel(ctx), info.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return 0, fmt.Errorf("retention: %w", err)
	}
	return info.Delivered.Stream + 1, nil
}

// expiringTypes are the event types that carry raw turns' text and age
// out with them: the raw turns, and the extraction requests that carried
// them to the extractor.
var expiringTypes = append(slices.Clone(RawTurnTypes), events.TypeExtractionRequested)

// Expired is what ExpireTurns removed.
type Expired struct {
	// Events and DeadLetters count the messages erased from MEMORY and
	// DEADLETTER.
	Events, DeadLetters int
}

// ExpireTurns removes one user's raw turn events (RawTurnTypes) and
// extraction requests below the MEMORY sequence before, and the dead
// letters made of them, erasing their bytes (as Erase does). A stream
// created with deny_delete only allows a purge. Deleting and purging are
// the operator's alone: js must be the operator's.
func ExpireTurns(ctx context.Context, js jetstream.JetStream, namespace, user string, before uint64) (Expired, error) {
	var out Expired
	mem, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return out, fmt.Errorf("expire turns: stream %s: %w", MemoryStream, err)
	}
	dlq, err := js.Stream(ctx, DeadLetterStream)
	if err != nil {
		return out, fmt.Errorf("expire turns: stream %s: %w", DeadLetterStream, err)
	}
	purgeOnly := mem.CachedInfo().Config.DenyDelete
	for _, typ := range expiringTypes {
		subj := Subject(namespace, user, typ)
		k, err := eraseSubject(ctx, mem, subj, before, purgeOnly)
		out.Events += k
		if err != nil {
			return out, fmt.Errorf("expire turns: %w", err)
		}
		k, err = eraseDeadLetters(ctx, dlq, subj, before)
		out.DeadLetters += k
		if err != nil {
			return out, fmt.Errorf("expire turns: dead letters of %s: %w", subj, err)
		}
	}
	return out, nil
}

// eraseDeadLetters erases the dead letters made of MEMORY messages on
// subject below the sequence before, whichever consumer failed them.
func eraseDeadLetters(ctx context.Context, dlq jetstream.Stream, subject string, before uint64) (int, error) {
	subjects, err := subjectsOf(ctx, dlq, DLQSubjectPrefix+".*."+subject, func(string) bool { return true })
	if err != nil {
		return 0, err
	}
	n := 0
	for _, subj := range subjects {
		k, err := eraseWhere(ctx, dlq, subj, func(raw *jetstream.RawStreamMsg) (erase, more bool) {
			orig, err := strconv.ParseUint(raw.Header.Get(HeaderDLQSeq), 10, 64)
			return err == nil && orig < before, true
		})
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// OldestRawTurn is when the stream stored the oldest raw turn event it
// holds; ok is false when it holds none.
func OldestRawTurn(ctx context.Context, js jetstream.JetStream) (at time.Time, ok bool, err error) {
	mem, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return at, false, fmt.Errorf("oldest raw turn: %w", err)
	}
	for _, typ := range RawTurnTypes {
		m, err := mem.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(SubjectPrefix+".*.*."+typ))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return at, false, fmt.Errorf("oldest raw turn: %w", err)
		}
		if !ok || m.Time.Before(at) {
			at, ok = m.Time, true
		}
	}
	return at, ok, nil
}

// EraseReplaced erases the messages of one user's event type below the
// MEMORY sequence before whose event which says to: what engram wrote
// from turns that aged out, once a replacement without their words is
// stored above before. Like ExpireTurns it needs a stream that allows
// deletes.
func EraseReplaced(ctx context.Context, js jetstream.JetStream, namespace, user, eventType string, before uint64,
	maxEventBytes int, which func(memory.Applied) bool) ([]events.EventRef, error) {
	mem, err := js.Stream(ctx, MemoryStream)
	if err != nil {
		return nil, fmt.Errorf("erase replaced: stream %s: %w", MemoryStream, err)
	}
	subj := Subject(namespace, user, eventType)
	var decodeErr error
	var erased []events.EventRef
	_, err = eraseWhere(ctx, mem, subj, func(raw *jetstream.RawStreamMsg) (erase, more bool) {
		if raw.Sequence >= before {
			return false, false
		}
		e, data, err := Decode(raw.Subject, raw.Header, raw.Data, maxEventBytes)
		if err != nil {
			decodeErr = err
			return false, true
		}
		m := &Message{Event: e, Data: data, Subject: raw.Subject, Seq: raw.Sequence}
		if !which(m.Applied()) {
			return false, true
		}
		erased = append(erased, events.EventRef{Source: e.Source(), ID: e.ID()})
		return true, true
	})
	if err != nil {
		return erased, fmt.Errorf("erase replaced %s: %w", subj, err)
	}
	if decodeErr != nil {
		return erased, fmt.Errorf("erase replaced %s: a message does not decode: %w", subj, decodeErr)
	}
	return erased, nil
}
