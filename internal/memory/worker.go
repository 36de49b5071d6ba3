package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Outgoing is an event a worker publishes. Workers choose deterministic
// IDs, so a retried publish or a replayed decision is deduplicated.
type Outgoing struct {
	Type  string
	ID    string
	Scope Scope
	Agent string
	Time  time.Time
	Data  any // one of the events package's data types
}

// Emitter publishes events and returns once the stream has stored them.
type Emitter func(ctx context.Context, evs ...Outgoing) error

// Delivery is one event handed to a worker, with how often it has been
// tried; Final is set on the last try, when the worker should fall back.
type Delivery struct {
	Applied
	Attempt int
	Final   bool
	// Redriven is true for an event an operator sent back from the dead
	// letters: it is asked again on purpose.
	Redriven bool
}

// RetryError asks for the event to be retried no sooner than After (for
// example an LLM's 429 Retry-After).
type RetryError struct {
	Err   error
	After time.Duration
}

func (e *RetryError) Error() string { return e.Err.Error() }
func (e *RetryError) Unwrap() error { return e.Err }

// RetryAfterOf returns the delay a RetryError in err's chain asks for.
func RetryAfterOf(err error) (time.Duration, bool) {
	var re *RetryError
	if errors.As(err, &re) {
		return re.After, true
	}
	return 0, false
}

// MemoryID is the id of the index-th memory an event creates: derived from
// the event, so a replay creates the same ids and a worker can name a
// memory before the projector has written it.
func MemoryID(source, eventID string, index int) string {
	h := sha256.Sum256([]byte(source + "\x00" + eventID + "\x00" + strconv.Itoa(index)))
	return "m_" + hex.EncodeToString(h[:10])
}

// TurnSource finds turns that were never extracted (the batcher's state
// after a restart, and the daily sweep).
type TurnSource interface {
	Unextracted(ctx context.Context, before time.Time, limit int) ([]Turn, error)
}
