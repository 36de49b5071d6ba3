package stream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Message is one event delivered to a worker.
type Message struct {
	Event     event.Event
	Data      any // the validated, decoded data (see events.DecodeData)
	Subject   string
	Seq       uint64 // stream sequence
	Delivered int    // 1 on first delivery
	Stored    time.Time
	// Via is the edge the event came in by (HeaderVia); empty when it was
	// published straight to NATS.
	Via string
	// Passed marks a message the consumer's Keep passed over: not decoded
	// (Event and Data are empty), handed on only so that the handler sees
	// every sequence, and acknowledged like any other.
	Passed bool

	msg jetstream.Msg
}

// BatchHandler processes messages in stream order and returns one error per
// message (nil for success). Returning nil means every message succeeded.
type BatchHandler func(ctx context.Context, msgs []*Message) []error

// permanentError marks an error that retrying cannot fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err so that its message goes to the dead letters at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool { return errors.As(err, new(permanentError)) }

// ConsumerConfig configures a durable pull consumer.
type ConsumerConfig struct {
	Stream  string
	Durable string
	// Description says what the consumer is for (nats consumer info).
	Description    string
	FilterSubjects []string
	// MaxDeliver is how many times a message is tried before it is dead-lettered.
	MaxDeliver int
	AckWait    time.Duration
	// Backoff gives the nak delay after the n-th failed delivery.
	Backoff func(delivered int) time.Duration
	Batch   int
	// Pull is how many messages one pull asks JetStream for (0: Batch).
	// Those a pull delivers past the first wait in the NATS client while
	// the inbox is full, where nothing tells JetStream they are in
	// progress: a consumer whose batch can outlast AckWait (a model call
	// per message) pulls one at a time, so every message it was handed is
	// held.
	Pull int
	// Restart, when set, deletes any existing consumer of this name and
	// starts a new one at StartSeq (0 = the start of the stream). A
	// projection that stores its own position uses it: the position in
	// SQLite, not the consumer's, is the truth.
	Restart  bool
	StartSeq uint64
	// MaxEventBytes bounds a decoded event.
	MaxEventBytes int
	// TakeEveryRedrive makes the consumer handle a redriven event even
	// when another consumer is the one that gave up on it. A projection
	// sets it: applying an event again changes nothing, and its stream
	// position must pass the message. Other workers leave an event
	// redriven for another alone, so a redrive reaches only the worker
	// that failed.
	TakeEveryRedrive bool
	// Done, when set, tells whether the event at a stream sequence is
	// already applied by other means (a read model fed by its own
	// process's ingest): such a message is acknowledged as it arrives,
	// without being decoded or handed to the handler.
	Done func(seq uint64) bool
	// Recent, when set, holds events this process validated and stored:
	// a message that is one of them is not decoded again.
	Recent *Recent
	// Keep, when set, says by its subject whether a message is this
	// consumer's to handle. One it is not is handed over Passed, without
	// being decoded: a reader of one partition of the users reads the
	// whole stream and decodes only its own users' events.
	Keep func(subject string) bool
	// InactiveThreshold, when set, has JetStream delete the consumer
	// once nothing has pulled from it for that long: the consumer of a
	// partition's read model dies with the instance that held it.
	InactiveThreshold time.Duration
}

// DefaultBackoff doubles from 1 s up to 5 min.
func DefaultBackoff(delivered int) time.Duration {
	d := time.Second << min(max(delivered-1, 0), 9)
	return min(d, 5*time.Minute)
}

// Consumer runs a handler over a durable consumer.
type Consumer struct {
	js   jetstream.JetStream
	cfg  ConsumerConfig
	log  *zap.Logger
	cons jetstream.Consumer
}

// NewConsumer creates (or binds to) the durable consumer.
func NewConsumer(ctx context.Context, js jetstream.JetStream, cfg ConsumerConfig, log *zap.Logger) (*Consumer, error) {
	if cfg.MaxDeliver == 0 {
		cfg.MaxDeliver = 5
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = 30 * time.Second
	}
	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Batch == 0 {
		cfg.Batch = 256
	}
	if cfg.Pull <= 0 || cfg.Pull > cfg.Batch {
		cfg.Pull = cfg.Batch
	}
	if cfg.MaxEventBytes == 0 {
		cfg.MaxEventBytes = events.DefaultMaxEventBytes
	}
	metrics.Default.Consumer(cfg.Durable)
	cc := jetstream.ConsumerConfig{
		Durable:        cfg.Durable,
		Description:    cfg.Description,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        cfg.AckWait,
		MaxDeliver:     cfg.MaxDeliver,
		MaxAckPending:  max(4*cfg.Batch, 1000),
		FilterSubjects: cfg.FilterSubjects,
		DeliverPolicy:  jetstream.DeliverAllPolicy,

		InactiveThreshold: cfg.InactiveThreshold,
	}
	if cfg.StartSeq > 0 {
		cc.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cc.OptStartSeq = cfg.StartSeq
	}
	if cfg.Restart {
		err := js.DeleteConsumer(ctx, cfg.Stream, cfg.Durable)
		if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("reset consumer %s: %w", cfg.Durable, err)
		}
	} else if old, err := js.Consumer(ctx, cfg.Stream, cfg.Durable); err == nil {
		// Where an existing consumer starts is its own (Replay may have
		// set it); JetStream would refuse to change it anyway.
		oc := old.CachedInfo().Config
		cc.DeliverPolicy, cc.OptStartSeq, cc.OptStartTime = oc.DeliverPolicy, oc.OptStartSeq, oc.OptStartTime
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, cfg.Stream, cc)
	if err != nil {
		return nil, fmt.Errorf("create consumer %s: %w", cfg.Durable, err)
	}
	waitLeader(ctx, cons, 10*time.Second)
	return &Consumer{js: js, cfg: cfg, log: log.With(zap.String(FieldConsumer, cfg.Durable)), cons: cons}, nil
}

// Log field keys.
const (
	FieldConsumer = "consumer"
	FieldSeq      = "seq"
	FieldSubject  = "subject"
	FieldReason   = "reason"
)

// Run delivers messages to h in batches until ctx is cancelled. Messages
// that arrive together are handed over together (up to Batch), so a
// handler can apply them in one transaction; a lone message is not held
// back waiting for company. Decoding happens as messages arrive, so it
// overlaps with the handler's work on the previous batch.
func (c *Consumer) Run(ctx context.Context, h BatchHandler) error {
	type arrival struct {
		msg *Message
		err error
	}
	inbox := make(chan arrival, c.cfg.Batch)
	// The messages that reached this instance's inbox, waiting there or in
	// the handler, are kept from redelivery while the instance lives: a
	// slow handler (an LLM call past AckWait) keeps its own and the Batch
	// queued behind it, and AckWait is how long a dead instance's messages
	// wait before another instance gets them. (Behind a full inbox, up to
	// Pull-1 more can wait in the client's buffer, outside this: none with
	// Pull 1, as the extractor and the consolidator run.)
	held := &heldMsgs{msgs: map[jetstream.Msg]struct{}{}}
	var hb sync.WaitGroup
	hbCtx, stopHB := context.WithCancel(ctx)
	defer func() { stopHB(); hb.Wait() }()
	hb.Go(func() { held.keepAlive(hbCtx, c.cfg.AckWait/3, c.log) })
	cc, err := c.cons.Consume(func(m jetstream.Msg) {
		if c.cfg.Done != nil {
			if md, err := m.Metadata(); err == nil && c.cfg.Done(md.Sequence.Stream) {
				if err := m.Ack(); err != nil {
					c.log.Warn("ack", zap.Uint64(FieldSeq, md.Sequence.Stream), zap.Error(err))
				}
				return
			}
		}
		var msg *Message
		var err error
		if c.cfg.Keep != nil && !c.cfg.Keep(m.Subject()) {
			msg = passedMsg(m)
		} else {
			msg, err = decodeMsg(m, c.cfg.MaxEventBytes, c.cfg.Recent)
		}
		held.add(m)
		select {
		case inbox <- arrival{msg, err}:
		case <-ctx.Done():
		}
	}, jetstream.PullMaxMessages(c.cfg.Pull),
		// Short pulls: a pull lost while JetStream was off (a full disk,
		// healed without a restart) is noticed by its missing heartbeat
		// and asked again within seconds, not half a minute.
		jetstream.PullExpiry(5*time.Second), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if !errors.Is(err, jetstream.ErrNoHeartbeat) {
				c.log.Warn("consume", zap.Error(err))
			}
		}))
	if err != nil {
		return fmt.Errorf("consume %s: %w", c.cfg.Durable, err)
	}
	defer cc.Stop()
	batch := make([]*Message, 0, c.cfg.Batch)
	// take adds an arrival to the batch, or settles it at once.
	take := func(a arrival) {
		if other := a.msg.redrivenFor(); other != "" && other != c.cfg.Durable && (a.err != nil || !c.cfg.TakeEveryRedrive) {
			// Another consumer's redrive: not ours to handle, nor, when it
			// does not even decode, ours to dead-letter again.
			held.remove(a.msg.msg)
			if aerr := a.msg.msg.Ack(); aerr != nil {
				c.log.Warn("ack", zap.Uint64(FieldSeq, a.msg.Seq), zap.Error(aerr))
			}
			return
		}
		if a.err != nil {
			held.remove(a.msg.msg)
			c.deadLetter(ctx, a.msg, a.err)
			return
		}
		batch = append(batch, a.msg)
	}
	for {
		batch = batch[:0]
		select {
		case <-ctx.Done():
			return nil
		case a := <-inbox:
			take(a)
		}
	fill:
		for len(batch) < c.cfg.Batch {
			select {
			case a := <-inbox:
				take(a)
			default:
				break fill
			}
		}
		if len(batch) == 0 {
			continue
		}
		errs := c.handle(ctx, h, batch)
		for i, msg := range batch {
			var err error
			if errs != nil {
				err = errs[i]
			}
			// Out of the held set first: no "in progress" may follow an
			// ack or a nak, whose delay it would cut to AckWait.
			held.remove(msg.msg)
			c.decide(ctx, msg, err)
		}
	}
}

// handle runs h over batch and returns each message's error. A panic in
// h is a bug met on one message, which is not known: the batch is handed
// over again one message at a time, so the message that panics gets the
// panic (a *memory.PanicError) as its error, to be retried and then
// dead-lettered like any failure, and the others get their own fate. The
// worker goes on.
func (c *Consumer) handle(ctx context.Context, h BatchHandler, batch []*Message) []error {
	errs, err := c.call(ctx, h, batch)
	if err == nil {
		return errs
	}
	if len(batch) == 1 {
		c.logPanic(batch[0], err)
		return []error{err}
	}
	c.log.Warn("handler panicked on a batch; handing its messages over one at a time",
		zap.Int("messages", len(batch)), zap.Uint64("first_seq", batch[0].Seq), zap.Error(err))
	errs = make([]error, len(batch))
	for i, m := range batch {
		one, err := c.call(ctx, h, batch[i:i+1])
		switch {
		case err != nil:
			c.logPanic(m, err)
			errs[i] = err
		case one != nil:
			errs[i] = one[0]
		}
	}
	return errs
}

// call runs h, turning a panic into the returned error.
func (c *Consumer) call(ctx context.Context, h BatchHandler, batch []*Message) (errs []error, panicked error) {
	panicked = memory.Recovered(func() error {
		errs = h(ctx, batch)
		return nil
	})
	return errs, panicked
}

func (c *Consumer) logPanic(m *Message, err error) {
	fields := []zap.Field{zap.String(FieldSubject, m.Subject), zap.Uint64(FieldSeq, m.Seq),
		zap.Int("delivered", m.Delivered), zap.Error(err)}
	var p *memory.PanicError
	if errors.As(err, &p) {
		fields = append(fields, zap.String("stack", p.Stack))
	}
	c.log.Error("handler panicked", fields...)
}

// heldMsgs are the messages a consumer instance has been delivered and not
// yet settled.
type heldMsgs struct {
	mu   sync.Mutex
	msgs map[jetstream.Msg]struct{}
}

func (h *heldMsgs) add(m jetstream.Msg) {
	h.mu.Lock()
	h.msgs[m] = struct{}{}
	h.mu.Unlock()
}

func (h *heldMsgs) remove(m jetstream.Msg) {
	h.mu.Lock()
	delete(h.msgs, m)
	h.mu.Unlock()
}

// keepAlive tells JetStream every interval that each held message is still
// being worked on, until ctx ends. It sends under the lock, so a message
// removed before it is settled gets no "in progress" after.
func (h *heldMsgs) keepAlive(ctx context.Context, interval time.Duration, log *zap.Logger) {
	t := time.NewTicker(max(interval, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		for m := range h.msgs {
			// An asynchronous publish: the lock is held for microseconds.
			if err := m.InProgress(); err != nil && !errors.Is(err, jetstream.ErrMsgAlreadyAckd) {
				log.Debug("in progress", zap.Error(err))
			}
		}
		h.mu.Unlock()
	}
}

// passedMsg is a delivered message left undecoded (Passed).
func passedMsg(m jetstream.Msg) *Message {
	msg := &Message{Subject: m.Subject(), msg: m, Delivered: 1, Passed: true}
	if md, err := m.Metadata(); err == nil {
		msg.Seq, msg.Delivered, msg.Stored = md.Sequence.Stream, int(md.NumDelivered), md.Timestamp
	}
	return msg
}

// decodeMsg reads a delivered message. On error the returned Message still
// carries what is needed to dead-letter it.
func decodeMsg(m jetstream.Msg, maxBytes int, recent *Recent) (*Message, error) {
	msg := &Message{Subject: m.Subject(), msg: m, Delivered: 1, Via: m.Headers().Get(HeaderVia)}
	if md, err := m.Metadata(); err == nil {
		msg.Seq, msg.Delivered, msg.Stored = md.Sequence.Stream, int(md.NumDelivered), md.Timestamp
		if e, data, ok := recent.lookup(msg.Seq, msg.Subject, m.Headers(), m.Data()); ok && len(m.Data()) <= maxBytes {
			msg.Event, msg.Data = e, data
			return msg, nil
		}
	}
	e, data, err := Decode(m.Subject(), nats.Header(m.Headers()), m.Data(), maxBytes)
	if err != nil {
		return msg, fmt.Errorf("decode: %w", err)
	}
	msg.Event, msg.Data = e, data
	return msg, nil
}

// decide is the one table that settles a message's fate. A
// memory.RetryError (a 429's Retry-After, say) delays the redelivery to at
// least what it asks.
func (c *Consumer) decide(ctx context.Context, m *Message, err error) {
	after, retryAfter := memory.RetryAfterOf(err)
	switch {
	case err == nil:
		if aerr := m.msg.Ack(); aerr != nil {
			c.log.Warn("ack", zap.Uint64(FieldSeq, m.Seq), zap.Error(aerr))
		}
	case IsPermanent(err) || m.Delivered >= c.cfg.MaxDeliver:
		c.deadLetter(ctx, m, err)
	case retryAfter:
		c.nak(m, max(after, c.cfg.Backoff(m.Delivered)), err)
	default:
		c.nak(m, c.cfg.Backoff(m.Delivered), err)
	}
}

func (c *Consumer) nak(m *Message, delay time.Duration, err error) {
	c.log.Info("retry later", zap.Uint64(FieldSeq, m.Seq), zap.Int("delivered", m.Delivered),
		zap.Duration("delay", delay), zap.Error(err))
	if nerr := m.msg.NakWithDelay(delay); nerr != nil {
		c.log.Warn("nak", zap.Uint64(FieldSeq, m.Seq), zap.Error(nerr))
	}
}

// Dead-letter headers, readable with `nats stream view DEADLETTER` and by
// `engram dlq`.
const (
	HeaderDLQReason     = "Engram-Dlq-Reason"
	HeaderDLQSubject    = "Engram-Dlq-Subject"
	HeaderDLQSeq        = "Engram-Dlq-Stream-Seq"
	HeaderDLQDeliveries = "Engram-Dlq-Deliveries"
	HeaderDLQConsumer   = "Engram-Dlq-Consumer"
	HeaderDLQTime       = "Engram-Dlq-Time"
)

// deadLetter copies the message with the reason to DEADLETTER and then
// terminates it. If the copy cannot be stored the message is nak'ed
// instead, so it is never lost.
func (c *Consumer) deadLetter(ctx context.Context, m *Message, reason error) {
	dl := nats.NewMsg(DLQSubjectPrefix + "." + c.cfg.Durable + "." + m.Subject)
	for k, v := range m.msg.Headers() {
		// Nats-* headers were instructions to the server for the first
		// publish (Nats-Msg-Id, Nats-Expected-Stream, …); copied, they
		// would make the dead letter itself be refused.
		if !strings.HasPrefix(http.CanonicalHeaderKey(k), "Nats-") {
			dl.Header[k] = v
		}
	}
	dl.Header.Set(HeaderDLQReason, truncate(reason.Error(), 1024))
	dl.Header.Set(HeaderDLQSubject, m.Subject)
	dl.Header.Set(HeaderDLQSeq, strconv.FormatUint(m.Seq, 10))
	dl.Header.Set(HeaderDLQDeliveries, strconv.Itoa(m.Delivered))
	dl.Header.Set(HeaderDLQConsumer, c.cfg.Durable)
	dl.Header.Set(HeaderDLQTime, time.Now().UTC().Format(time.RFC3339Nano))
	// One dead letter per (consumer, message) even if we crash before term.
	dl.Header.Set(jetstreamMsgID, fmt.Sprintf("%s-%d", c.cfg.Durable, m.Seq))
	dl.Data = m.msg.Data()
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := c.js.PublishMsg(pctx, dl); err != nil {
		c.log.Error("dead-letter failed; will retry", zap.Uint64(FieldSeq, m.Seq), zap.Error(err))
		_ = m.msg.NakWithDelay(c.cfg.Backoff(m.Delivered))
		return
	}
	metrics.Default.DeadLettered(c.cfg.Durable)
	c.log.Warn("dead-lettered", zap.Uint64(FieldSeq, m.Seq), zap.String(FieldSubject, m.Subject),
		zap.String(FieldReason, truncate(reason.Error(), 200)))
	if err := m.msg.TermWithReason(truncate(reason.Error(), 200)); err != nil {
		c.log.Warn("term", zap.Uint64(FieldSeq, m.Seq), zap.Error(err))
	}
}

// truncate cuts s to at most n bytes, between two characters, and marks
// the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Envelope is what the read model keeps of the message's event. An event
// without a time takes the time JetStream stored it, which replay sees too.
func (m *Message) Envelope() memory.Envelope {
	at := m.Event.Time()
	if at.IsZero() {
		at = m.Stored
	}
	return memory.Envelope{
		Seq:     m.Seq,
		Source:  m.Event.Source(),
		ID:      m.Event.ID(),
		Type:    m.Event.Type(),
		Scope:   memory.Scope{Namespace: events.Namespace(m.Event), User: events.User(m.Event)},
		Agent:   events.Agent(m.Event),
		Subject: m.Event.Subject(),
		Time:    at.UTC(),
	}
}

// Applied pairs the envelope with the decoded data.
func (m *Message) Applied() memory.Applied {
	return memory.Applied{Envelope: m.Envelope(), Data: m.Data}
}

// redrivenFor is the consumer a redriven message was sent back for; ""
// for a message never redriven (or redriven before redrives named one).
func (m *Message) redrivenFor() string {
	if m == nil || m.msg == nil {
		return ""
	}
	return m.msg.Headers().Get(HeaderRedriveFor)
}

// ReplayFrom makes the durable consumer name of MEMORY deliver again from
// stream sequence seq, or, with seq 0, from time from: it is deleted and
// created again with its configuration, starting there. Its worker must
// be stopped meanwhile (it resumes from there when it starts); a read
// model's projector is rebuilt, not replayed.
func ReplayFrom(ctx context.Context, js jetstream.JetStream, name string, seq uint64, from time.Time) error {
	c, err := js.Consumer(ctx, MemoryStream, name)
	if err != nil {
		return fmt.Errorf("replay %s: %w", name, err)
	}
	cfg := c.CachedInfo().Config
	if cfg.Durable == "" {
		return fmt.Errorf("replay %s: not a durable consumer", name)
	}
	if seq > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq, cfg.OptStartTime = jetstream.DeliverByStartSequencePolicy, seq, nil
	} else {
		from := from.UTC()
		cfg.DeliverPolicy, cfg.OptStartSeq, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, 0, &from
	}
	if err := js.DeleteConsumer(ctx, MemoryStream, name); err != nil {
		return fmt.Errorf("replay %s: %w", name, err)
	}
	if _, err := js.CreateConsumer(ctx, MemoryStream, cfg); err != nil {
		return fmt.Errorf("replay %s: recreate (its old configuration: %+v): %w", name, cfg, err)
	}
	return nil
}
