package memory

import (
	"context"
	"time"
)

// Envelope is what the read model keeps of every event: enough to identify
// it (Source, ID), order it (Seq) and scope it.
type Envelope struct {
	Seq     uint64 // stream sequence
	Source  string
	ID      string
	Type    string
	Scope   Scope
	Agent   string
	Subject string
	Time    time.Time // the event's own time; every time-dependent rule uses it
}

// Applied is one event for the projection: its envelope and its decoded data
// (one of the events package's data types).
type Applied struct {
	Envelope
	Data any
}

// Applier applies events to a read model, in order, idempotently. It
// returns one error per event; a nil slice means all were applied.
// An error wrapping an *Error with code EINVALID means the event can never
// be applied; any other error may succeed on retry.
type Applier interface {
	Apply(ctx context.Context, batch []Applied) []error
	// LastSeq is the stream sequence of the last applied event.
	LastSeq(ctx context.Context) (uint64, error)
}
