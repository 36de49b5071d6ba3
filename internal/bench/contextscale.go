package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/tokens"
	"go.uber.org/zap"
)

// ContextPoint is /v1/context latency at one size.
type ContextPoint struct {
	Memories, Turns, Users int
	Latency                Latency
	// Dialogue is the latency of a 2,000-character dialogue: a question
	// with the recent messages an agent passes along.
	Dialogue Latency
	// Ingested is the rate at which turns were applied to the read model
	// while the queries ran (events a second; 0: none were).
	Ingested float64
	// CPU and DialogueCPU are the process's CPU time per request (ms,
	// user and system, the HTTP client and server included, and the
	// ingest beside it when there is one): a figure the machine's other
	// load moves far less than latency.
	CPU, DialogueCPU float64
}

// ContextScale fills one namespace with memories and turns (straight
// through Apply), shared evenly by users, and times POST /v1/context over
// HTTP for one of them. users = 1 is the worst case for a per-user query:
// one user holds everything.
//
// With keep set, the read model is kept in that directory and a later run
// with the same sizes queries it without loading again (for profiling).
//
// With ingest > 0, turns are applied to the read model at that rate (a
// second) while the queries run, to users of a namespace of their own:
// the writer and the readers share the file, its index and its log, and
// the queried user's data stays as loaded; each kind of query is then
// timed for at least ingestWindow.
func ContextScale(ctx context.Context, memories, turns, users, queries, ingest int, keep string, progress func(string)) (*ContextPoint, error) {
	dir := keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "engram-ctxscale-")
		if err != nil {
			return nil, err
		}
		defer quiet.RemoveAll(tmp)
		dir = tmp
	}
	name := filepath.Join(dir, fmt.Sprintf("ctx-%d-%d-%d.db", memories, turns, users))
	_, statErr := os.Stat(name + ".loaded")
	loaded := statErr == nil
	store, err := sqlite.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer quiet.Close(store) // a scratch store, dropped after the run
	if !loaded {
		if err := loadContextScale(ctx, store, memories, turns, users, progress); err != nil {
			return nil, err
		}
		if err := os.WriteFile(name+".loaded", nil, 0o644); err != nil {
			return nil, err
		}
	}
	if err := compactIdle(ctx, store, progress); err != nil {
		return nil, err
	}
	p, err := queryContextScale(ctx, store, memories, turns, users, queries, ingest, progress)
	if err != nil {
		return nil, err
	}
	if ingest > 0 {
		segs, err := store.TextSegments(ctx)
		if err != nil {
			return nil, err
		}
		progress(fmt.Sprintf("full-text segments once the ingest beside stopped: %v", segs))
	}
	return p, nil
}

func loadContextScale(ctx context.Context, store *sqlite.Store, memories, turns, users int, progress func(string)) error {
	c := newCorpus(7)
	scope := memory.Scope{Namespace: "big", User: "heavy"}
	userOf := func(j int) memory.Scope {
		if j%users == 0 {
			return scope
		}
		return memory.Scope{Namespace: "big", User: fmt.Sprintf("u%d", j%users)}
	}
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	seq := uint64(0)
	start := time.Now()
	kinds := []string{"fact", "preference", "rule", "context", "skill"}
	cats := []string{"config", "decision", "event", "solution", "conversation"}
	for i := 0; i < memories; i += 1000 {
		batch := make([]memory.Applied, 0, 1000)
		for j := i; j < min(i+1000, memories); j++ {
			seq++
			d := &events.MemoryAdded{Kind: kinds[j%len(kinds)], Category: cats[j%len(cats)],
				Subject: c.en[c.zipfE.Uint64()%20000], Predicate: fmt.Sprintf("p%d", j%50), Content: c.sentence(),
				Importance: float64(j%10) / 10, Confidence: 0.9}
			batch = append(batch, memory.Applied{Envelope: memory.Envelope{Seq: seq, Source: "bench", ID: fmt.Sprintf("m%d", j),
				Type: events.TypeMemoryAdded, Scope: userOf(j), Time: at.Add(time.Duration(j) * time.Minute)}, Data: d})
		}
		for _, err := range store.Apply(ctx, batch) {
			if err != nil {
				return err
			}
		}
	}
	progress(fmt.Sprintf("loaded %d memories in %s", memories, time.Since(start).Round(time.Second)))
	start = time.Now()
	for i := 0; i < turns; i += 2000 {
		_, applied := turnEvents(c, scope.Namespace, scope.User, i, min(2000, turns-i), at)
		for j := range applied {
			seq++
			applied[j].Seq = seq
			applied[j].Scope = userOf(i + j)
			applied[j].ID = fmt.Sprintf("%s-t%d", applied[j].Scope.User, i+j)
		}
		for _, err := range store.Apply(ctx, applied) {
			if err != nil {
				return err
			}
		}
	}
	progress(fmt.Sprintf("loaded %d turns in %s", turns, time.Since(start).Round(time.Second)))
	return nil
}

// ingestLeadIn is how long the ingest beside runs before the queries are
// timed: the full-text index then has the segments steady ingest keeps,
// not the one an idle merge left.
const ingestLeadIn = 10 * time.Second

// ingestWindow is the least time each kind of query is timed for with
// ingest beside (see queryContextScale).
const ingestWindow = 10 * time.Second

func queryContextScale(ctx context.Context, store *sqlite.Store, memories, turns, users, queries, ingest int, progress func(string)) (*ContextPoint, error) {
	engine := retrieval.NewEngine(store)
	engine.Tokens = func(string) retrieval.Counter { return tokens.For("gpt-4o") }
	srv := httptest.NewServer((&httpapi.Server{Context: engine, Log: zap.NewNop()}).Handler())
	defer srv.Close()
	post := func(q string, recent ...map[string]string) error {
		body, _ := json.Marshal(map[string]any{"namespace": "big", "user": "heavy", "query": q, "force": true, "recent_messages": recent})
		resp, err := srv.Client().Post(srv.URL+"/v1/context", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer quiet.Close(resp.Body)
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("context: %d %s", resp.StatusCode, raw)
		}
		return nil
	}
	q := newCorpus(99)
	for range 50 { // warm the page cache as a running server's would be
		if err := post(q.query()); err != nil {
			return nil, err
		}
	}
	stopIngest := func() (float64, error) { return 0, nil }
	if ingest > 0 {
		// As a running engram does: its compaction beside the projector.
		cctx, cancel := context.WithCancel(ctx)
		var compacting sync.WaitGroup
		compacting.Go(func() {
			store.Compact(cctx, sqlite.DefaultCompaction, func(err error) { progress(err.Error()) })
		})
		leadCPU := cpuTime()
		stop := ingestWhile(ctx, store, ingest)
		stopIngest = func() (float64, error) {
			rate, err := stop()
			cancel()
			compacting.Wait()
			return rate, err
		}
		select {
		case <-ctx.Done():
			_, _ = stopIngest() // the run is ending with ctx's error
			return nil, ctx.Err()
		case <-time.After(ingestLeadIn):
		}
		// Nothing but the ingest (and a compaction look) ran meanwhile:
		// what writing costs, apart from the reads.
		progress(fmt.Sprintf("the ingest alone used %.0f ms of CPU a second over the %s before the queries",
			ms(cpuTime()-leadCPU)/ingestLeadIn.Seconds(), ingestLeadIn))
		segs, err := store.TextSegments(ctx)
		if err != nil {
			_, _ = stopIngest() // on a path that fails with its own error
			return nil, err
		}
		progress(fmt.Sprintf("full-text segments after %s of ingest beside: %v", ingestLeadIn, segs))
		seen := watchSegments(ctx, store)
		stopped := stopIngest
		stopIngest = func() (float64, error) {
			rate, err := stopped()
			progress("turns_fts segments while the queries ran: " + seen())
			return rate, err
		}
	}
	// With ingest beside, each kind of query runs for a window as well as
	// a count: the writer's periodic work (checkpoints, index merges) then
	// falls inside it as often as it does in a running engram, instead of
	// once or not at all in the second a thousand queries take.
	window := time.Duration(0)
	if ingest > 0 {
		window = ingestWindow
	}
	cpu0 := cpuTime()
	var d []time.Duration
	for start := time.Now(); len(d) < queries || time.Since(start) < window; {
		text := q.query()
		t0 := time.Now()
		if err := post(text); err != nil {
			_, _ = stopIngest() // on a path that fails with its own error
			return nil, err
		}
		d = append(d, time.Since(t0))
	}
	cpu1 := cpuTime()
	var dialogue []time.Duration
	for start := time.Now(); len(dialogue) < max(queries/4, 1) || time.Since(start) < window; {
		var recent []map[string]string
		chars := 0
		for chars < 2000 {
			m := q.query()
			for len([]rune(m)) < 200 {
				m += " " + q.query()
			}
			chars += len([]rune(m))
			recent = append(recent, map[string]string{"role": []string{"user", "assistant"}[len(recent)%2], "content": m})
		}
		t0 := time.Now()
		if err := post(q.query(), recent...); err != nil {
			_, _ = stopIngest() // on a path that fails with its own error
			return nil, err
		}
		dialogue = append(dialogue, time.Since(t0))
	}
	cpu2 := cpuTime()
	rate, err := stopIngest()
	if err != nil {
		return nil, fmt.Errorf("ingest beside the queries: %w", err)
	}
	return &ContextPoint{Memories: memories, Turns: turns, Users: users, Latency: summarize(d), Dialogue: summarize(dialogue),
		Ingested: rate, CPU: ms(cpu1-cpu0) / float64(len(d)), DialogueCPU: ms(cpu2-cpu1) / float64(len(dialogue))}, nil
}

// compactIdle merges the read model's full-text indexes as a running
// engram does once the load has stopped (sqlite.Store.Compact): the
// queries then meet the index a server idle for a few seconds has.
func compactIdle(ctx context.Context, store *sqlite.Store, progress func(string)) error {
	start := time.Now()
	before, err := store.TextSegments(ctx)
	if err != nil {
		return err
	}
	for segs := before; segs.Over(1); {
		if segs, err = store.CompactText(ctx, 4096, segs); err != nil {
			return err
		}
	}
	progress(fmt.Sprintf("full-text indexes of %v segments merged into one each, as an idle engram does, in %s",
		before, time.Since(start).Round(time.Millisecond)))
	return nil
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ingestWhile applies turns to store at rate a second, a batch every
// 10 ms (as the projector applies what the stream delivers), to 100 users
// of the namespace "live", until the function it returns is called; that
// stops it, waits for it, and returns the rate it kept.
func ingestWhile(ctx context.Context, store *sqlite.Store, rate int) func() (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var applied int
	var err error
	start := time.Now()
	go func() { // owned: the returned function cancels and waits for it
		defer close(done)
		seq, lerr := store.LastSeq(ctx)
		if lerr != nil {
			err = lerr
			return
		}
		c := newCorpus(uint64(start.UnixNano()))
		run := start.Format("150405.000000")
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				// As many as the rate owes by now: a slow apply is caught up.
				due := int(now.Sub(start).Seconds()*float64(rate)) - applied
				if due <= 0 {
					continue
				}
				_, batch := turnEvents(c, "live", "", applied, due, now.UTC())
				for j := range batch {
					seq++
					n := applied + j
					batch[j].Seq = seq
					// Users of this run alone: a kept read model holds the
					// turns of earlier runs under the same sessions and
					// indexes, and those would be replaced, not added.
					batch[j].Scope.User = fmt.Sprintf("live%s-%d", run, n%100)
					batch[j].ID = fmt.Sprintf("%s-%d", run, n)
				}
				for _, aerr := range store.Apply(ctx, batch) {
					if aerr != nil && ctx.Err() == nil {
						err = aerr
						return
					}
				}
				applied += due
			}
		}
	}()
	return func() (float64, error) {
		cancel()
		<-done
		return float64(applied) / time.Since(start).Seconds(), err
	}
}

// watchSegments counts the turns index's segments every 250 ms until the
// function it returns is called, which says their mean and most.
func watchSegments(ctx context.Context, store *sqlite.Store) func() string {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var sum, most, n int
	go func() { // owned: the returned function cancels and waits for it
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			segs, err := store.TextSegments(ctx)
			if err != nil {
				continue // a count missed; the next one is taken
			}
			sum, most, n = sum+segs["turns_fts"], max(most, segs["turns_fts"]), n+1
		}
	}()
	return func() string {
		cancel()
		<-done
		return fmt.Sprintf("mean %.1f, most %d (%d counts)", float64(sum)/float64(max(n, 1)), most, n)
	}
}
