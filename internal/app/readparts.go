package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/projector"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/tokens"
	"go.uber.org/zap"
)

// A retriever run apart with more than one partition keeps the read
// model of the partitions it holds, not of every user (docs/scale.md has
// the design and the figures). It holds a fair share of the partitions
// through the same leases as the extractors (group "retriever" in
// stream.PartitionBucket), and keeps each partition in a file of its own
// (config.ReadPartitionPath), fed by a consumer of its own that reads
// MEMORY from the file's position and passes over the other partitions'
// events by their subject, undecoded.
//
// A copy of a partition is building until it has read the stream as far
// as it was when the copy was opened, then serving. Only copies that
// answer subscribe to the partition's subjects (natsapi.ServePartition):
// a serving copy always; a building copy only while no other instance's
// copy serves, and then its answers say they may be incomplete. A
// retriever that lets a partition go (another joined) keeps its copy
// answering until the taker's copy serves, then closes it and deletes its
// file. Every copy's state is published beside the leases
// (stream.PartitionState), for the other retrievers and the operators.

// ReadGroup is the retrievers' group in the partition bucket.
const ReadGroup = stream.RoleRetriever

// readProbe is how often a partitioned retriever asks the others whether
// they are still on the bus: a killed one's partitions are taken a probe
// or two after its death, not when its leases expire (stream/alive.go).
// Copies only read, so two answering for one partition a moment do no
// harm.
const readProbe = time.Second

// partitionedReads says whether this process keeps a partitioned read
// model: a retriever run apart when the users are split into more than
// one partition. A process that also extracts or consolidates reads any
// user and keeps the whole read model, as the single binary does.
func (a *App) partitionedReads() bool {
	return a.Config.Partitions > 1 && a.Roles&RoleRetriever != 0 && a.Roles&(RoleExtractor|RoleConsolidator) == 0
}

// routesByPartition says whether this process's API is a front that
// sends each user's requests to the user's partition: a partitioned
// retriever, or an ingest run apart beside partitioned retrievers.
func (a *App) routesByPartition() bool {
	return a.Config.Partitions > 1 && a.Roles&(RoleExtractor|RoleConsolidator) == 0 && a.Roles&(RoleIngest|RoleRetriever) != 0
}

// readParts is a partitioned retriever's read model: its copies of the
// partitions it holds, or is handing over.
type readParts struct {
	a        *App
	n        int
	leases   *stream.Leases
	embedder *llm.Client
	log      *zap.Logger
	// round asks the state loop for a round now (a copy opened, caught
	// up or let go).
	round chan struct{}

	mu sync.Mutex
	// released is signalled, under mu, when a request lets go of a copy.
	released *sync.Cond
	parts    map[int]*readPart
	// opening are the partitions whose copy is being opened.
	opening map[int]bool
	// servedElsewhere is, per partition, whether another instance's copy
	// serves it, as the last round read the states.
	servedElsewhere map[int]bool
	started         time.Time
	// swept is set once the consumers this instance left behind before a
	// restart have been looked for.
	swept bool
}

// readPart is this process's copy of one partition.
type readPart struct {
	p, n   int
	path   string
	store  *sqlite.Store
	engine *retrieval.Engine
	api    http.Handler
	answer *natsapi.Partition
	proj   *projection
	// target is MEMORY's last sequence when the copy was opened: the copy
	// serves once it has read that far.
	target  uint64
	passed  atomic.Uint64
	serving atomic.Bool
	held    atomic.Bool
	// svc is the partition's service while this copy answers, nil
	// otherwise; refs counts the requests using the copy now. Both are
	// guarded by readParts.mu.
	svc  natsapi.Service
	refs int

	cancel context.CancelFunc
	done   chan struct{}

	// users and rows are what the copy holds, counted now and then
	// (written under readParts.mu); counted is when.
	users   int
	rows    map[string]int64
	counted time.Time
}

// building says how far a copy still being built has come, "" once it
// serves: the words an answer from it carries.
func (rp *readPart) building() string {
	if rp.serving.Load() {
		return ""
	}
	return fmt.Sprintf("partition %d is being rebuilt: %d of %d events read", rp.p, rp.passed.Load(), rp.target)
}

// openReadParts starts holding partitions: the leases, the state loop and
// the retriever service that routes every user's request to its
// partition.
func (a *App) openReadParts(ctx, runCtx context.Context, embedder *llm.Client) error {
	n := a.Config.Partitions
	log := a.Log.Named("partitions")
	leases, err := stream.OpenLeases(ctx, a.bus(stream.RoleRetriever).js, stream.LeaseConfig{Group: ReadGroup,
		Instance: a.Config.Instance, N: n, Probe: readProbe}, log)
	if err != nil {
		return err
	}
	rp := &readParts{a: a, n: n, leases: leases, embedder: embedder, log: log, round: make(chan struct{}, 1),
		parts: map[int]*readPart{}, opening: map[int]bool{}, servedElsewhere: map[int]bool{}, started: time.Now()}
	rp.released = sync.NewCond(&rp.mu)
	a.reads = rp
	rp.dropOtherLayouts()
	// Any retriever answers the ingest's digest question: it reads the
	// stream, not a partition's copy.
	svc, err := natsapi.ServeRouter(a.router(stream.RoleRetriever), stream.ReadDigest(a.bus(stream.RoleRetriever).js),
		Version, a.Log.Named("natsapi"))
	if err != nil {
		return fmt.Errorf("nats search service: %w", err)
	}
	a.services = append(a.services, svc)
	a.goWorker(runCtx, "retriever partitions", func(ctx context.Context) error {
		leases.Run(ctx, rp.hold)
		return nil
	})
	a.goWorker(runCtx, "retriever partition states", func(ctx context.Context) error {
		rp.run(ctx)
		return nil
	})
	return nil
}

// router sends requests to each user's partition, as bus user role: to
// this process's copy when it answers for it.
func (a *App) router(role string) *natsapi.Router {
	r := &natsapi.Router{NC: a.bus(role).nc, N: a.Config.Partitions, Wait: a.leaseTTL + 5*time.Second,
		Local: func(int) (*natsapi.Partition, func()) { return nil, nil }}
	if rp := a.reads; rp != nil {
		r.Local = func(p int) (*natsapi.Partition, func()) {
			if part, release := rp.answering(p); part != nil {
				return part.answer, release
			}
			return nil, nil
		}
	}
	return r
}

// answering is this process's copy of partition p when it answers for it,
// kept open until release.
func (rp *readParts) answering(p int) (*readPart, func()) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if part := rp.parts[p]; part != nil && part.svc != nil {
		part.refs++
		return part, func() { rp.release(part) }
	}
	return nil, nil
}

// acquire keeps part open for one request, false once it is closing.
func (rp *readParts) acquire(part *readPart) (func(), bool) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.parts[part.p] != part {
		return nil, false
	}
	part.refs++
	return func() { rp.release(part) }, true
}

func (rp *readParts) release(part *readPart) {
	rp.mu.Lock()
	part.refs--
	rp.mu.Unlock()
	rp.released.Broadcast()
}

// unused waits until no request uses part; it is out of parts already,
// so no request takes it again.
func (rp *readParts) unused(part *readPart) {
	rp.mu.Lock()
	for part.refs > 0 {
		rp.released.Wait()
	}
	rp.mu.Unlock()
}

// hold is what the leases run while this instance holds partition p: it
// makes sure the copy is open, and marks it let go when the lease ends.
// The copy itself lives on until another serves the partition (run).
func (rp *readParts) hold(ctx context.Context, p int) {
	rp.mu.Lock()
	part := rp.parts[p]
	if part == nil && !rp.opening[p] {
		rp.opening[p] = true
	}
	rp.mu.Unlock()
	if part == nil {
		for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
			var err error
			part, err = rp.open(ctx, p)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				rp.mu.Lock()
				delete(rp.opening, p)
				rp.mu.Unlock()
				return
			}
			rp.log.Warn("open partition copy; trying again", zap.Int("partition", p), zap.Error(err))
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		rp.mu.Lock()
		delete(rp.opening, p)
		rp.parts[p] = part
		rp.mu.Unlock()
	}
	part.held.Store(true)
	rp.nudge()
	<-ctx.Done()
	part.held.Store(false)
	rp.nudge()
}

func (rp *readParts) nudge() {
	select {
	case rp.round <- struct{}{}:
	default:
	}
}

// open opens the copy of partition p and starts its projection.
func (rp *readParts) open(ctx context.Context, p int) (*readPart, error) {
	a := rp.a
	path := a.Config.ReadPartitionPath(p, rp.n)
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	part := &readPart{p: p, n: rp.n, path: path, store: store}
	fail := func(err error) (*readPart, error) {
		quiet.Close(store) // on a path that fails with its own error
		return nil, err
	}
	follow, err := a.checkOrigin(ctx, store)
	if err != nil {
		return fail(err)
	}
	head, err := stream.Head(ctx, a.js)
	if err != nil {
		return fail(err)
	}
	last, err := store.LastSeq(ctx)
	if err != nil {
		return fail(err)
	}
	part.target = head
	part.passed.Store(last)
	part.serving.Store(last >= part.target)
	n := rp.n
	part.proj = &projection{store: store, durable: stream.PartitionDurable(a.projectorDurable(), p, n),
		description: fmt.Sprintf("engram projector: applies partition %d of %d of the users to this retriever's copy of it", p+1, n),
		keep:        stream.KeepPartition(p, n),
		inactive:    max(3*a.leaseTTL, 15*time.Second), passed: &part.passed}
	log := rp.log.With(zap.Int("partition", p))
	var cons *stream.Consumer // nil: a stream the copy may not follow; the projector waits
	if follow {
		if cons, err = a.projectorConsumer(ctx, part.proj, log); err != nil {
			return fail(err)
		}
	}
	part.engine = a.newEngine(store, rp.embedder)
	part.api = a.partitionAPI(part).CopyAPI()
	part.answer = &natsapi.Partition{Searcher: part.engine, Engine: part.engine, Building: part.building,
		Acquire: func() (func(), bool) { return rp.acquire(part) },
		HTTP: func(ctx context.Context, namespace string, req natsapi.HTTPRequest) natsapi.HTTPResponse {
			ans := httpapi.AnswerForwarded(ctx, part.api, namespace,
				httpapi.Forwarded{Method: req.Method, URL: req.URL, Header: req.Header, Body: req.Body})
			return natsapi.HTTPResponse{Status: ans.Status, Header: ans.Header, Body: ans.Body}
		}}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	part.cancel, part.done = cancel, make(chan struct{})
	proj := projector.New(store, log)
	h := part.proj
	go func() {
		defer close(part.done)
		// The copy's full-text indexes are merged while it is idle, as
		// the whole read model's are (openReadModel).
		var compaction sync.WaitGroup
		compaction.Go(func() {
			a.runWorker(pctx, fmt.Sprintf("index compaction (partition %d)", p), func(ctx context.Context) error {
				store.Compact(ctx, a.compaction, func(err error) { log.Warn("full-text index compaction", zap.Error(err)) })
				return nil
			})
		})
		a.runWorker(pctx, fmt.Sprintf("projector (partition %d)", p), func(ctx context.Context) error {
			return a.runProjector(ctx, h, cons, proj, log)
		})
		compaction.Wait()
	}()
	log.Info("partition copy opened", zap.Uint64("position", last), zap.Uint64("target", part.target),
		zap.Bool("serving", part.serving.Load()))
	return part, nil
}

// partitionAPI is the HTTP API of a partition's copy: the retriever's
// routes over the copy's read model.
func (a *App) partitionAPI(part *readPart) *httpapi.Server {
	return &httpapi.Server{
		Publisher:      a.httpPublisher(a.js, stream.ReadDigest(a.js)),
		Searcher:       part.engine,
		Memories:       part.store,
		Context:        part.engine,
		Consolidation:  remoteQueue{Store: part.store, nc: a.nc},
		Projected:      func(ctx context.Context, seq uint64) error { return waitApplied(ctx, part.store, seq) },
		MaxEventBytes:  a.Config.HTTP.MaxEventBytes,
		MaxBatchEvents: a.Config.HTTP.MaxBatchEvents,
		Log:            a.Log.Named("http").With(zap.Int("partition", part.p)),
		Building:       part.building,
	}
}

// newEngine is a retriever's engine over store.
func (a *App) newEngine(store *sqlite.Store, embedder *llm.Client) *retrieval.Engine {
	e := retrieval.NewEngine(store)
	e.Preset = a.Config.Retrieval.Preset
	e.Onboarding = a.Config.Retrieval.Onboarding
	for name, p := range a.Config.Retrieval.Personas {
		kinds := make([]memory.Kind, len(p.Kinds))
		for i, k := range p.Kinds {
			kinds[i] = memory.Kind(k)
		}
		e.Personas[name] = retrieval.Persona{Kinds: kinds, Boost: p.Boost}
	}
	e.Tokens = func(model string) retrieval.Counter {
		if model == "" {
			model = a.Config.ContextModel
		}
		return tokens.For(model)
	}
	if a.access != nil {
		e.Recorder = a.access
	}
	e.Degraded = a.degradedFn
	if a.retrievalNow != nil {
		e.Now = a.retrievalNow
	}
	if embedder != nil {
		e.Vectors = &queryVectors{client: embedder, store: store, model: a.Config.Embed.Model,
			timeout: a.Config.Embed.QueryTimeout}
	}
	return e
}

// run keeps the copies' states until ctx ends, then closes every copy,
// keeping its file: a restart within the lease TTL takes the same
// partitions back and goes on from where each copy was.
func (rp *readParts) run(ctx context.Context) {
	every := rp.a.leaseTTL / 4
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		rp.step(ctx)
		select {
		case <-ctx.Done():
			rp.closeAll()
			return
		case <-tick.C:
		case <-rp.round:
		}
	}
}

// step is one round: read the stream's head and the other instances'
// states, let each copy serve, answer, or go, and publish its state.
func (rp *readParts) step(ctx context.Context) {
	a := rp.a
	var head uint64
	if h, err := stream.Head(ctx, a.js); err == nil {
		head = h
	}
	states, err := rp.leases.States(ctx)
	if err != nil {
		if ctx.Err() == nil {
			rp.log.Warn("read partition states", zap.Error(err))
		}
		return
	}
	if a.routes != nil {
		a.routes.update(states)
	}
	elsewhere := map[int]bool{}
	for _, st := range states {
		if st.Instance != a.Config.Instance && st.State == stream.StateServing {
			elsewhere[st.Partition] = true
		}
	}
	rp.mu.Lock()
	rp.servedElsewhere = elsewhere
	parts := make([]*readPart, 0, len(rp.parts))
	for _, part := range rp.parts {
		parts = append(parts, part)
	}
	rp.mu.Unlock()
	for _, part := range parts {
		if !part.serving.Load() && rp.caughtUp(ctx, part) {
			part.serving.Store(true)
			rp.log.Info("partition copy serves", zap.Int("partition", part.p), zap.Uint64("position", part.passed.Load()))
		}
		if !part.held.Load() && elsewhere[part.p] {
			rp.drop(ctx, part)
			continue
		}
		rp.setAnswering(part, part.serving.Load() || !elsewhere[part.p])
		rp.publish(ctx, part, head)
	}
	rp.janitor(ctx)
}

// caughtUp says whether a building copy has read the stream as far as it
// was when the copy was opened: by its own position, or, when the
// stream's last messages are gone (a user erased), by its consumer's.
func (rp *readParts) caughtUp(ctx context.Context, part *readPart) bool {
	if part.passed.Load() >= part.target {
		return true
	}
	floor, err := stream.AckFloor(ctx, rp.a.js, part.proj.durable)
	return err == nil && floor >= part.target
}

// setAnswering subscribes the copy to its partition's subjects, or
// unsubscribes it. The service stops outside rp.mu: its Stop waits for
// the requests it is answering, and they take rp.mu to let go of the
// copy.
func (rp *readParts) setAnswering(part *readPart, on bool) {
	rp.mu.Lock()
	switch {
	case on && part.svc == nil:
		defer rp.mu.Unlock()
		svc, err := natsapi.ServePartition(rp.a.nc, part.p, part.answer, Version, rp.a.Log.Named("natsapi"))
		if err != nil {
			rp.log.Warn("serve partition", zap.Int("partition", part.p), zap.Error(err))
			return
		}
		part.svc = svc
		rp.log.Info("partition copy answers", zap.Int("partition", part.p), zap.Bool("serving", part.serving.Load()))
	case !on && part.svc != nil:
		svc := part.svc
		part.svc = nil
		rp.mu.Unlock()
		if err := svc.Stop(); err != nil {
			rp.log.Warn("stop partition service", zap.Int("partition", part.p), zap.Error(err))
		}
	default:
		rp.mu.Unlock()
	}
}

// publish writes the copy's state, counting its rows now and then.
func (rp *readParts) publish(ctx context.Context, part *readPart, head uint64) {
	if time.Since(part.counted) > 30*time.Second {
		if users, rows, err := part.store.Rows(ctx); err == nil {
			rp.mu.Lock()
			part.users, part.rows = users, rows
			rp.mu.Unlock()
			part.counted = time.Now()
		}
	}
	st := stream.PartitionState{Partition: part.p, State: stream.StateBuilding, Held: part.held.Load(), URL: rp.a.advertisedURL(),
		Position: part.passed.Load(), Head: max(head, part.passed.Load()), Users: part.users, Rows: part.rows,
		Bytes: fileBytes(part.path)}
	if part.serving.Load() {
		st.State = stream.StateServing
	} else {
		st.Target = part.target
	}
	if err := rp.leases.PutState(ctx, st); err != nil && ctx.Err() == nil {
		rp.log.Warn("publish partition state", zap.Int("partition", part.p), zap.Error(err))
	}
}

// drop closes a copy another instance now serves, and deletes its file:
// what a retriever no longer holds costs it no disk (docs/scale.md).
func (rp *readParts) drop(ctx context.Context, part *readPart) {
	rp.setAnswering(part, false)
	rp.mu.Lock()
	delete(rp.parts, part.p)
	rp.mu.Unlock()
	rp.unused(part)
	rp.stop(part)
	if err := rp.leases.DropState(ctx, part.p); err != nil {
		rp.log.Warn("withdraw partition state", zap.Int("partition", part.p), zap.Error(err))
	}
	if err := stream.DeleteConsumer(ctx, rp.a.js, part.proj.durable); err != nil {
		rp.log.Debug("delete partition consumer", zap.Error(err))
	}
	removeReadModel(part.path, rp.log)
	rp.log.Info("partition copy dropped: another retriever serves it", zap.Int("partition", part.p))
}

// stop ends a copy's projection and closes its read model.
func (rp *readParts) stop(part *readPart) {
	part.cancel()
	<-part.done
	if err := part.store.Close(); err != nil {
		rp.log.Warn("close partition copy", zap.Int("partition", part.p), zap.Error(err))
	}
}

// closeAll stops answering and closes every copy, at shutdown.
func (rp *readParts) closeAll() {
	rp.mu.Lock()
	parts := rp.parts
	rp.parts = map[int]*readPart{}
	rp.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, part := range parts {
		rp.setAnswering(part, false)
		if err := rp.leases.DropState(ctx, part.p); err != nil {
			rp.log.Debug("withdraw partition state", zap.Error(err))
		}
	}
	for _, part := range parts {
		rp.unused(part)
		rp.stop(part)
	}
}

// partitionFile matches the files of partitioned copies.
var partitionFile = regexp.MustCompile(`^engram-([0-9]+)of([0-9]+)\.db$`)

// dropOtherLayouts deletes the copies of another number of partitions:
// their users are split otherwise now, and no lease leads back to them.
func (rp *readParts) dropOtherLayouts() {
	for _, f := range rp.files() {
		if f.n != rp.n {
			rp.log.Info("deleting a partition copy of another number of partitions", zap.String("file", f.path))
			removeReadModel(f.path, rp.log)
		}
	}
}

// janitor deletes, once the leases have settled after start, the copies
// of partitions this instance neither holds nor keeps, and, once, the
// consumers of such copies it left behind when it died.
func (rp *readParts) janitor(ctx context.Context) {
	if time.Since(rp.started) < 2*rp.a.leaseTTL {
		return
	}
	if !rp.swept {
		rp.swept = rp.sweepConsumers(ctx) == nil
	}
	for _, f := range rp.files() {
		rp.mu.Lock()
		kept := rp.parts[f.p] != nil || rp.opening[f.p]
		rp.mu.Unlock()
		if f.n == rp.n && !kept {
			rp.log.Info("deleting the copy of a partition this retriever no longer holds", zap.String("file", f.path))
			removeReadModel(f.path, rp.log)
		}
	}
}

// sweepConsumers deletes this instance's projector consumers of copies
// it does not keep: JetStream would delete them once idle
// (projection.inactive), and until then they show a backlog that no one
// reads.
func (rp *readParts) sweepConsumers(ctx context.Context) error {
	names, err := stream.ConsumerNames(ctx, rp.a.js)
	if err != nil {
		return err
	}
	base := rp.a.projectorDurable()
	var stale []string
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, base+"-")
		if !ok {
			continue
		}
		m := partitionDurable.FindStringSubmatch(rest)
		if m == nil {
			continue
		}
		k, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		rp.mu.Lock()
		kept := n == rp.n && (rp.parts[k-1] != nil || rp.opening[k-1])
		rp.mu.Unlock()
		if !kept {
			stale = append(stale, name)
		}
	}
	for _, name := range stale {
		if err := stream.DeleteConsumer(ctx, rp.a.js, name); err != nil {
			rp.log.Debug("delete a consumer left behind", zap.String("consumer", name), zap.Error(err))
		}
	}
	return nil
}

// partitionDurable matches what stream.PartitionDurable adds to a base.
var partitionDurable = regexp.MustCompile(`^([0-9]+)of([0-9]+)$`)

type partitionCopyFile struct {
	path string
	p, n int
}

func (rp *readParts) files() []partitionCopyFile {
	entries, err := os.ReadDir(rp.a.Config.DataDir)
	if err != nil {
		return nil
	}
	var out []partitionCopyFile
	for _, e := range entries {
		m := partitionFile.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		k, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		out = append(out, partitionCopyFile{path: filepath.Join(rp.a.Config.DataDir, e.Name()), p: k - 1, n: n})
	}
	return out
}

// removeReadModel deletes a read model's file and its write-ahead log.
func removeReadModel(path string, log *zap.Logger) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("delete read model file", zap.String("file", path+suffix), zap.Error(err))
		}
	}
}

// fileBytes is the size of a read model on disk, its write-ahead log
// included.
func fileBytes(path string) int64 {
	var n int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// readiness says whether every partition this instance holds serves.
func (rp *readParts) readiness() error {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	var building []string
	for _, part := range rp.parts {
		if part.held.Load() && !part.serving.Load() {
			building = append(building, part.building())
		}
	}
	for p := range rp.opening {
		building = append(building, fmt.Sprintf("partition %d is being opened", p))
	}
	if len(building) > 0 {
		return errors.New(strings.Join(building, "; "))
	}
	return nil
}

// ping checks that every copy's read model answers.
func (rp *readParts) ping(ctx context.Context) error {
	rp.mu.Lock()
	parts := make([]*readPart, 0, len(rp.parts))
	for _, part := range rp.parts {
		parts = append(parts, part)
	}
	rp.mu.Unlock()
	for _, part := range parts {
		if err := part.store.Ping(ctx); err != nil {
			return fmt.Errorf("read model of partition %d: %w", part.p, err)
		}
	}
	return nil
}

// owner is the front's Owner: each user's partition, answered by this
// process's copy when it answers for it, forwarded over NATS otherwise.
type owner struct {
	n      int
	reads  *readParts // nil in an ingest
	router *natsapi.Router
	// routes and relay send a request over HTTP when the copy that
	// answers is reached there; front names this instance in it.
	routes *routes
	relay  *httpapi.Relay
	front  string
}

var _ httpapi.Owner = owner{}

func (o owner) Partition(scope memory.Scope) int {
	return stream.PartitionOf(scope.Namespace, scope.User, o.n)
}

func (o owner) Partitions() int { return o.n }

func (o owner) Local(p int) (http.Handler, func()) {
	if o.reads == nil {
		return nil, nil
	}
	if part, release := o.reads.answering(p); part != nil {
		return part.api, release
	}
	return nil, nil
}

func (o owner) Forward(ctx context.Context, namespace string, p int, req httpapi.Forwarded) (httpapi.Answer, error) {
	if o.routes != nil {
		if ans, sent, err := o.routes.forward(ctx, o.relay, o.front, p, req); sent {
			return ans, err
		}
	}
	ans, err := o.router.ForwardHTTP(ctx, namespace, p,
		natsapi.HTTPRequest{Method: req.Method, URL: req.URL, Header: req.Header, Body: req.Body})
	if err != nil {
		return httpapi.Answer{}, err
	}
	return httpapi.Answer{Status: ans.Status, Header: ans.Header, Body: ans.Body}, nil
}

// advertisedURL is where the other instances reach this one's API, ""
// when it advertises none.
func (a *App) advertisedURL() string {
	if u := a.advertised.Load(); u != nil {
		return *u
	}
	return ""
}

// partitionReadiness says which instance's copy of partition p serves,
// from the states the copies publish; or why none does.
func (a *App) partitionReadiness(ctx context.Context, p int) (string, error) {
	if p >= a.Config.Partitions {
		return "", memory.Errorf(memory.EINVALID, "partition: %d is not one of the %d partitions (0..%d)", p, a.Config.Partitions, a.Config.Partitions-1)
	}
	states, err := stream.PartitionStates(ctx, a.js, ReadGroup)
	if err != nil {
		return "", err
	}
	var building []string
	for _, st := range states {
		if st.Partition != p {
			continue
		}
		if st.State == stream.StateServing {
			return st.Instance, nil
		}
		building = append(building, fmt.Sprintf("%s is rebuilding it: %d of %d events read", st.Instance, st.Position, st.Target))
	}
	if len(building) > 0 {
		return "", fmt.Errorf("partition %d: %s", p, strings.Join(building, "; "))
	}
	return "", fmt.Errorf("partition %d: no retriever holds it now (one takes it within the lease TTL, %v)", p, a.leaseTTL)
}

// figures are the copies' gauges for /metrics, head being MEMORY's last
// sequence now.
func (rp *readParts) figures(head uint64) []metrics.PartitionCopy {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	out := make([]metrics.PartitionCopy, 0, len(rp.parts))
	for _, part := range rp.parts {
		pos := part.passed.Load()
		pc := metrics.PartitionCopy{Partition: part.p, Serving: part.serving.Load(), Held: part.held.Load(),
			Lag: head - min(pos, head), Progress: 1, Users: part.users, Rows: part.rows, Bytes: fileBytes(part.path)}
		if !pc.Serving && part.target > 0 {
			pc.Progress = float64(min(pos, part.target)) / float64(part.target)
		}
		out = append(out, pc)
	}
	return out
}
