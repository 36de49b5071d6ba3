package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/extraction"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/mcpserver"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/projector"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/rules"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/textseg"
)

// Roles says which workers a process runs.
type Roles uint8

const (
	// RoleIngest accepts events over HTTP and publishes them.
	RoleIngest Roles = 1 << iota
	// RoleRetriever keeps a read model (its own projector) and serves
	// queries over HTTP and NATS.
	RoleRetriever
	// RoleExtractor and RoleConsolidator are the derived-memory workers.
	RoleExtractor
	RoleConsolidator

	RoleAll = RoleIngest | RoleRetriever | RoleExtractor | RoleConsolidator
)

// App is a running engram process.
type App struct {
	Config config.Config
	Roles  Roles
	Log    *zap.Logger

	embedded *stream.Embedded
	// nc and js are the main connection's (main): the read model's reader
	// (the retriever's, else the extractor's, else the consolidator's),
	// else the ingest's, else the operator's. Every bus user reads the
	// streams' state through it; what a kind does of its own goes through
	// its own connection (bus).
	nc   *stream.Conn
	js   stream.JetStream
	main *busConn
	// conns are the worker kinds' connections, each as that kind's bus
	// user; op is the operator's, when the process holds that credential.
	conns map[string]*busConn
	op    *busConn
	order []*busConn // every connection, in the order they close
	// denied counts what the server refused the process's bus users.
	denied atomic.Int64
	// drift is what is wrong with the streams under the process
	// (streamdrift.go).
	drift    streamDrift
	store    *sqlite.Store
	engine   *retrieval.Engine
	access   *retrieval.AccessLog // nil unless a retriever
	services []natsapi.Service
	catchUp  *catchUp // nil unless a retriever
	// reads is a partitioned retriever's read model (readparts.go); nil
	// elsewhere, where store is the whole read model.
	reads *readParts
	// degradedFn publishes the retrieval degradation chain's falls.
	degradedFn func(scope memory.Scope, from, to, reason string)
	feed       *feed // nil unless ingest beside a read model
	api        *httpapi.Server
	httpSrv    *http.Server
	httpLn     net.Listener
	// advertised is where the other instances reach this one's API
	// (config's http.advertise_url), once it listens; nil when it
	// advertises none.
	advertised atomic.Pointer[string]
	// routes and relay, on a front of partitioned reads, send a user's
	// request over HTTP to the instance whose copy answers (routes.go).
	routes *routes
	relay  *httpapi.Relay

	// recent holds the events this process's ingest validated and
	// stored, for its own consumers (stream.Recent); nil unless ingest.
	recent *stream.Recent

	// busRole, when stream.RoleOperator, makes every connection of the
	// process the operator's (operator commands); otherwise each worker
	// kind connects as its own bus user.
	busRole string
	// createStreams lets an operator command create the streams and
	// buckets that are missing (import into a new store).
	createStreams bool

	// originEvery is how often the projector checks that MEMORY is still
	// the stream its read model was built from, and the streams are
	// looked at for drift; tests shorten it.
	originEvery time.Duration
	// truncationGrace is how long MEMORY's first sequence, moved, waits
	// to be judged (defaultTruncationGrace); tests shorten it.
	truncationGrace time.Duration

	// extractBackoff is the delay before an extraction request's next try;
	// tests shorten it.
	extractBackoff func(delivered int) time.Duration
	// healEvery is how often the embedded JetStream is looked at for
	// being unable to store (heal.go); tests change it.
	healEvery time.Duration
	// storeDown is why events cannot be stored, as healJetStream last saw
	// it; nil while they can.
	storeDown atomic.Pointer[error]
	// compaction is when the read model's full-text indexes, and each
	// partition copy's, are merged (sqlite.Store.Compact).
	compaction sqlite.Compaction
	// leaseTTL is how long a dead instance's partitions wait for another
	// (partitions.go); tests shorten it.
	leaseTTL time.Duration
	// accessEvery is how often the retriever publishes the accesses its
	// answers recorded; tests that compare answers lengthen it.
	accessEvery time.Duration
	// retrievalNow, when set, is the clock answers rank by
	// (SetRetrievalClock).
	retrievalNow func() time.Time

	// rules is the rules in force, loaded once for the batcher and the
	// consolidator (see openRules).
	rules func() *rules.Set
	// observer, when set, is told of every event the projector applied
	// (the consolidator, for the cards: openCardsLease).
	observer atomic.Pointer[consolidation.Consolidator]

	cancel context.CancelFunc
	wg     conc.WaitGroup
	// stopped are the worker loops that ended while the App ran
	// (workers.go); closing is set once Close begins, when they all end.
	stopped stoppedWorkers
	closing atomic.Bool
	closeMu sync.Once
}

// New returns an App; Open starts it.
func New(cfg config.Config, roles Roles, log *zap.Logger) *App {
	return &App{Config: cfg, Roles: roles, Log: log, extractBackoff: stream.DefaultBackoff, originEvery: 5 * time.Second,
		truncationGrace: defaultTruncationGrace, leaseTTL: stream.DefaultLeaseTTL, conns: map[string]*busConn{},
		compaction:  sqlite.DefaultCompaction,
		accessEvery: 2 * time.Second}
}

// NewOperator returns an App whose every connection is the operator's,
// for an operator command that runs workers (engram forget's read model).
func NewOperator(cfg config.Config, roles Roles, log *zap.Logger) *App {
	a := New(cfg, roles, log)
	a.busRole = stream.RoleOperator
	return a
}

// Open starts every part in order. On error, what was started is closed.
func (a *App) Open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.Config.ShutdownTimeout)
			defer cancel()
			_ = a.Close(cctx)
		}
	}()
	if err := checkDataDir(a.Config.DataDir); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a.cancel = cancel
	if a.Roles&RoleIngest != 0 {
		a.recent = stream.NewRecent(recentEvents)
	}
	embedder, err := a.embedClient()
	if err != nil {
		return err
	}

	if err := a.openNATS(ctx); err != nil {
		return err
	}
	if a.embedded != nil {
		a.goWorker(runCtx, "jetstream healer", func(ctx context.Context) error { a.healJetStream(ctx); return nil })
	}
	declareMetrics()
	if a.Roles&(RoleRetriever|RoleExtractor|RoleConsolidator) != 0 && !a.partitionedReads() {
		// Every worker that reads keeps a read model of its own
		// (readmodel.go); a partitioned retriever, of its partitions.
		if err := a.openReadModel(ctx, runCtx); err != nil {
			return err
		}
	}
	// Whether the streams are as engram set them up, and the read model's
	// stream still holds what it applied: now, and every originEvery.
	w := &firstWatch{}
	a.checkStreams(ctx, w, a.Log.Named("streams"))
	a.goWorker(runCtx, "stream check", func(ctx context.Context) error { a.watchStreams(ctx, w); return nil })
	if a.routesByPartition() {
		a.openRoutes(runCtx)
	}
	if a.Roles&RoleRetriever != 0 {
		access := &retrieval.AccessLog{Emit: a.emitter(stream.RoleRetriever, "engram/retriever"), Interval: a.accessEvery,
			Log: a.Log.Named("access")}
		a.access = access
		a.degradedFn = a.degraded(a.emitter(stream.RoleRetriever, "engram/retriever"))
		a.goWorker(runCtx, "access log", access.Run)
		// The query expansion tables load once; read now, they do not
		// hold up the first question (several seconds under -race).
		a.wg.Go(textseg.LoadLexicons)
		if a.partitionedReads() {
			if err := a.openReadParts(ctx, runCtx, embedder); err != nil {
				return err
			}
		} else {
			a.engine = a.newEngine(a.store, embedder)
			retriever := a.bus(stream.RoleRetriever)
			svc, err := natsapi.Serve(retriever.nc, a.engine, a.engine, stream.ReadDigest(retriever.js), Version, a.Log.Named("natsapi"))
			if err != nil {
				return fmt.Errorf("nats search service: %w", err)
			}
			a.services = append(a.services, svc)
		}
	}
	if a.Roles&RoleExtractor != 0 {
		if err := a.openExtraction(ctx, runCtx); err != nil {
			return err
		}
		if embedder != nil {
			if err := a.openEmbedder(ctx, runCtx, embedder); err != nil {
				return err
			}
		}
	}
	if a.Roles&RoleConsolidator != 0 {
		if err := a.openConsolidation(ctx, runCtx); err != nil {
			return err
		}
		if a.store != nil && a.Config.Retention.RawTurns > 0 {
			if err := a.openRetention(ctx, runCtx); err != nil {
				return fmt.Errorf("retention: %w", err)
			}
		}
	}
	if a.Roles&RoleIngest != 0 {
		if err := a.openInput(); err != nil {
			return err
		}
	}
	if a.Config.HTTP.Addr != "" && a.Roles&(RoleIngest|RoleRetriever) != 0 {
		if err := a.openHTTP(); err != nil {
			return err
		}
	}
	a.Log.Info("engram started", zap.String("http", a.HTTPAddr()), zap.String("nats", a.NATSURL()),
		zap.String("data_dir", a.Config.DataDir))
	a.logURLs()
	return nil
}

// logURLs says where a person finds what this process serves over HTTP:
// the console, MCP and the API's OpenAPI document.
func (a *App) logURLs() {
	if a.api == nil {
		return
	}
	base := "http://" + a.HTTPAddr()
	if host, port, err := net.SplitHostPort(a.HTTPAddr()); err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		base = "http://" + net.JoinHostPort("localhost", port) // listening on every address
	}
	a.Log.Info("console", zap.String("url", base+"/console/"))
	if a.api.MCP != nil {
		a.Log.Info("mcp (streamable HTTP; engram mcp serves stdio)", zap.String("url", base+"/mcp"))
	}
	a.Log.Info("openapi", zap.String("url", base+"/openapi.json"))
}

func (a *App) openNATS(ctx context.Context) error {
	var extra []stream.ConnOption
	if a.Config.NATS.URL == "" {
		auth, err := stream.EnsureAuth(AuthDir(a.Config), agentNamespaces(a.Config))
		if err != nil {
			return err
		}
		emb, err := stream.StartEmbedded(stream.EmbeddedConfig{
			StoreDir: a.Config.JetStreamDir(),
			Listen:   a.Config.NATS.Listen,
			Sync:     stream.Sync(a.Config.NATS.Sync),
			Auth:     auth,
		})
		if err != nil {
			return err
		}
		a.embedded = emb
		extra = append(extra, emb.ConnectOption())
		if a.Config.NATS.Listen != "" {
			a.Log.Info("nats clients need credentials", zap.String("dir", auth.Dir),
				zap.String("how", "engram creds prints the nats CLI and agent settings"))
		}
	}
	return a.openBus(ctx, extra)
}

// openReadModel opens SQLite and starts the projector where the read
// model left off. The consumer is recreated at that position every start:
// the position stored with the data is the truth, so a deleted database is
// rebuilt from the start of the stream without an operator's help, and so
// is one built from a MEMORY stream that has since been recreated, once
// an operator accepted the new one (origin.go); until then it is kept
// as it is and the projector waits.
func (a *App) openReadModel(ctx, runCtx context.Context) error {
	store, err := sqlite.Open(ctx, a.Config.ReadModelPath())
	if err != nil {
		return err
	}
	a.store = store
	follow, err := a.checkOrigin(ctx, store)
	if err != nil {
		return err
	}
	log := a.Log.Named("projector")
	if a.catchUp, err = a.newCatchUp(ctx, a.projectorDurable()); err != nil {
		return err
	}
	if a.Roles&RoleIngest != 0 {
		a.feed = newFeed(runCtx, store, a.Config.HTTP.MaxEventBytes, log.Named("feed"))
		// Not a run of a stream the read model does not follow.
		a.feed.held.Store(!follow)
	}
	pr := &projection{store: store, durable: a.projectorDurable(), feed: a.feed,
		description: "engram projector: applies every event to this instance's SQLite read model"}
	var cons *stream.Consumer
	if follow {
		if cons, err = a.projectorConsumer(ctx, pr, log); err != nil {
			return err
		}
	}
	p := projector.New(store, log)
	a.goWorker(runCtx, "projector", func(ctx context.Context) error { return a.runProjector(ctx, pr, cons, p, log) })
	if a.feed != nil {
		a.goWorker(runCtx, "feed", func(ctx context.Context) error { a.feed.run(ctx); return nil })
	}
	// Its full-text indexes are merged while it is idle: each segment
	// costs every term a query looks up a seek (sqlite/compact.go).
	compactLog := a.Log.Named("compaction")
	a.goWorker(runCtx, "index compaction", func(ctx context.Context) error {
		store.Compact(ctx, a.compaction, func(err error) { compactLog.Warn("full-text index compaction", zap.Error(err)) })
		return nil
	})
	return nil
}

// projection is a read model and what feeds it: the whole read model, or
// a partitioned retriever's copy of one partition (readparts.go).
type projection struct {
	store       *sqlite.Store
	durable     string
	description string
	// keep, when set, says by its subject whether an event is the
	// projection's (one of its partition's users); the others are passed
	// over undecoded.
	keep func(subject string) bool
	// inactive, when set, has JetStream delete the consumer once no
	// instance pulls from it for that long (stream.ConsumerConfig).
	inactive time.Duration
	feed     *feed
	// passed, when keep is set, is the last stream sequence applied or
	// passed over: the store's position moves only with its own events.
	passed *atomic.Uint64
}

// position is the last stream sequence the projection has applied or
// passed over.
func (pr *projection) position(ctx context.Context) (uint64, error) {
	last, err := pr.store.LastSeq(ctx)
	if err != nil || pr.passed == nil {
		return last, err
	}
	return max(last, pr.passed.Load()), nil
}

// track moves passed past each batch h has handled: every message of it
// is settled then, applied, passed over or dead-lettered.
func (pr *projection) track(h stream.BatchHandler) stream.BatchHandler {
	if pr.passed == nil {
		return h
	}
	return func(ctx context.Context, msgs []*stream.Message) []error {
		errs := h(ctx, msgs)
		if ctx.Err() != nil {
			return errs
		}
		for _, m := range msgs {
			if m.Seq > pr.passed.Load() {
				pr.passed.Store(m.Seq)
			}
		}
		return errs
	}
}

// projectorConsumer starts the projection's consumer after the last
// event it applied.
func (a *App) projectorConsumer(ctx context.Context, pr *projection, log *zap.Logger) (*stream.Consumer, error) {
	last, err := pr.store.LastSeq(ctx)
	if err != nil {
		return nil, err
	}
	var done func(uint64) bool
	if pr.feed != nil {
		done = pr.feed.done
	}
	return stream.NewConsumer(ctx, a.js, stream.ConsumerConfig{
		Stream:        stream.MemoryStream,
		Durable:       pr.durable,
		Description:   pr.description,
		Restart:       true,
		StartSeq:      last + 1,
		Batch:         512,
		MaxEventBytes: a.Config.HTTP.MaxEventBytes,
		// Applying an event again changes nothing, and the read model's
		// position must pass every message.
		TakeEveryRedrive:  true,
		Done:              done,
		Recent:            a.recent,
		Keep:              pr.keep,
		InactiveThreshold: pr.inactive,
	}, log)
}

// project applies a batch to the read model, and tells the observer, if
// any, of what was applied; messages Passed over are another partition's
// and are left alone.
func (a *App) project(p *projector.Projector) stream.BatchHandler {
	return func(ctx context.Context, msgs []*stream.Message) []error {
		batch := make([]memory.Applied, 0, len(msgs))
		at := make([]int, 0, len(msgs))
		for i, m := range msgs {
			if !m.Passed {
				batch, at = append(batch, m.Applied()), append(at, i)
			}
		}
		errs := make([]error, len(msgs))
		if len(batch) == 0 {
			return errs
		}
		applied := p.Apply(ctx, batch) // nil: all applied
		o := a.observer.Load()
		for j := range batch {
			if applied != nil {
				errs[at[j]] = applied[j]
			}
			if errs[at[j]] == nil && o != nil {
				o.Observe(batch[j])
			}
		}
		countNATSAccepted(msgs, errs)
		return errs
	}
}

func (a *App) openHTTP() error {
	// The HTTP API's writes (the memory edits, the scratchpad) are the
	// retriever's when the process runs one; its events are an ingest's
	// too, which the retriever's user may publish.
	role := stream.RoleIngest
	if a.Roles&RoleRetriever != 0 {
		role = stream.RoleRetriever
	}
	srv := a.apiServer(role)
	ln, err := net.Listen("tcp", a.Config.HTTP.Addr)
	if err != nil {
		return fmt.Errorf("http listen: %w", err)
	}
	a.httpLn, a.api = ln, srv
	if u := a.Config.HTTP.Advertised(ln.Addr().String()); u != "" {
		a.advertised.Store(&u)
		if a.routes != nil {
			a.routes.setSelf(u)
		}
		if a.reads != nil {
			a.reads.nudge() // its copies' states say it now
		}
	}
	if host, _, _ := net.SplitHostPort(a.Config.HTTP.Addr); len(a.Config.HTTP.AllowedHosts) == 0 &&
		(host == "" || net.ParseIP(host).IsUnspecified()) {
		a.Log.Warn("http listens on every interface but answers only requests that name it by a loopback name or "+
			"the listen address in their Host; set http.allowed_hosts (ENGRAM_HTTP_ALLOWED_HOSTS) to the names clients use",
			zap.String("addr", a.Config.HTTP.Addr))
	}
	a.httpSrv = &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          zap.NewStdLog(a.Log.Named("http")),
	}
	a.goWorker(context.Background(), "http server", func(context.Context) error {
		// It ends at Close (ErrServerClosed), which runWorker expects.
		return a.httpSrv.Serve(ln)
	})
	return nil
}

// apiServer is the API of this process's roles, for HTTP and, through
// BusInput, for events arriving on the bus; it publishes as bus user
// role.
func (a *App) apiServer(role string) *httpapi.Server {
	srv := &httpapi.Server{
		Ready:          a.Ready,
		Readiness:      a.Readiness,
		Tokens:         a.Config.HTTP.Tokens,
		AllowedHosts:   a.Config.HTTP.Hosts(),
		MaxEventBytes:  a.Config.HTTP.MaxEventBytes,
		MaxBatchEvents: a.Config.HTTP.MaxBatchEvents,
		Log:            a.Log.Named("http"),
		Metrics:        metrics.Default.Handler(a.metricsState),
		MaskSecrets:    a.Config.Extract.MaskAtIngest,
	}
	if a.Roles&RoleIngest != 0 {
		srv.Forget = func(ctx context.Context, scope memory.Scope, reason string) (any, error) {
			return a.Forget(ctx, scope, reason)
		}
	}
	if a.Roles&(RoleIngest|RoleRetriever) != 0 {
		// A retriever publishes too: the write API (memories, pending
		// decisions, the scratchpad) reads the read model, then publishes.
		// A client that reused an id hears so: the event stored under it
		// is compared with the one sent, by digest. A bus user that may
		// read MEMORY reads it; an ingest apart, which reads nothing of
		// MEMORY, asks a retriever for the stored event's digest.
		conflicts := stream.ReadDigest(a.main.js)
		if a.main.role == stream.RoleIngest {
			conflicts = stream.AskDigest(a.main.nc)
		}
		pub := a.httpPublisher(a.bus(role).js, conflicts)
		pub.p.Stored = a.stored
		srv.Publisher = pub
	}
	switch {
	case a.routesByPartition():
		srv.Owner = owner{n: a.Config.Partitions, reads: a.reads, router: a.router(role), routes: a.routes,
			relay: a.relay, front: a.Config.Instance}
		srv.PartitionReadiness = a.partitionReadiness
	case a.Roles&RoleRetriever != 0:
		srv.Searcher, srv.Memories, srv.Context = a.engine, a.store, a.engine
		srv.Consolidation = a.ConsolidationAPI()
		srv.Projected = a.WaitProjected
		srv.TurnMemories, srv.WaitMemories = a.turnMemories, a.Config.HTTP.WaitMemories
	}
	if a.Roles&RoleIngest != 0 && a.Roles&RoleRetriever != 0 {
		// MCP's tools call the API in process, with the MCP request's
		// token; the MCP request passed the edge's checks.
		srv.MCP = mcpserver.Handler(mcpserver.New(mcpserver.Local(srv.InProcess()), Version, ""))
	}
	return srv
}

// recentEvents is how many of the events it stored last an ingest
// remembers decoded for its own consumers.
const recentEvents = 8192

// stored is told of the events this process's HTTP and bus ingest stored.
func (a *App) stored(s []stream.Stored) {
	if a.recent != nil {
		a.recent.Add(s)
	}
	if a.feed != nil {
		a.feed.offer(s)
	}
}

// httpPublisher is what the HTTP API publishes with on js: it refuses a
// write while events cannot be stored or MEMORY would drop them
// (writesDownErr), and answers an id reused with other content as a
// conflict (conflicts).
func (a *App) httpPublisher(js stream.JetStream, conflicts stream.StoredDigest) publisher {
	p := stream.NewPublisher(js)
	p.Via = metrics.PathHTTP
	p.Conflicts = conflicts
	return publisher{p: p, down: a.writesDownErr}
}

// publisher adapts the stream publisher to what the HTTP edge needs.
type publisher struct {
	p *stream.Publisher
	// down is why events cannot or must not be stored now, nil when they
	// can: then a publish fails at once instead of waiting out its
	// timeout, or being acknowledged and then dropped by a MEMORY that
	// keeps too little (writesDownErr).
	down func() error
}

func (p publisher) Publish(ctx context.Context, evs []event.Event, datas []any) []httpapi.PublishResult {
	out := make([]httpapi.PublishResult, len(evs))
	if err := p.down(); err != nil {
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	if len(evs) == 1 {
		var data any
		if datas != nil {
			data = datas[0]
		}
		ack, err := p.p.PublishData(ctx, evs[0], data)
		out[0] = httpapi.PublishResult{Seq: ack.Seq, Duplicate: ack.Duplicate, Err: err}
		return out
	}
	for i, r := range p.p.PublishBatchData(ctx, evs, datas) {
		out[i] = httpapi.PublishResult{Seq: r.Ack.Seq, Duplicate: r.Ack.Duplicate, Err: r.Err}
	}
	return out
}

// Ready reports whether the process can do its job: NATS connected and,
// for a retriever, the read model answering.
func (a *App) Ready(ctx context.Context) error {
	if err := a.busConnected(); err != nil {
		return err
	}
	if err := a.drift.err(); err != nil {
		return err
	}
	if a.embedded != nil {
		if err := a.embedded.StoreHealth(); err != nil {
			return a.cannotStore(err)
		}
	}
	if a.store != nil {
		if err := a.store.Ping(ctx); err != nil {
			return fmt.Errorf("read model: %w", err)
		}
	}
	if a.reads != nil {
		return a.reads.ping(ctx)
	}
	return nil
}

// degraded counts each fall down the retrieval degradation chain and
// publishes it as retrieval.degraded, at most once a minute per user and
// kind of fall, so a broken index does not flood the stream.
func (a *App) degraded(emit memory.Emitter) func(scope memory.Scope, from, to, reason string) {
	// sent holds the falls published in the current minute: the event id
	// already makes JetStream drop a repeat, but without this every request
	// of a degraded minute would still log and wait for a publish.
	var mu sync.Mutex
	var minute time.Time
	sent := map[string]bool{}
	return func(scope memory.Scope, from, to, reason string) {
		metrics.Default.Degraded(from, to)
		now := time.Now().UTC()
		key := scope.Namespace + "\x00" + scope.User + "\x00" + from + "\x00" + to
		mu.Lock()
		if m := now.Truncate(time.Minute); !m.Equal(minute) {
			minute, sent = m, map[string]bool{}
		}
		repeat := sent[key]
		sent[key] = true
		mu.Unlock()
		if repeat {
			return
		}
		a.Log.Warn("retrieval degraded", zap.String("from", from), zap.String("to", to), zap.String("reason", reason))
		id := fmt.Sprintf("degraded-%s-%s-%s", stream.MsgID(scope.Namespace, scope.User, "retrieval", "degraded"), from+to, now.Truncate(time.Minute).Format("200601021504"))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := emit(ctx, memory.Outgoing{Type: events.TypeRetrievalDegraded, ID: id, Scope: scope, Time: now,
			Data: &events.RetrievalDegraded{From: from, To: to, Reason: chars.CutBytes(reason, 512)}}); err != nil {
			a.Log.Warn("publish retrieval.degraded", zap.Error(err))
		}
	}
}

// turnMemories waits until ctx ends for the rules' reading of a recorded
// turn (extraction.Extractor.ReadTurns) and answers the memories it wrote
// or restated.
func (a *App) turnMemories(ctx context.Context, scope memory.Scope, d *events.TurnRecorded) (httpapi.TurnReading, error) {
	if !a.Config.Extract.RulesAtOnce || !extractreq.ReadsAtOnce(d.Role) {
		return httpapi.TurnReading{Extraction: httpapi.ExtractionNone}, nil
	}
	id := extraction.ReadingEventID(scope, d.SessionID, events.ExtractionTurn{TurnIndex: d.TurnIndex, Role: d.Role,
		Content: d.Content, ToolCalls: d.ToolCalls})
	for {
		done, mems, err := a.store.EventMemories(ctx, scope, extraction.Source, id)
		if err != nil {
			return httpapi.TurnReading{}, err
		}
		if done {
			return httpapi.TurnReading{Extraction: httpapi.ExtractionDone, Memories: mems}, nil
		}
		select {
		case <-ctx.Done():
			return httpapi.TurnReading{Extraction: httpapi.ExtractionPending}, nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// WaitProjected waits until the read model has applied seq.
func (a *App) WaitProjected(ctx context.Context, seq uint64) error {
	return waitApplied(ctx, a.store, seq)
}

// waitApplied waits until store has applied seq.
func waitApplied(ctx context.Context, store *sqlite.Store, seq uint64) error {
	for {
		got, err := store.LastSeq(ctx)
		if err != nil || got >= seq {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// SetRetrievalClock sets the clock /v1/context ranks by (recency, decay,
// "last week"), for benchmarks that replay a data set written for another
// day. Call it between requests, never during one.
func (a *App) SetRetrievalClock(now func() time.Time) {
	a.retrievalNow = now
	if a.engine != nil {
		a.engine.Now = now
	}
	if a.reads != nil {
		a.reads.mu.Lock()
		for _, part := range a.reads.parts {
			part.engine.Now = now
		}
		a.reads.mu.Unlock()
	}
}

// SettleAccess publishes the accesses retrievals have recorded and waits
// until the read model holds them, so that what is asked next ranks as
// it would after the access log's next flush. A benchmark calls it between
// questions to score the same way every run.
func (a *App) SettleAccess(ctx context.Context) error {
	if a.access == nil {
		return nil
	}
	if err := a.access.Flush(ctx); err != nil {
		return err
	}
	if a.store == nil {
		return nil // a partitioned retriever: its copies catch up by themselves
	}
	return a.WaitCaughtUp(ctx)
}

// WaitCaughtUp waits until the read model holds everything the MEMORY
// stream has stored so far.
func (a *App) WaitCaughtUp(ctx context.Context) error {
	head, err := a.StreamHead(ctx)
	if err != nil {
		return err
	}
	return a.WaitProjected(ctx, head)
}

// HTTPAddr is the address the HTTP API listens on ("" if none).
func (a *App) HTTPAddr() string {
	if a.httpLn == nil {
		return ""
	}
	return a.httpLn.Addr().String()
}

// NATSURL is the embedded server's client URL, or the external URL.
func (a *App) NATSURL() string {
	if a.embedded != nil {
		return a.embedded.ClientURL()
	}
	return a.Config.NATS.URL
}

// Store is the read model (nil unless the process is a retriever).
func (a *App) Store() *sqlite.Store { return a.store }

// Close stops everything in reverse order of start. It is safe to call
// more than once and on a partly opened App.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	a.closeMu.Do(func() {
		a.closing.Store(true)
		if a.httpSrv != nil {
			if err := a.httpSrv.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("http shutdown: %w", err))
			}
		}
		for _, s := range a.services {
			if err := s.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stop service: %w", err))
			}
		}
		if a.cancel != nil {
			a.cancel()
		}
		done := make(chan struct{})
		go func() { a.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("workers did not stop in time: %w", ctx.Err()))
		}
		if a.relay != nil {
			a.relay.Close()
		}
		errs = append(errs, a.closeBus(ctx)...)
		if a.embedded != nil {
			a.embedded.Shutdown()
		}
		if a.store != nil {
			if err := a.store.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close read model: %w", err))
			}
		}
	})
	return errors.Join(errs...)
}
