package stream

import (
	"bytes"
	"sync"

	"github.com/cloudevents/sdk-go/v2/event"
)

// Recent remembers, by stream sequence, the last events this process
// stored after validating them itself (Stored with Data), so that its own
// consumers take the decoded event instead of decoding and validating the
// same bytes again.
//
// A delivered message is taken from here only when it is the very message
// remembered: same sequence, same subject, same body, in structured mode;
// decoding those bytes would give the same event, since Decode depends on
// nothing else. Anything else (another process's event, a stream
// recreated since, a sequence fallen out of the ring) is decoded and
// validated as always. Agents cannot reach this: it holds only what this
// process's ingest validated.
type Recent struct {
	mu   sync.Mutex
	ring []Stored
}

// NewRecent remembers the last n events (n > 0).
func NewRecent(n int) *Recent { return &Recent{ring: make([]Stored, n)} }

// Add is a Publisher's Stored hook: it remembers the stored events whose
// decoded data is known.
func (r *Recent) Add(stored []Stored) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range stored {
		if s.Data != nil && s.Msg != nil && s.Seq > 0 {
			r.ring[s.Seq%uint64(len(r.ring))] = s
		}
	}
}

// lookup gives the event and data remembered for the message at seq, if
// it is the very message remembered.
func (r *Recent) lookup(seq uint64, subject string, hdr map[string][]string, data []byte) (event.Event, any, bool) {
	if r == nil || seq == 0 {
		return event.Event{}, nil, false
	}
	r.mu.Lock()
	s := r.ring[seq%uint64(len(r.ring))]
	r.mu.Unlock()
	if s.Seq != seq || s.Msg.Subject != subject || !bytes.Equal(s.Msg.Data, data) || isBinary(hdr) {
		return event.Event{}, nil, false
	}
	return s.Event, s.Data, true
}

func isBinary(hdr map[string][]string) bool {
	for k := range hdr {
		if len(k) >= len(ceHeaderPrefix) && equalFoldASCII(k[:len(ceHeaderPrefix)], ceHeaderPrefix) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a, b string) bool {
	for i := range len(a) {
		ca, cb := a[i]|0x20, b[i]|0x20
		if ca != cb {
			return false
		}
	}
	return len(a) == len(b)
}
