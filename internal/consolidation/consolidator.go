package consolidation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/engramhq/engram/internal/dedupe"
	"github.com/engramhq/engram/internal/episode"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"github.com/engramhq/engram/internal/secrets"
	"go.uber.org/zap"
)

// Source is the CloudEvents source of what the consolidator publishes.
const Source = "engram/consolidator"

// Store is the read model as the consolidator reads it; *sqlite.Store is
// one. Every method but Scopes and LastSeq is confined to one scope.
type Store interface {
	// LastSeq is the stream sequence the read model has applied.
	LastSeq(ctx context.Context) (uint64, error)
	Scopes(ctx context.Context) ([]memory.Scope, error)
	SessionTurns(ctx context.Context, scope memory.Scope, session string) ([]memory.Turn, error)
	UnconsolidatedSessions(ctx context.Context, scope memory.Scope, before time.Time, minTurns, limit int) ([]string, error)
	SessionMemoryIDs(ctx context.Context, scope memory.Scope, session string, limit int) ([]string, error)
	ActiveMemories(ctx context.Context, scope memory.Scope) ([]memory.Memory, error)
	CoreMemories(ctx context.Context, scope memory.Scope) ([]memory.Memory, error)
	Scratchpad(ctx context.Context, scope memory.Scope) (memory.Scratchpad, error)
	Episodes(ctx context.Context, scope memory.Scope, session string, limit int) ([]memory.Episode, error)
	EpisodesEnded(ctx context.Context, scope memory.Scope, from, to time.Time) ([]memory.Episode, error)
	DailySummaries(ctx context.Context, scope memory.Scope, date string) ([]memory.DailySummary, error)
	// Identity is what the user confirmed on first meeting the agent; ok
	// is false before they have.
	Identity(ctx context.Context, scope memory.Scope) (id memory.Identity, ok bool, err error)
	// Changes counts what changed for a user from since to until (the
	// nightly report's figures; Text and Traits left empty).
	Changes(ctx context.Context, scope memory.Scope, since, until time.Time) (memory.Report, error)
	// Unextracted is every user's turns not extracted yet, recorded
	// before a time, oldest first (memory.TurnSource).
	Unextracted(ctx context.Context, before time.Time, limit int) ([]memory.Turn, error)
}

// Consolidator runs the rules. New sets the defaults; set the optional
// fields before the first Handle or Run.
type Consolidator struct {
	Emit memory.Emitter
	// Store is the read model; nil when the consolidator runs apart.
	Store Store
	// Rules returns the rules in force (a rules.Watcher's Current); nil
	// or a nil Set means none.
	Rules func() *rules.Set
	// Head returns the stream's last sequence, so a scheduled job first
	// waits for the read model to apply what came before it (the merges
	// of the rule before, say); nil does not wait.
	Head func(ctx context.Context) (uint64, error)
	// Queue, when set, keeps the confirm queue (see Pending); Trigger then
	// reads a stored firing's triggering event again by its sequence.
	Queue   PendingStore
	Trigger func(ctx context.Context, seq uint64) (*memory.Applied, error)
	// Claim, when set, is asked before a scheduled firing runs: false
	// means another instance runs it, and this one skips it. nil runs
	// every firing.
	Claim func(ctx context.Context, f rules.Firing) bool

	// Episodes writes episodes and scratchpads with a model; nil (or a
	// nil Client) writes them extractively. A model's failure falls back
	// to the extractive version.
	Episodes *episode.Builder
	// Rewriter rewrites merged memories with a model; a nil Client keeps
	// the kept memory's wording.
	Rewriter dedupe.Rewriter
	// Judge, with a Client, decides inside loose dedupe clusters which
	// memories are one fact (seed 000 §5.7), and words their merge.
	Judge dedupe.Judge
	// Model writes the day summaries of compress_daily and chooses the
	// core profile of refresh_profile; nil keeps each day's log as
	// written and the profile maintain.CoreProfile chooses, as does a
	// failed call.
	Model *llm.Client
	// Mask hides secrets before turns reach an episode; nil leaves them.
	Mask *secrets.Masker

	// CardsDir is where MEMORY.md and USER.md are written, one directory
	// per namespace and user; "" writes none.
	CardsDir string
	// CardsDelay is how long after the last change to a user's episodes,
	// scratchpad or memories their cards are rendered (debounce).
	CardsDelay time.Duration
	// CardsPoll is how often the cards dir is looked at for MEMORY.md
	// files a person edited (their edits become memory events); ≤ 0
	// looks only when a card is rendered anyway.
	CardsPoll time.Duration
	// CardsLease, when set, makes the cards one instance's to write: this
	// one renders and reads them back only while it holds the cards
	// (HoldCards), so consolidators run apart keep one set of cards, and
	// a person's edit is read back once. Unset, it always does.
	CardsLease bool
	// CatchUp bounds how long an action waits for the read model to
	// apply the event that triggered it.
	CatchUp time.Duration
	// SweepQuiet is how long a session must have been silent for the
	// daily sweep to tell it as an episode.
	SweepQuiet time.Duration

	Log *zap.Logger

	mu      sync.Mutex
	pending []*Pending
	decided map[string]bool                    // firings approved or dismissed, when the queue is in memory
	pads    map[memory.Scope]memory.Scratchpad // the last scratchpad written per user
	cards   map[memory.Scope]cardsDue
	// cardsMu serializes renders, so an edit is imported once; it also
	// guards cardsHeld, so no render runs once the cards are given up.
	cardsMu   sync.Mutex
	cardsHeld bool
	// cardStat is each MEMORY.md's size and time as last seen by the poll.
	cardStat map[string]cardStat
	wake     chan struct{}
}

// Defaults of a Consolidator's tunables.
const (
	DefaultCardsDelay = 2 * time.Second
	DefaultCardsPoll  = 2 * time.Second
	DefaultCatchUp    = 30 * time.Second
	DefaultSweepQuiet = time.Hour
	// MinSessionTurns is the smallest session the sweep tells as an
	// episode (seed 002 §6.1: 3 messages).
	MinSessionTurns = 3
	// maxPending bounds the confirm queue; the oldest firing is dropped.
	maxPending = 1000
	// maxDecided bounds the decided firings an in-memory queue remembers.
	maxDecided = 10000
)

// New returns a Consolidator with the defaults.
func New(emit memory.Emitter, store Store, current func() *rules.Set, log *zap.Logger) *Consolidator {
	if log == nil {
		log = zap.NewNop()
	}
	return &Consolidator{Emit: emit, Store: store, Rules: current, Log: log,
		CardsDelay: DefaultCardsDelay, CardsPoll: DefaultCardsPoll, CatchUp: DefaultCatchUp, SweepQuiet: DefaultSweepQuiet}
}

// Log field keys.
const (
	fieldRule   = "rule"
	fieldAction = "action"
	fieldEvent  = "event"
	fieldUser   = "user"
)

// run is one rule firing: the event that triggered it (nil for a
// schedule), its time, and what its earlier actions produced for the later
// ones.
type run struct {
	rule     rules.Rule
	trigger  *memory.Applied
	at       time.Time
	episodes map[memory.Scope][]memory.Episode
	caughtUp bool
}

// Handle runs the rules an event fires. An error a retry may cure (the
// read model lagging, the stream unavailable) is returned, and the event
// comes back: every action publishes under deterministic ids, so running a
// rule again makes no second copy. An action no retry can fix is logged
// and skipped, so one bad rule never holds the stream back.
func (c *Consolidator) Handle(ctx context.Context, a memory.Applied) error {
	c.noteCards(a)
	set := c.rules()
	triggered := false
	for i := range set.Rules {
		if set.Rules[i].Triggers(a.Type) {
			triggered = true
			break
		}
	}
	if !triggered {
		return nil
	}
	ev, err := ruleEvent(a)
	if err != nil {
		return memory.Errorf(memory.EINVALID, "rules cannot read %s %s: %v", a.Type, a.ID, err)
	}
	for _, r := range set.Match(ev) {
		if r.Mode == rules.ModeConfirm {
			c.ask(r, &a, a.Time)
			continue
		}
		if err := c.runRule(ctx, r, &a, a.Time); err != nil {
			return fmt.Errorf("rule %s on %s %s: %w", r.Name, a.Type, a.ID, err)
		}
	}
	return nil
}

func (c *Consolidator) rules() *rules.Set {
	if c.Rules != nil {
		if s := c.Rules(); s != nil {
			return s
		}
	}
	return &rules.Set{}
}

// ruleEvent is what the rules see of an applied event.
func ruleEvent(a memory.Applied) (rules.Event, error) { return extractreq.RuleEvent(a) }

// runRule runs a rule's actions in order. It stops at the first error a
// retry may cure and returns it; an action that can never succeed is
// logged and the next one runs.
func (c *Consolidator) runRule(ctx context.Context, rule rules.Rule, trigger *memory.Applied, at time.Time) error {
	r := &run{rule: rule, trigger: trigger, at: at, episodes: map[memory.Scope][]memory.Episode{}}
	for _, act := range rule.Do {
		err := c.act(ctx, r, act)
		if err == nil {
			continue
		}
		if ctx.Err() != nil || !permanent(err) {
			return fmt.Errorf("%s: %w", act.Type, err)
		}
		fields := []zap.Field{zap.String(fieldRule, rule.Name), zap.String("at", rule.Pos()),
			zap.String(fieldAction, act.Type), zap.Error(err)}
		if trigger != nil {
			fields = append(fields, zap.String(fieldEvent, trigger.ID))
		}
		c.Log.Error("rule action failed; skipped", fields...)
	}
	return nil
}

func permanent(err error) bool { return memory.ErrorCode(err) == memory.EINVALID }

func (c *Consolidator) act(ctx context.Context, r *run, a rules.Action) error {
	switch a.Type {
	case rules.ActBuildEpisode:
		return c.buildEpisodes(ctx, r, a)
	case rules.ActUpdateScratchpad:
		return c.updateScratchpad(ctx, r, a)
	case rules.ActExtractNow:
		return c.extractNow(ctx, r, a)
	case rules.ActCompressDaily:
		return c.perScope(ctx, r, a, c.compressDaily)
	case rules.ActDedupe:
		return c.perScope(ctx, r, a, c.dedupe)
	case rules.ActRefreshProfile:
		return c.perScope(ctx, r, a, c.refreshProfile)
	case rules.ActDecay:
		return nil // see the package doc: scores are computed where used
	case rules.ActArchive:
		return c.perScope(ctx, r, a, c.archive)
	case rules.ActExpire:
		return c.perScope(ctx, r, a, c.expire)
	case rules.ActEnforceCap:
		return c.perScope(ctx, r, a, c.enforceCap)
	case rules.ActRenderCards:
		return c.perScope(ctx, r, a, c.renderCardsAction)
	case rules.ActCompact:
		return c.compact(ctx, r, a)
	case rules.ActReport:
		return c.perScope(ctx, r, a, c.report)
	case rules.ActPublish:
		return c.publish(ctx, r, a)
	}
	return memory.Errorf(memory.EINVALID, "unknown action %q", a.Type)
}

// errNoStore is the reason an action that needs the read model is skipped
// by a consolidator running apart.
var errNoStore = errors.New("no read model in this process")

// needStore reports whether the action can run, warning once per firing
// when it cannot.
func (c *Consolidator) needStore(r *run, action string) bool {
	if c.Store != nil {
		return true
	}
	c.Log.Warn("action skipped: it needs the read model, which a consolidator running apart does not keep",
		zap.String(fieldRule, r.rule.Name), zap.String(fieldAction, action), zap.NamedError("reason", errNoStore))
	return false
}

// catchUp waits until the read model has applied the triggering event,
// so that what it reads includes the event's session; a scheduled run
// waits for the head of the stream. It gives up after CatchUp with an
// EUNAVAILABLE error: the event is retried later.
func (c *Consolidator) catchUp(ctx context.Context, r *run) error {
	if r.caughtUp || c.Store == nil {
		return nil
	}
	var want uint64
	switch {
	case r.trigger != nil:
		want = r.trigger.Seq
	case c.Head != nil:
		seq, err := c.Head(ctx)
		if err != nil {
			return memory.Errorf(memory.EUNAVAILABLE, "read the stream's head: %v", err)
		}
		want = seq
	}
	if err := c.waitSeq(ctx, want); err != nil {
		return err
	}
	r.caughtUp = true
	return nil
}

func (c *Consolidator) waitSeq(ctx context.Context, want uint64) error {
	if want == 0 || c.Store == nil {
		return nil
	}
	deadline := time.NewTimer(c.CatchUp)
	defer deadline.Stop()
	for {
		got, err := c.Store.LastSeq(ctx)
		if err == nil && got >= want {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return memory.Errorf(memory.EUNAVAILABLE, "the read model has not applied seq %d after %s", want, c.CatchUp)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// scopes is whom an action concerns: the trigger's user, or every user
// for a schedule.
func (c *Consolidator) scopes(ctx context.Context, r *run) ([]memory.Scope, error) {
	if r.trigger != nil {
		return []memory.Scope{r.trigger.Scope}, nil
	}
	scopes, err := c.Store.Scopes(ctx)
	if err != nil {
		return nil, memory.Errorf(memory.EUNAVAILABLE, "list users: %v", err)
	}
	return scopes, nil
}

// perScope runs a store-backed action once per user. For a schedule, one
// user's failure is logged and the others go on.
func (c *Consolidator) perScope(ctx context.Context, r *run, a rules.Action,
	fn func(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error) error {
	if !c.needStore(r, a.Type) {
		return nil
	}
	if err := c.catchUp(ctx, r); err != nil {
		return err
	}
	scopes, err := c.scopes(ctx, r)
	if err != nil {
		return err
	}
	var errs []error
	for _, scope := range scopes {
		if err := fn(ctx, r, a, scope); err != nil {
			if r.trigger != nil || ctx.Err() != nil {
				return err
			}
			c.Log.Warn("scheduled action failed for a user", zap.String(fieldRule, r.rule.Name),
				zap.String(fieldAction, a.Type), zap.String(fieldUser, scopeKey(scope)), zap.Error(err))
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d users failed, first: %w", len(errs), len(scopes), errs[0])
	}
	return nil
}

// publish runs a publish action: the event type and data the rule gives,
// for the trigger's user.
func (c *Consolidator) publish(ctx context.Context, r *run, a rules.Action) error {
	if r.trigger == nil {
		return memory.Errorf(memory.EINVALID, "publish needs an event's user; a scheduled rule has none")
	}
	data, _ := a.Params["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return memory.Errorf(memory.EINVALID, "publish data: %v", err)
	}
	id := "rule-" + r.rule.Name + "-" + hashOf(r.trigger.Source, r.trigger.ID, a.Text("type"), fmt.Sprint(a.Line))
	return emitErr(c.emit(ctx, memory.Outgoing{Type: a.Text("type"), ID: id, Scope: r.trigger.Scope,
		Agent: r.trigger.Agent, Time: r.at, Data: json.RawMessage(raw)}))
}

// scopeKey names a user in ids and logs without their namespace and id
// in the clear.
func scopeKey(s memory.Scope) string { return hashOf(s.Namespace, s.User)[:12] }

// hashOf is a short hex digest of its parts, for deterministic ids.
func hashOf(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
