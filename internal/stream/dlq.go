package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderRedrivenFrom marks a message republished by Redrive with the
// DEADLETTER sequence it came from, so a message that fails again carries
// its history into its next dead letter.
const HeaderRedrivenFrom = "Engram-Redriven-From"

// HeaderRedriveFor names the consumer a redriven message is meant for:
// the one that dead-lettered it. Other workers pass it by (see
// ConsumerConfig.TakeEveryRedrive).
const HeaderRedriveFor = "Engram-Redrive-For"

// headerDLQPrefix starts every header deadLetter adds.
const headerDLQPrefix = "Engram-Dlq-"

// ErrNoDeadLetter means DEADLETTER holds no message at that sequence: it
// never existed, or it was redriven or deleted already.
var ErrNoDeadLetter = errors.New("no such dead letter")

// DeadLetter is one message in DEADLETTER, read back with what deadLetter
// recorded about it.
type DeadLetter struct {
	Seq         uint64 // in DEADLETTER
	Subject     string // the original subject, on MEMORY
	Consumer    string
	Reason      string
	OriginalSeq uint64 // in MEMORY
	Deliveries  int
	Time        time.Time
	// EventID and EventType come from the body (structured mode) or the
	// ce-id and ce-type headers (binary mode); empty when the message was
	// too broken to tell.
	EventID, EventType string
	Size               int // of the body
	Header             nats.Header
	Data               []byte
}

// DLQFilter selects dead letters. The zero value selects all of them.
type DLQFilter struct {
	Consumer string // exact durable name; empty for any
	// Subject filters on the original subject; NATS wildcards work
	// ("mem.default.ann.>", "mem.*.*.turn.recorded").
	Subject string
	Limit   int    // 0 for no limit
	After   uint64 // only dead letters with a higher sequence; for paging
}

// subject is the DEADLETTER subject filter, dlq.<consumer>.<original>.
func (f DLQFilter) subject() (string, error) {
	consumer, orig := "*", ">"
	if f.Consumer != "" {
		if strings.ContainsAny(f.Consumer, ".*> \t\r\n") {
			return "", fmt.Errorf("consumer %q is not a durable name", f.Consumer)
		}
		consumer = f.Consumer
	}
	if f.Subject != "" {
		if err := checkFilter(f.Subject); err != nil {
			return "", err
		}
		orig = f.Subject
	}
	return DLQSubjectPrefix + "." + consumer + "." + orig, nil
}

func checkFilter(s string) error {
	tokens := strings.Split(s, ".")
	for i, t := range tokens {
		switch {
		case t == "" || strings.ContainsAny(t, " \t\r\n"):
			return fmt.Errorf("subject filter %q: empty or blank token", s)
		case t == ">" && i != len(tokens)-1:
			return fmt.Errorf("subject filter %q: '>' must be the last token", s)
		case len(t) > 1 && strings.ContainsAny(t, "*>"):
			return fmt.Errorf("subject filter %q: a wildcard must be a whole token", s)
		}
	}
	return nil
}

// EachDeadLetter calls fn for each dead letter that matches filter, oldest
// first, without consuming anything. It reads DEADLETTER as it was when the
// call began: a message dead-lettered meanwhile (say, one fn redrove that
// failed again) is not visited, so redriving everything ends. An error
// from fn stops the walk and is returned.
func EachDeadLetter(ctx context.Context, js jetstream.JetStream, filter DLQFilter, fn func(DeadLetter) error) error {
	subj, err := filter.subject()
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, DeadLetterStream)
	if err != nil {
		return fmt.Errorf("dead letters: %w", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("dead letters: %w", err)
	}
	last := info.State.LastSeq
	n := 0
	// One lookup per dead letter: the server finds the next match, so
	// nothing is left behind (no consumer) and nothing is read twice. The
	// dead-letter stream is small next to MEMORY, so the round trips are
	// cheap; an operator sees the first lines at once.
	for seq := max(filter.After+1, info.State.FirstSeq); seq <= last; {
		if filter.Limit > 0 && n >= filter.Limit {
			return nil
		}
		raw, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("dead letters from seq %d: %w", seq, err)
		}
		if raw.Sequence > last {
			return nil
		}
		if err := fn(parseDeadLetter(raw)); err != nil {
			return err
		}
		n++
		seq = raw.Sequence + 1
	}
	return nil
}

// ListDeadLetters returns the dead letters that match filter, oldest first.
func ListDeadLetters(ctx context.Context, js jetstream.JetStream, filter DLQFilter) ([]DeadLetter, error) {
	var out []DeadLetter
	err := EachDeadLetter(ctx, js, filter, func(d DeadLetter) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

// GetDeadLetter reads one dead letter by its DEADLETTER sequence.
func GetDeadLetter(ctx context.Context, js jetstream.JetStream, seq uint64) (*DeadLetter, error) {
	s, err := js.Stream(ctx, DeadLetterStream)
	if err != nil {
		return nil, fmt.Errorf("dead letter %d: %w", seq, err)
	}
	raw, err := s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("dead letter %d: %w", seq, ErrNoDeadLetter)
	}
	if err != nil {
		return nil, fmt.Errorf("dead letter %d: %w", seq, err)
	}
	d := parseDeadLetter(raw)
	return &d, nil
}

// Redrive republishes dead letter seq to its original subject on MEMORY,
// headers and body as they were, and then deletes it from DEADLETTER. It
// returns the message's new MEMORY sequence.
//
// The order matters: a crash after the publish and before the delete
// leaves the dead letter in place (a duplicate, never a loss), and its
// Nats-Msg-Id, redrive-<seq>, makes the second redrive of it a no-op
// within MEMORY's duplicate window. The message names the consumer that
// gave up on it (HeaderRedriveFor): only that worker handles it again,
// and read models, which apply it as a no-op unless they were the ones.
func Redrive(ctx context.Context, js jetstream.JetStream, seq uint64) (uint64, error) {
	d, err := GetDeadLetter(ctx, js, seq)
	if err != nil {
		return 0, err
	}
	if d.Subject == "" {
		return 0, fmt.Errorf("redrive dead letter %d: it does not say its original subject", seq)
	}
	if !strings.HasPrefix(d.Subject, SubjectPrefix+".") {
		return 0, fmt.Errorf("redrive dead letter %d: subject %q is not on %s", seq, d.Subject, MemoryStream)
	}
	m := nats.NewMsg(d.Subject)
	for k, v := range d.Header {
		// Nats-* headers told the server how to store the original
		// (dedup id, expected stream or sequence); replayed now they
		// would be wrong. They are stored with the message, so Nats-
		// Expected-Stream here would follow it into its next dead letter
		// and make that publish fail.
		if hasPrefixFold(k, headerDLQPrefix) || hasPrefixFold(k, "Nats-") {
			continue
		}
		m.Header[k] = v
	}
	m.Header.Set(HeaderRedrivenFrom, strconv.FormatUint(seq, 10))
	if d.Consumer != "" {
		m.Header.Set(HeaderRedriveFor, d.Consumer)
	}
	m.Header.Set(jetstreamMsgID, "redrive-"+strconv.FormatUint(seq, 10))
	m.Data = d.Data
	ack, err := js.PublishMsg(ctx, m)
	if err != nil {
		return 0, fmt.Errorf("redrive dead letter %d to %s: %w", seq, d.Subject, err)
	}
	if ack.Stream != MemoryStream {
		return 0, fmt.Errorf("redrive dead letter %d: %s is stored by stream %s, not %s; the dead letter is kept",
			seq, d.Subject, ack.Stream, MemoryStream)
	}
	s, err := js.Stream(ctx, DeadLetterStream)
	if err != nil {
		return ack.Sequence, fmt.Errorf("redrove dead letter %d to seq %d but could not delete it: %w", seq, ack.Sequence, err)
	}
	if err := s.DeleteMsg(ctx, seq); err != nil {
		// A redrive running at the same time may have deleted it first.
		if _, gerr := s.GetMsg(ctx, seq); errors.Is(gerr, jetstream.ErrMsgNotFound) {
			return ack.Sequence, nil
		}
		return ack.Sequence, fmt.Errorf("redrove dead letter %d to seq %d but could not delete it: %w", seq, ack.Sequence, err)
	}
	return ack.Sequence, nil
}

// parseDeadLetter reads what it can: a dead letter is shown even when its
// headers were damaged or the body is not an event at all.
func parseDeadLetter(raw *jetstream.RawStreamMsg) DeadLetter {
	h := raw.Header
	d := DeadLetter{
		Seq:      raw.Sequence,
		Subject:  h.Get(HeaderDLQSubject),
		Consumer: h.Get(HeaderDLQConsumer),
		Reason:   h.Get(HeaderDLQReason),
		Time:     raw.Time,
		Size:     len(raw.Data),
		Header:   h,
		Data:     raw.Data,
	}
	d.OriginalSeq, _ = strconv.ParseUint(h.Get(HeaderDLQSeq), 10, 64)
	d.Deliveries, _ = strconv.Atoi(h.Get(HeaderDLQDeliveries))
	if t, err := time.Parse(time.RFC3339Nano, h.Get(HeaderDLQTime)); err == nil {
		d.Time = t
	}
	// dlq.<consumer>.<original subject>
	if rest, ok := strings.CutPrefix(raw.Subject, DLQSubjectPrefix+"."); ok {
		consumer, orig, _ := strings.Cut(rest, ".")
		if d.Consumer == "" {
			d.Consumer = consumer
		}
		if d.Subject == "" {
			d.Subject = orig
		}
	}
	d.EventID, d.EventType = headerFold(h, "ce-id"), headerFold(h, "ce-type")
	if d.EventID == "" && d.EventType == "" {
		var ce struct {
			ID   any `json:"id"`
			Type any `json:"type"`
		}
		if json.Unmarshal(raw.Data, &ce) == nil {
			d.EventID, d.EventType = attrString(ce.ID), attrString(ce.Type)
		}
	}
	return d
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// headerFold gets a header whatever its case: agents publishing in binary
// mode write ce-* headers as they please.
func headerFold(h nats.Header, key string) string {
	if v := h.Get(key); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, key) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// attrString shows a JSON attribute even when it has the wrong type,
// which may be why the event was dead-lettered.
func attrString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// RemoveDeadLetter erases dead letter seq from DEADLETTER: its bytes are
// overwritten in the store, not only unlinked, since a dead letter holds
// the event's content.
func RemoveDeadLetter(ctx context.Context, js jetstream.JetStream, seq uint64) error {
	s, err := js.Stream(ctx, DeadLetterStream)
	if err != nil {
		return fmt.Errorf("remove dead letter %d: %w", seq, err)
	}
	// The server's answer to a delete of nothing reaches us only as text.
	if _, err := s.GetMsg(ctx, seq); errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("remove dead letter %d: %w", seq, ErrNoDeadLetter)
	}
	if err := s.SecureDeleteMsg(ctx, seq); err != nil {
		return fmt.Errorf("remove dead letter %d: %w", seq, err)
	}
	return nil
}
