package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"net/http/httptest"

	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/sqlite"
	"go.uber.org/zap"
)

// ScalePoint is search latency with Turns turns in the queried namespace.
type ScalePoint struct {
	Turns   int
	Users   int
	Other   int // turns in other namespaces
	Latency Latency
	Load    time.Duration
	// CPU is the process's CPU time per query (ms, user and system, the
	// HTTP client and server included): it shakes less than latency on a
	// shared machine.
	CPU float64
}

// SearchScale fills a read model (straight through Apply: the pipeline's
// rate is measured by Ingest) to each size in steps and times /v1/search
// over HTTP, with one user holding
// every turn of the namespace — the worst case for a per-user query — and
// another namespace beside it, and times queries at each step.
func SearchScale(ctx context.Context, steps []int, other, users, queries int, progress func(string)) ([]ScalePoint, error) {
	dir, err := os.MkdirTemp("", "engram-scale-")
	if err != nil {
		return nil, err
	}
	defer quiet.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "scale.db"))
	if err != nil {
		return nil, err
	}
	defer quiet.Close(store) // a scratch store, dropped after the run
	// Queries go through the real HTTP handler, as agents send them.
	srv := httptest.NewServer((&httpapi.Server{Searcher: retrieval.NewEngine(store), Log: zap.NewNop()}).Handler())
	defer srv.Close()
	e := &Engram{base: srv.URL, hc: srv.Client()}
	c := newCorpus(3)
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	seq := uint64(0)
	load := func(ns, user string, from, to int) error {
		for i := from; i < to; i += 2000 {
			_, applied := turnEvents(c, ns, user, i, min(2000, to-i), at)
			for j := range applied {
				seq++
				applied[j].Seq = seq
				if ns == "big" && (i+j)%users != 0 {
					applied[j].Scope.User = fmt.Sprintf("u%d", (i+j)%users)
					applied[j].ID = fmt.Sprintf("u%d-%d", (i+j)%users, i+j)
				}
			}
			for _, err := range store.Apply(ctx, applied) {
				if err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := load("other", "someone", 0, other); err != nil {
		return nil, err
	}
	var out []ScalePoint
	have := 0
	for _, n := range steps {
		start := time.Now()
		if err := load("big", "heavy", have, n); err != nil {
			return nil, err
		}
		progress(fmt.Sprintf("loaded %d turns in %s", n, time.Since(start).Round(time.Second)))
		if err := compactIdle(ctx, store, progress); err != nil {
			return nil, err
		}
		have = n
		q := newCorpus(99)
		// Warm the page cache the way a running server's would be.
		for range 50 {
			if _, err := e.Search(ctx, "big", "heavy", q.query(), 10); err != nil {
				return nil, err
			}
		}
		d := make([]time.Duration, queries)
		cpu0 := cpuTime()
		for i := range d {
			text := q.query()
			t0 := time.Now()
			if _, err := e.Search(ctx, "big", "heavy", text, 10); err != nil {
				return nil, err
			}
			d[i] = time.Since(t0)
		}
		cpu := ms(cpuTime()-cpu0) / float64(len(d))
		out = append(out, ScalePoint{Turns: n, Users: users, Other: other, Latency: summarize(d), Load: time.Since(start), CPU: cpu})
	}
	return out, nil
}
