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

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
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
	// created is the configuration the consumer was created with, to
	// create it again if it is deleted under a running worker, and
	// streamCreated when its stream was (zero if unknown): a consumer
	// deleted with its stream is not made again on another stream of the
	// same name.
	created       jetstream.ConsumerConfig
	streamCreated time.Time
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
	c := &Consumer{js: js, cfg: cfg, log: log.With(zap.String(FieldConsumer, cfg.Durable)), cons: cons, created: cc}
	if s, err := js.Stream(ctx, cfg.Stream); err == nil {
		c.streamCreated = s.CachedInfo().Created
	}
	return c, nil
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
	// lost is told when the consumer may have been deleted under this
	// worker: JetStream says so to a waiting pull, and a pull made after
	// it finds no responder or no heartbeat.
	lost := make(chan struct{}, 1)
	onMsg := func(m jetstream.Msg) {
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
	}
	consume := func() (jetstream.ConsumeContext, error) {
		return c.cons.Consume(onMsg, jetstream.PullMaxMessages(c.cfg.Pull),
			// Short pulls: a pull lost while JetStream was off (a full disk,
			// healed without a restart) is noticed by its missing heartbeat
			// and asked again within seconds, not half a minute.
			jetstream.PullExpiry(5*time.Second), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
				if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrNoHeartbeat) ||
					errors.Is(err, nats.ErrNoResponders) {
					select {
					case lost <- struct{}{}:
					default:
					}
				}
				if !errors.Is(err, jetstream.ErrNoHeartbeat) {
					c.log.Warn("consume", zap.Error(err))
				}
			}))
	}
	cc, err := consume()
	if err != nil {
		return fmt.Errorf("consume %s: %w", c.cfg.Durable, err)
	}
	defer func() { cc.Stop() }()
	// rebind consumes again when the consumer is gone: a worker whose
	// consumer was deleted would otherwise wait for ever, having logged
	// one warning.
	rebind := func() error {
		if _, err := c.js.Consumer(ctx, c.cfg.Stream, c.cfg.Durable); !errors.Is(err, jetstream.ErrConsumerNotFound) {
			select {
			case <-cc.Closed():
			default:
				return nil // still there, still consumed: a pull lost in passing
			}
		}
		cc.Stop()
		err := c.bindAgain(ctx)
		if errors.Is(err, errStreamChanged) {
			// The stream was deleted or made again: not this worker's to
			// follow. The read model's origin check reports it (and stops
			// the projector), engram streams status says what changed,
			// and a restart takes it up after engram streams apply or
			// accept.
			c.log.Error("the stream was deleted or made again under this worker; it waits to be stopped", zap.Error(err))
			<-ctx.Done()
			return nil
		}
		if ctx.Err() != nil {
			return nil //nolint:nilerr // stopping: what failed while the context ended is not an error
		}
		if err != nil {
			return err
		}
		next, err := consume()
		if err != nil {
			return fmt.Errorf("consume %s again: %w", c.cfg.Durable, err)
		}
		cc = next
		return nil
	}
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
		case <-lost:
			if err := rebind(); err != nil {
				return err
			}
			continue
		case <-cc.Closed():
			if ctx.Err() != nil {
				return nil
			}
			if err := rebind(); err != nil {
				return err
			}
			continue
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

// bindAgain finds the consumer again after it was deleted under a running
// worker. A replay deletes it and at once creates it again starting
// elsewhere: a moment is given for that, and the worker goes on from
// where the replay set it. Deleted and not made again (nats consumer rm),
// it is created as it was at start, as a restart would.
func (c *Consumer) bindAgain(ctx context.Context) error {
	if err := c.sameStream(ctx); err != nil {
		return err
	}
	for wait := time.Now().Add(2 * time.Second); ; {
		cons, err := c.js.Consumer(ctx, c.cfg.Stream, c.cfg.Durable)
		if err == nil {
			c.cons = cons
			c.log.Warn("the consumer was deleted and made again under this worker (engram replay?): consuming it from where it now starts")
			return nil
		}
		if !errors.Is(err, jetstream.ErrConsumerNotFound) || time.Now().After(wait) {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := c.sameStream(ctx); err != nil {
		return err
	}
	cons, err := c.js.CreateOrUpdateConsumer(ctx, c.cfg.Stream, c.created)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("%w: %v", errStreamChanged, err)
	}
	if err != nil {
		return fmt.Errorf("create consumer %s again after it was deleted: %w", c.cfg.Durable, err)
	}
	c.cons = cons
	c.log.Warn("the consumer was deleted under this worker: created again as at start")
	return nil
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

// errStreamChanged is a consumer's stream deleted, or made again, under
// its worker.
var errStreamChanged = errors.New("the stream is gone or is another one")

// sameStream returns nil while the consumer's stream is the one it was
// created on, errStreamChanged when it is gone or was made again; it
// waits out a JetStream that does not answer.
func (c *Consumer) sameStream(ctx context.Context) error {
	for {
		s, err := c.js.Stream(ctx, c.cfg.Stream)
		switch {
		case err == nil && (c.streamCreated.IsZero() || s.CachedInfo().Created.Equal(c.streamCreated)):
			return nil
		case err == nil:
			return fmt.Errorf("%w: %s was created %s, the consumer's at %s", errStreamChanged, c.cfg.Stream,
				s.CachedInfo().Created.UTC().Format(time.RFC3339Nano), c.streamCreated.UTC().Format(time.RFC3339Nano))
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return fmt.Errorf("%w: %v", errStreamChanged, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
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
	e, data, err := Decode(m.Subject(), m.Headers(), m.Data(), maxBytes)
	if err != nil {
		return msg, fmt.Errorf("decode: %w", err)
	}
	msg.Event, msg.Data = e, data
	return msg, nil
}

// Fate is what becomes of a message after its handler returned.
type Fate int

const (
	FateAck        Fate = iota // handled: acknowledged
	FateRetry                  // nak'ed, redelivered after a delay
	FateDeadLetter             // copied to DEADLETTER with the reason, then terminated
)

func (f Fate) String() string { return [...]string{"ack", "retry", "dead letter"}[f] }

// Decide is the one table of a message's fate, read from the code its
// handler's error carries (memory.ErrorCode). Handlers only return errors;
// none retries or dead-letters on its own.
//
//	error                                 fate
//	none                                  FateAck
//	EINVALID, ETOOLARGE                   FateDeadLetter at once: the event itself is wrong, and every try meets the same
//	any other, and out of deliveries      FateDeadLetter
//	any other: EUNAVAILABLE, EINTERNAL,   FateRetry after Backoff(delivered), or after the error's
//	a panic, an error without a code      memory.RetryError (a 429's Retry-After) when that is later
//
// A code the table does not name (ENOTFOUND, ECONFLICT, …) is retried: a
// needless retry costs a few seconds, a needless dead letter an
// operator's redrive.
func Decide(err error, delivered, maxDeliver int) Fate {
	switch {
	case err == nil:
		return FateAck
	case delivered >= maxDeliver:
		return FateDeadLetter
	}
	switch memory.ErrorCode(err) {
	case memory.EINVALID, memory.ETOOLARGE:
		return FateDeadLetter
	}
	return FateRetry
}

// decide settles m as Decide says.
func (c *Consumer) decide(ctx context.Context, m *Message, err error) {
	switch Decide(err, m.Delivered, c.cfg.MaxDeliver) {
	case FateAck:
		if aerr := m.msg.Ack(); aerr != nil {
			c.log.Warn("ack", zap.Uint64(FieldSeq, m.Seq), zap.Error(aerr))
		}
	case FateDeadLetter:
		c.deadLetter(ctx, m, err)
	case FateRetry:
		delay := c.cfg.Backoff(m.Delivered)
		if after, ok := memory.RetryAfterOf(err); ok {
			delay = max(after, delay)
		}
		c.nak(m, delay, err)
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
	dl.Header.Set(HeaderDLQReason, chars.ClipBytes(reason.Error(), 1024))
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
		zap.String(FieldReason, chars.ClipBytes(reason.Error(), 200)))
	if err := m.msg.TermWithReason(chars.ClipBytes(reason.Error(), 200)); err != nil {
		c.log.Warn("term", zap.Uint64(FieldSeq, m.Seq), zap.Error(err))
	}
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

// Redriven reports whether the message was sent back from the dead
// letters (engram dlq redrive).
func (m *Message) Redriven() bool {
	return m != nil && m.msg != nil && m.msg.Headers().Get(HeaderRedrivenFrom) != ""
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
// be stopped meanwhile (it resumes from there when it starts; app.Replay
// refuses while one runs); a read model's projector is rebuilt, not
// replayed.
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
