package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/dedupe"
	"github.com/engramhq/engram/internal/episode"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/rules"
	"github.com/engramhq/engram/internal/secrets"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	defaultrules "github.com/engramhq/engram/rules"
	"go.uber.org/zap"
)

var _ consolidation.Store = (*sqlite.Store)(nil)
var _ httpapi.ConsolidationStore = (*sqlite.Store)(nil)

// Subjects of the consolidator's operator service (nats micro
// "engram-consolidator"): run a job now, list and decide the firings of
// mode: confirm rules. They are for operators: grant them accordingly.
const (
	JobSubject     = "engram.v1.consolidator.run"
	PendingSubject = "engram.v1.consolidator.pending"
	ApproveSubject = "engram.v1.consolidator.approve"
	DismissSubject = "engram.v1.consolidator.dismiss"
)

// JobRequest asks the consolidator to run a job now.
type JobRequest struct {
	Job string    `json:"job"`
	At  time.Time `json:"at,omitzero"` // the firing time the job runs as; now when zero
}

// JobReply says which rules ran, and how many events of each type they
// published: what the job did, for the operator who asked.
type JobReply struct {
	Ran       []string       `json:"ran"`
	Published map[string]int `json:"published"`
}

// consolidatorService is the consolidator's operator service; it is kept
// with the App's services, which is how the App finds its consolidator.
type consolidatorService struct {
	natsapi.Service
	c *consolidation.Consolidator
}

// openConsolidation starts the consolidator: episodes and scratchpad on
// the rules' events, and the scheduled jobs. The rules come from
// Consolidate.RulesDir, reloaded when they change; with no such directory,
// the defaults built into engram are in force.
func (a *App) openConsolidation(ctx, runCtx context.Context) error {
	log := a.Log.Named("consolidator")
	current, err := a.openRules(runCtx, log)
	if err != nil {
		return err
	}
	var store consolidation.Store
	if a.store != nil {
		store = a.store
	} else {
		log.Warn("no read model in this process: session episodes, the scratchpad, the scheduled jobs and the cards are skipped; compression episodes still run")
	}
	c := consolidation.New(a.emitter(stream.RoleConsolidator, consolidation.Source), store, current, log)
	c.CardsDir = a.Config.CardsPath()
	c.Head = a.StreamHead
	if a.Config.Extract.MaskSecrets {
		c.Mask = &secrets.Masker{}
	}
	if a.Config.LLM.BaseURL != "" {
		client, err := a.llmClient()
		if err != nil {
			return err
		}
		c.Episodes = &episode.Builder{Client: client}
		c.Rewriter = dedupe.Rewriter{Client: client}
		c.Judge = dedupe.Judge{Client: client}
		c.Model = client
	}
	ccfg := stream.ConsumerConfig{
		Stream:         stream.MemoryStream,
		Durable:        "consolidator",
		Description:    "engram consolidator: runs the rules on events (episodes, scratchpad, profile, dedupe)",
		FilterSubjects: consolidatorSubjects(current(), log),
		// How soon a dead instance's events go to another: an episode or
		// scratchpad written by the model, plus the wait for the read
		// model. A live instance keeps every event it was handed however
		// long its batch takes (stream.Consumer tells JetStream they are
		// in progress), pulling one at a time so that none waits in the
		// client's buffer, unseen.
		AckWait:       2*a.Config.LLM.Timeout + consolidation.DefaultCatchUp,
		Batch:         64,
		Pull:          1,
		MaxEventBytes: a.Config.HTTP.MaxEventBytes,
		Recent:        a.recent,
	}
	handle := func(ctx context.Context, msgs []*stream.Message) []error {
		errs := make([]error, len(msgs))
		for i, m := range msgs {
			errs[i] = c.Handle(ctx, m.Applied())
		}
		return errs
	}
	// One user's events are handled in order by the one instance that
	// holds the user's partition (partitions.go): a scratchpad is
	// rewritten from the one before it.
	err = a.runPartitions(ctx, runCtx, stream.RoleConsolidator, "consolidator", log, func(pctx context.Context, p, n int) error {
		plog := log.With(zap.Int("partition", p))
		cons, _ := a.partitionConsumer(pctx, stream.RoleConsolidator, ccfg, p, n, plog)
		if cons == nil {
			return nil
		}
		defer a.settle(stream.RoleConsolidator, plog)
		if a.store != nil {
			// What the instance before wrote (a scratchpad) is read back.
			a.waitCaughtUp(pctx, 2*time.Minute, plog)
		}
		return cons.Run(pctx, onlyPartition(p, n, handle))
	})
	if err != nil {
		return err
	}
	queue, err := a.openConfirmQueue(ctx)
	if err != nil {
		return fmt.Errorf("confirm queue bucket: %w", err)
	}
	c.Queue = queue
	c.Trigger = func(ctx context.Context, seq uint64) (*memory.Applied, error) {
		return stream.Load(ctx, a.bus(stream.RoleConsolidator).js, seq, a.Config.HTTP.MaxEventBytes)
	}
	fs, err := a.openFirings(ctx, log)
	if err != nil {
		return fmt.Errorf("schedule bucket: %w", err)
	}
	c.Claim = fs.claim
	if err := a.openCardsLease(ctx, runCtx, c, log); err != nil {
		return fmt.Errorf("cards lease: %w", err)
	}
	a.goWorker(runCtx, "consolidator schedule", func(ctx context.Context) error {
		// From the last firing run by any instance: what fell due while
		// none ran is run now.
		return c.Run(ctx, fs.since(ctx))
	})
	svc, err := serveConsolidator(a.bus(stream.RoleConsolidator).nc, c, runCtx, log)
	if err != nil {
		return fmt.Errorf("consolidator service: %w", err)
	}
	a.services = append(a.services, svc)
	return nil
}

// openCardsLease makes the cards one instance's: the holder of the cards
// lease (all of them, in the single binary). Apart, give the
// consolidators one shared cards_dir, so the files stay where they are
// when the lease moves.
func (a *App) openCardsLease(ctx, runCtx context.Context, c *consolidation.Consolidator, log *zap.Logger) error {
	if c.CardsDir == "" || a.store == nil {
		return nil
	}
	// One partition (stream.CardsGroup): one instance at a time writes
	// every user's cards and reads a person's edits of them back. Its read
	// model holds every user, and the projector tells it of every change
	// (Observe), so it needs no partition of the events.
	leases, err := stream.OpenLeases(ctx, a.bus(stream.RoleConsolidator).js,
		stream.LeaseConfig{Group: stream.CardsGroup, Instance: a.Config.Instance, N: 1}, log)
	if err != nil {
		return err
	}
	c.CardsLease = true
	a.observer.Store(c)
	a.goWorker(runCtx, "cards lease", func(ctx context.Context) error {
		leases.Run(ctx, func(pctx context.Context, _ int) {
			log.Info("this instance writes the cards", zap.String("cards_dir", c.CardsDir))
			c.HoldCards(pctx)
		})
		return nil
	})
	return nil
}

// openRules loads the rules: the directory, watched for changes, or the
// built-in defaults until it exists (it is watched for). A directory whose rules do not
// load is an error at start (there is no last good set to keep running);
// after that, a change that breaks them is reported with its line numbers
// and the last good rules keep running.
func (a *App) openRules(runCtx context.Context, log *zap.Logger) (func() *rules.Set, error) {
	if a.rules != nil {
		return a.rules, nil
	}
	current, err := a.loadRules(runCtx, log)
	if err == nil {
		a.rules = current
	}
	return current, err
}

func (a *App) loadRules(runCtx context.Context, log *zap.Logger) (func() *rules.Set, error) {
	dir := a.Config.Consolidate.RulesDir
	builtin, err := rules.LoadFS(defaultrules.FS, events.Types())
	if err != nil {
		return nil, fmt.Errorf("built-in rules: %w", err)
	}
	if info, err := os.Stat(dir); dir == "" || err == nil && !info.IsDir() {
		log.Info("no rules directory; the built-in rules are in force", zap.String("rules_dir", dir), zap.Int("rules", len(builtin.Rules)))
		return func() *rules.Set { return builtin }, nil
	}
	// A directory that does not exist yet is watched for: created after
	// start, it is loaded without a restart.
	w, err := rules.NewWatcherOr(dir, events.Types(), a.Config.Consolidate.RulesPoll, builtin, nil, log)
	if err != nil {
		return nil, fmt.Errorf("rules %s:\n%w", dir, err)
	}
	a.goWorker(runCtx, "rules watcher", w.Run)
	return w.Current, nil
}

// consolidatorSubjects is what the consolidator consumes: every event type
// but turn.recorded, the bulk of the stream, which it reads only when a
// rule in force at start is on it. A rule on turn.recorded added by a
// later reload takes effect at the next start (it is logged then).
func consolidatorSubjects(set *rules.Set, log *zap.Logger) []string {
	var out []string
	for _, t := range events.Types() {
		if t == events.TypeMemoryEmbedded {
			continue // vectors: large, and nothing a rule acts on
		}
		if t == events.TypeTurnRecorded {
			needed := false
			for i := range set.Rules {
				needed = needed || set.Rules[i].Triggers(t) && !batcherOnly(set.Rules[i], t)
			}
			if !needed {
				continue
			}
			log.Info("a rule is on turn.recorded: the consolidator reads every turn")
		}
		out = append(out, stream.SubjectPrefix+".*.*."+t)
	}
	return out
}

// batcherOnly reports whether a rule does nothing in the consolidator on
// an event type: every action is an extract_now the batcher runs.
func batcherOnly(r rules.Rule, eventType string) bool {
	if !extractreq.BatcherRun(r, eventType) {
		return false
	}
	for _, act := range r.Do {
		if act.Type != rules.ActExtractNow {
			return false
		}
	}
	return true
}

// StreamHead is the MEMORY stream's last sequence.
func (a *App) StreamHead(ctx context.Context) (uint64, error) {
	return stream.Head(ctx, a.js)
}

// Backlogs is every durable consumer of MEMORY's backlog, read now.
func (a *App) Backlogs(ctx context.Context) ([]stream.Backlog, error) {
	return stream.Backlogs(ctx, a.js)
}

// consolidator is this process's consolidator, or nil.
func (a *App) consolidator() *consolidation.Consolidator {
	for _, s := range a.services {
		if cs, ok := s.(*consolidatorService); ok {
			return cs.c
		}
	}
	return nil
}

// RunJob runs a consolidation job now in this process: a scheduled rule
// by name, or every scheduled rule of a rule file ("daily", "weekly"), as
// if its schedule had fallen due at at (now when zero).
func (a *App) RunJob(ctx context.Context, name string, at time.Time) ([]string, error) {
	c := a.consolidator()
	if c == nil {
		return nil, errors.New("this process runs no consolidator")
	}
	if at.IsZero() {
		at = time.Now()
	}
	return c.RunJob(ctx, name, at)
}

// ConsolidationAPI is what the HTTP API serves of consolidation: the read
// model, and the consolidator's confirm queue when this process runs one.
// Set it as httpapi.Server.Consolidation.
func (a *App) ConsolidationAPI() httpapi.ConsolidationStore {
	if a.store == nil {
		return nil
	}
	if c := a.consolidator(); c != nil {
		return consolidationAPI{Store: a.store, c: c}
	}
	// The consolidator runs in another process: its queue is asked over NATS.
	return remoteQueue{Store: a.store, nc: a.bus(stream.RoleRetriever).nc}
}

// consolidationAPI joins the read model and the consolidator's queue.
type consolidationAPI struct {
	*sqlite.Store
	c *consolidation.Consolidator
}

var _ httpapi.RuleQueue = consolidationAPI{}

func (x consolidationAPI) PendingFirings(ctx context.Context, scope *memory.Scope) ([]consolidation.Pending, error) {
	return x.c.ListPending(ctx, scope)
}

func (x consolidationAPI) Approve(ctx context.Context, id string, scope *memory.Scope) error {
	return x.c.Approve(ctx, id, scope)
}

func (x consolidationAPI) Dismiss(id string, scope *memory.Scope) error {
	return x.c.Dismiss(id, scope)
}

// serveConsolidator starts the operator service. A job runs on the
// service's goroutine until it ends or engram stops.
func serveConsolidator(nc *stream.Conn, c *consolidation.Consolidator, runCtx context.Context, log *zap.Logger) (natsapi.Service, error) {
	queued := func(data []byte) queueRequest {
		var body queueRequest
		_ = json.Unmarshal(data, &body)
		return body
	}
	svc, err := natsapi.ServeFuncs(nc, "engram-consolidator", Version,
		"engram consolidation: run jobs, decide confirm-mode rule firings", "consolidator", []natsapi.Endpoint{
			{Name: "run", Subject: JobSubject, Handle: func(data []byte) (any, error) {
				var jr JobRequest
				if err := json.Unmarshal(data, &jr); err != nil || jr.Job == "" {
					return nil, memory.Errorf(memory.EINVALID, "want {\"job\": NAME, \"at\": RFC 3339 time (optional)}")
				}
				if jr.At.IsZero() {
					jr.At = time.Now()
				}
				log.Info("job requested", zap.String("job", jr.Job), zap.Time("at", jr.At))
				ran, published, err := c.RunJobCounted(runCtx, jr.Job, jr.At)
				return JobReply{Ran: ran, Published: published}, err
			}},
			{Name: "pending", Subject: PendingSubject, Handle: func(data []byte) (any, error) {
				pending, err := c.ListPending(runCtx, queued(data).scope())
				return map[string]any{"pending": pending}, err
			}},
			{Name: "approve", Subject: ApproveSubject, Handle: func(data []byte) (any, error) {
				body := queued(data)
				return map[string]string{"approved": body.ID}, c.Approve(runCtx, body.ID, body.scope())
			}},
			{Name: "dismiss", Subject: DismissSubject, Handle: func(data []byte) (any, error) {
				body := queued(data)
				return map[string]string{"dismissed": body.ID}, c.Dismiss(body.ID, body.scope())
			}},
		}, log)
	if err != nil {
		return nil, err
	}
	return &consolidatorService{Service: svc, c: c}, nil
}

// RequestJob asks a running engram's consolidator to run a job now, over
// NATS: cfg.NATS.URL, or the embedded server's listen address.
func RequestJob(ctx context.Context, cfg config.Config, req JobRequest) (JobReply, error) {
	url := cfg.NATS.URL
	if url == "" {
		if cfg.NATS.Listen == "" {
			return JobReply{}, errors.New("no NATS to reach engram: set ENGRAM_NATS_URL (the embedded server is in-process only)")
		}
		url = "nats://" + cfg.NATS.Listen
	}
	cc := connConfig(cfg, "engram-cli", stream.RoleOperator)
	cc.URL = url
	nc, err := stream.Connect(cc)
	if err != nil {
		return JobReply{}, err
	}
	defer nc.Close()
	body, _ := json.Marshal(req)
	data, answered, err := natsapi.Request(ctx, nc, JobSubject, body)
	if err != nil {
		return JobReply{}, fmt.Errorf("ask the consolidator (is engram running with a consolidator?): %w", err)
	}
	if answered != nil {
		return JobReply{}, answered
	}
	var out JobReply
	if err := json.Unmarshal(data, &out); err != nil {
		return out, fmt.Errorf("consolidator reply: %w", err)
	}
	return out, nil
}
