package extraction

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"go.uber.org/zap"
)

// Request reasons.
const (
	ReasonQuiet       = "quiet"
	ReasonTokenCap    = "token_cap"
	ReasonCompressing = "compressing"
	ReasonEnded       = "session_ended"
	ReasonSweep       = "sweep"
)

type sessionKey struct {
	scope   memory.Scope
	session string
}

type pending struct {
	turns map[int]events.ExtractionTurn
	// seqs are the stream sequences of the events the turns came in (0
	// for turns recovered from the read model).
	seqs    map[int]uint64
	tokens  int
	last    time.Time // wall clock of the last turn seen, for the quiet gap
	agent   string
	summary string
	// gap and tokenCap are the thresholds in force for the session's last
	// turn; 0 means that trigger is off.
	gap      time.Duration
	tokenCap int
	// unsure are requests of the session whose publish failed. A publish
	// can fail after JetStream stored it (the acknowledgement lost with a
	// node, a leader that moved), so they are sent again as they were,
	// under the same ids, before anything new of the session: stored
	// already, they are stored once; never stored, they are now. Asked
	// for again with the turns that came since, they would be new
	// requests, and the turns of the first would be extracted twice.
	unsure []memory.Outgoing
}

// HandledTurns reads which turns of a session need no request, each
// with the stream sequence of the version handled (math.MaxUint64 for a
// request on its way): requests made before since that have no result
// are not waited for any more.
type HandledTurns func(ctx context.Context, scope memory.Scope, session string, since time.Time) (map[int]uint64, error)

// RequestPatience is how long an extraction request with no result
// counts as on its way: far longer than an extractor's tries of it take.
const RequestPatience = time.Hour

// Batcher decides when a session's turns are extracted.
type Batcher struct {
	cfg  Config
	emit memory.Emitter
	log  *zap.Logger
	// Rules, when set, are the batcher's triggers (see triggers.go): the
	// quiet gap and token cap of the extract_now rules on turn.recorded,
	// and the extract_now rules on context.compressing and session.ended.
	// The daily sweep is then a scheduled rule the consolidator runs. nil
	// keeps cfg's fixed triggers. Set it before the first Handle or Run.
	Rules func() *rules.Set
	// Handled, when set, is the read model: a turn it has as extracted, or
	// in a request still on its way, is not requested again. A partition
	// taken over (or a process restarted) gets again what the holder
	// before had handled and not acknowledged, its session's end
	// included; without this, the turns it had requested would be
	// requested twice.
	Handled HandledTurns
	// Read, when set, reads the recorded turns of each batch of the
	// consumer as they arrive (Extractor.ReadTurns), before they join
	// their sessions' batches. Its error fails those turns' deliveries,
	// so the readings are tried again; their ids make a retry one event.
	Read func(ctx context.Context, turns []memory.Applied) error

	mu       sync.Mutex
	sessions map[sessionKey]*pending
	// requested remembers turns already requested, so a redelivered turn
	// or a compression snapshot does not ask twice.
	requested map[sessionKey]map[int]bool
	// ended are sessions whose end was extracted, with the reason, for
	// endedFor: a turn of one that comes after its end (delivered again
	// after a NATS node died with its first delivery) is requested at
	// once, not left waiting for a quiet gap, and one already requested is
	// not requested again.
	ended  map[sessionKey]endedSession
	pruned time.Time // when ended was last rid of what is older than endedFor
	// recovered is set by Recover: Run then does not recover again.
	recovered bool
}

type endedSession struct {
	at     time.Time
	seq    uint64 // of the session.ended event
	reason string
}

// endedFor is how long a session's end is remembered: far longer than
// JetStream takes to deliver again what a dead node had delivered.
const endedFor = time.Hour

// NewBatcher returns a Batcher that publishes requests with emit.
func NewBatcher(cfg Config, emit memory.Emitter, log *zap.Logger) *Batcher {
	return &Batcher{cfg: cfg, emit: emit, log: log, sessions: map[sessionKey]*pending{}, requested: map[sessionKey]map[int]bool{},
		ended: map[sessionKey]endedSession{}}
}

// Handle takes the events of the batcher's consumer in stream order.
func (b *Batcher) Handle(ctx context.Context, batch []memory.Applied) []error {
	errs := make([]error, len(batch))
	if b.Read != nil {
		var turns []memory.Applied
		var at []int
		for i, a := range batch {
			if _, ok := a.Data.(*events.TurnRecorded); ok {
				turns, at = append(turns, a), append(at, i)
			}
		}
		if len(turns) > 0 {
			if err := b.Read(ctx, turns); err != nil {
				err = fmt.Errorf("read %d turns as they arrived: %w", len(turns), err)
				for _, i := range at {
					errs[i] = err
				}
			}
		}
	}
	for i, a := range batch {
		if errs[i] == nil {
			errs[i] = b.handle(ctx, a)
		}
	}
	return errs
}

func (b *Batcher) handle(ctx context.Context, a memory.Applied) error {
	switch d := a.Data.(type) {
	case *events.TurnRecorded:
		key := sessionKey{a.Scope, d.SessionID}
		gap, tokenCap := b.thresholds(a)
		full := b.add(key, a.Agent, snapshot(d, a.Time), a.Seq, gap, tokenCap)
		b.mu.Lock()
		end, ended := b.ended[key]
		late := ended && a.Seq < end.seq
		if ended && !late {
			// The session goes on after its end: batched as any other.
			delete(b.ended, key)
		}
		b.mu.Unlock()
		switch {
		case late:
			return b.flush(ctx, key, end.reason)
		case full:
			return b.flush(ctx, key, ReasonTokenCap)
		}
	case *events.ContextCompressing:
		// What leaves the agent's window is extracted now (when a rule
		// says so), with whatever of the session was still waiting.
		key := sessionKey{a.Scope, d.SessionID}
		for _, t := range d.Turns {
			gap, tokenCap := b.thresholds(asTurn(a, &t))
			// Sequence 0: a snapshot never replaces a turn recorded in the
			// read model, so any version of it handled there will do.
			b.add(key, a.Agent, snapshot(&t, a.Time), 0, gap, tokenCap)
		}
		b.mu.Lock()
		if p := b.sessions[key]; p != nil {
			p.summary = d.Summary
		}
		b.mu.Unlock()
		if reason, ok := b.extractNow(a, key, 0, ReasonCompressing); ok {
			return b.flush(ctx, key, reason)
		}
	case *events.SessionEnded:
		key := sessionKey{a.Scope, d.SessionID}
		reason, ok := b.extractNow(a, key, d.MessageCount, ReasonEnded)
		if ok {
			if err := b.flush(ctx, key, reason); err != nil {
				return err
			}
			b.mu.Lock()
			b.ended[key] = endedSession{at: time.Now(), seq: a.Seq, reason: reason}
			b.mu.Unlock()
		}
		// No rule extracts this session now: its turns wait for the
		// quiet gap or the sweep, and what is requested of it is kept.
	case *events.ExtractionRequested:
		// A request from elsewhere (a scheduled extract_now, a confirmed
		// rule): its turns are no longer waiting here.
		b.forget(sessionKey{a.Scope, d.SessionID}, d.Turns)
	case *events.UserForgotten:
		// The user was erased: their waiting turns must not come back in
		// an extraction request.
		b.mu.Lock()
		for key := range b.sessions {
			if key.scope == a.Scope {
				delete(b.sessions, key)
			}
		}
		for key := range b.requested {
			if key.scope == a.Scope {
				delete(b.requested, key)
			}
		}
		for key := range b.ended {
			if key.scope == a.Scope {
				delete(b.ended, key)
			}
		}
		b.mu.Unlock()
	}
	return nil
}

func snapshot(d *events.TurnRecorded, at time.Time) events.ExtractionTurn {
	return events.ExtractionTurn{TurnIndex: d.TurnIndex, Role: d.Role, Content: d.Content,
		ToolCalls: d.ToolCalls, ToolResults: d.ToolResults, Time: at, Project: d.Project, Channel: d.Channel}
}

// add records a turn as waiting and reports whether its session passed the
// token cap.
func (b *Batcher) add(key sessionKey, agent string, t events.ExtractionTurn, seq uint64, gap time.Duration, tokenCap int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.requested[key][t.TurnIndex] {
		return false
	}
	p := b.sessions[key]
	if p == nil {
		p = &pending{turns: map[int]events.ExtractionTurn{}, seqs: map[int]uint64{}}
		b.sessions[key] = p
	}
	p.seqs[t.TurnIndex] = seq
	if old, ok := p.turns[t.TurnIndex]; ok {
		p.tokens -= turnTokens(old)
		if seq == 0 && !old.Time.IsZero() && old.Time.Before(t.Time) {
			// A compression snapshot is dated when the agent compressed;
			// the turn was said when it was recorded, and that time
			// decides which version of a fact it states is current.
			t.Time = old.Time
		}
	}
	p.turns[t.TurnIndex] = t
	p.tokens += turnTokens(t)
	p.last = time.Now()
	p.agent = agent
	p.gap, p.tokenCap = gap, tokenCap
	return p.tokenCap > 0 && p.tokens >= p.tokenCap
}

func turnTokens(t events.ExtractionTurn) int {
	n := memory.EstimateTokens(t.Content)
	for _, c := range t.ToolCalls {
		n += memory.EstimateTokens(c.Name) + min(len(c.Input)/4, 64)
	}
	for _, r := range t.ToolResults {
		n += min(memory.EstimateTokens(r.Content), 64)
	}
	return n
}

// flush publishes the session's waiting turns as extraction requests and
// forgets them. If publishing fails they stay, and the error is returned.
func (b *Batcher) flush(ctx context.Context, key sessionKey, reason string) error {
	b.mu.Lock()
	p := b.sessions[key]
	if p == nil || len(p.turns) == 0 {
		delete(b.sessions, key)
		b.mu.Unlock()
		return nil
	}
	unsure := p.unsure
	sent := map[int]bool{}
	for _, o := range unsure {
		for _, t := range o.Data.(*events.ExtractionRequested).Turns {
			sent[t.TurnIndex] = true
		}
	}
	turns := make([]events.ExtractionTurn, 0, len(p.turns))
	for _, t := range p.turns {
		if !sent[t.TurnIndex] {
			turns = append(turns, t)
		}
	}
	agent, summary := p.agent, p.summary
	seqs := maps.Clone(p.seqs)
	b.mu.Unlock()

	if len(unsure) > 0 {
		if err := b.emit(ctx, unsure...); err != nil {
			return fmt.Errorf("request extraction of session %q again (%d requests): %w", key.session, len(unsure), err)
		}
		b.mu.Lock()
		if p := b.sessions[key]; p != nil {
			p.unsure = nil
		}
		b.mu.Unlock()
		b.requestedAll(key, unsure)
	}
	if b.Handled != nil && len(turns) > 0 {
		handled, err := b.Handled(ctx, key.scope, key.session, time.Now().Add(-RequestPatience))
		if err != nil {
			return fmt.Errorf("request extraction of session %q: %w", key.session, err)
		}
		var done []events.ExtractionTurn
		turns = slices.DeleteFunc(turns, func(t events.ExtractionTurn) bool {
			// Handled as this version of the turn, or a later one: an edit
			// the read model has not applied yet is still asked for.
			if at, ok := handled[t.TurnIndex]; ok && at >= seqs[t.TurnIndex] {
				done = append(done, t)
				return true
			}
			return false
		})
		b.forget(key, done)
	}
	sort.Slice(turns, func(i, j int) bool { return turns[i].TurnIndex < turns[j].TurnIndex })
	var out []memory.Outgoing
	for start := 0; start < len(turns); start += b.cfg.MaxTurns {
		chunk := turns[start:min(start+b.cfg.MaxTurns, len(turns))]
		req := &events.ExtractionRequested{RequestID: RequestID(key.scope, key.session, chunk),
			SessionID: key.session, Reason: reason, Turns: chunk, Summary: summary}
		out = append(out, memory.Outgoing{Type: events.TypeExtractionRequested, ID: req.RequestID,
			Scope: key.scope, Agent: agent, Time: time.Now().UTC(), Data: req})
	}
	if len(out) > 0 {
		if err := b.emit(ctx, out...); err != nil {
			b.mu.Lock()
			if p := b.sessions[key]; p != nil {
				p.unsure = out
			}
			b.mu.Unlock()
			return fmt.Errorf("request extraction of %d turns of session %q: %w", len(turns), key.session, err)
		}
		b.requestedAll(key, out)
	}
	b.log.Debug("extraction requested", zap.String("reason", reason), zap.Int("turns", len(turns)),
		zap.Int("requests", len(out)), zap.Int("sent_again", len(unsure)))
	return nil
}

// requestedAll forgets the turns of requests published.
func (b *Batcher) requestedAll(key sessionKey, reqs []memory.Outgoing) {
	for _, o := range reqs {
		b.forget(key, o.Data.(*events.ExtractionRequested).Turns)
	}
}

// forget marks turns as requested: they stop waiting, and a redelivered
// copy does not ask again.
func (b *Batcher) forget(key sessionKey, turns []events.ExtractionTurn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	done := b.requested[key]
	if done == nil {
		done = map[int]bool{}
		b.requested[key] = done
	}
	cur := b.sessions[key]
	for _, t := range turns {
		done[t.TurnIndex] = true
		if cur != nil {
			if old, ok := cur.turns[t.TurnIndex]; ok {
				cur.tokens -= turnTokens(old)
				delete(cur.turns, t.TurnIndex)
				delete(cur.seqs, t.TurnIndex)
			}
		}
	}
	if cur != nil && len(cur.turns) == 0 {
		delete(b.sessions, key)
	}
}

// RequestID names a request by what it covers (extractreq.RequestID).
func RequestID(scope memory.Scope, session string, turns []events.ExtractionTurn) string {
	return extractreq.RequestID(scope, session, turns)
}

// Run flushes quiet sessions every Tick and runs the daily sweep, until
// ctx is done. source, when not nil, is read at start for turns that were
// waiting when the process stopped, and by the sweep.
func (b *Batcher) Run(ctx context.Context, source memory.TurnSource) error {
	b.mu.Lock()
	recovered := b.recovered
	b.mu.Unlock()
	if source != nil && !recovered {
		b.Recover(ctx, source)
	}
	tick := time.NewTicker(b.cfg.Tick)
	defer tick.Stop()
	sweep := time.NewTimer(time.Until(nextAt(time.Now(), b.cfg.SweepAt)))
	defer sweep.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			b.flushQuiet(ctx)
		case <-sweep.C:
			if b.Rules == nil {
				if source != nil {
					if err := b.recover(ctx, source, time.Now()); err != nil {
						b.log.Warn("sweep", zap.Error(err))
					}
				}
				b.flushAll(ctx, ReasonSweep)
			}
			// With rules, the sweep is a scheduled extract_now. The read
			// model, not these maps, knows what is extracted; this is
			// where their memory is given back.
			b.mu.Lock()
			b.requested = map[sessionKey]map[int]bool{}
			b.ended = map[sessionKey]endedSession{}
			b.dropIdle(time.Now())
			b.mu.Unlock()
			sweep.Reset(time.Until(nextAt(time.Now(), b.cfg.SweepAt)))
		}
	}
}

// idleFor is how long a session no quiet rule will extract is held
// before the batcher forgets it; its turns stay unextracted in the read
// model, for a scheduled extract_now or the next start.
const idleFor = 24 * time.Hour

// dropIdle forgets sessions no trigger is left to extract. b.mu is held.
func (b *Batcher) dropIdle(now time.Time) {
	for k, p := range b.sessions {
		if p.gap == 0 && now.Sub(p.last) >= idleFor {
			delete(b.sessions, k)
		}
	}
}

func (b *Batcher) flushQuiet(ctx context.Context) {
	now := time.Now()
	b.mu.Lock()
	if now.Sub(b.pruned) >= time.Minute {
		b.pruned = now
		for k, e := range b.ended {
			if now.Sub(e.at) >= endedFor {
				delete(b.ended, k)
				delete(b.requested, k)
			}
		}
	}
	var quiet []sessionKey
	for k, p := range b.sessions {
		if p.gap > 0 && now.Sub(p.last) >= p.gap {
			quiet = append(quiet, k)
		}
	}
	b.mu.Unlock()
	for _, k := range quiet {
		if err := b.safeFlush(ctx, k, ReasonQuiet); err != nil {
			b.log.Warn("flush quiet session", zap.Error(err))
		}
	}
}

// safeFlush is flush for Run's timers, which have no message to fail: a
// panic is that session's flush failing (it stays waiting, for the next
// tick), not the end of the loop.
func (b *Batcher) safeFlush(ctx context.Context, key sessionKey, reason string) error {
	return memory.Recovered(func() error { return b.flush(ctx, key, reason) })
}

func (b *Batcher) flushAll(ctx context.Context, reason string) {
	b.mu.Lock()
	keys := make([]sessionKey, 0, len(b.sessions))
	for k := range b.sessions {
		keys = append(keys, k)
	}
	b.mu.Unlock()
	for _, k := range keys {
		if err := b.safeFlush(ctx, k, reason); err != nil {
			b.log.Warn("flush", zap.String("reason", reason), zap.Error(err))
		}
	}
}

// Recover takes the turns source still has as unextracted, as Run does
// at its start: called before the first Handle, a session's end handled
// next finds its turns waiting.
func (b *Batcher) Recover(ctx context.Context, source memory.TurnSource) {
	if err := b.recover(ctx, source, time.Now()); err != nil {
		b.log.Warn("recover unextracted turns", zap.Error(err))
	}
	b.mu.Lock()
	b.recovered = true
	b.mu.Unlock()
}

// recover loads turns the read model still has as unextracted, as if they
// had just arrived: they are requested after the quiet gap.
func (b *Batcher) recover(ctx context.Context, source memory.TurnSource, before time.Time) error {
	turns, err := source.Unextracted(ctx, before, 100000)
	if err != nil {
		return err
	}
	for _, t := range turns {
		et := extractreq.Turn(t)
		gap, tokenCap := b.thresholds(recoveredTurn(t, et))
		b.add(sessionKey{t.Scope, t.SessionID}, t.Agent, et, 0, gap, tokenCap)
	}
	if len(turns) > 0 {
		b.log.Info("unextracted turns waiting", zap.Int("turns", len(turns)))
	}
	return nil
}

// Reextract is the extraction requests (reason manual) that ask for the
// stored turns to be extracted again, with whatever model is configured
// now: one per session and MaxTurns turns, under ids of this generation
// (a run's own name), so they are new events and their results are new
// memories, which merge with or supersede the old ones, with history.
func Reextract(turns []memory.Turn, generation string, maxTurns int, now time.Time) []memory.Outgoing {
	return extractreq.Requests(turns, events.ReasonManual, "reextract-"+generation+"-", maxTurns, now)
}
