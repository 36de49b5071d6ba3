package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/sourcegraph/conc/pool"
)

// IngestResult compares engram's ingest with its two bounds, measured on
// the same events in the same run.
type IngestResult struct {
	Events, Batch, Rounds int
	// AckRate is events/s from the HTTP batches to JetStream's
	// acknowledgement; PipelineRate to projected and searchable.
	AckRate, PipelineRate float64
	// JetStreamRate is the same events published straight to a stream of
	// the same durability on a server (or cluster) of its own, async acks:
	// the stream's own acknowledged rate, the bound under sync "always".
	JetStreamRate float64
	// DirectRate is the same rows applied straight to a SQLite + FTS read
	// model of its own, 512 to a transaction: the bound with a sync interval.
	DirectRate float64
	// JetStreamRatio and Ratio are PipelineRate over each bound.
	JetStreamRatio, Ratio float64
	// AloneAckRate is the acknowledged rate of the ingest worker apart (no
	// read model in its process) on the same events, when one was given:
	// what ingest itself costs beside the stream it stores into.
	AloneAckRate float64
}

// Ingest sends n events to engram in HTTP batches of batch (concurrency
// requests at a time) and times until the last is searchable. The same
// events also go straight to js, and the same rows straight into a SQLite
// read model of their own. The three are interleaved in rounds, so that
// whatever else the machine does in the meantime weighs on all of them
// alike; each rate is the events over the sum of its rounds' times.
func Ingest(ctx context.Context, e, alone *Engram, js *stream.RateStream, n, batch, concurrency, rounds int) (*IngestResult, error) {
	c := newCorpus(1)
	raws, applied := turnEvents(c, "ingest", "u1", 0, n, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	dir, err := os.MkdirTemp("", "engram-direct-")
	if err != nil {
		return nil, err
	}
	defer quiet.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "direct.db"))
	if err != nil {
		return nil, err
	}
	defer quiet.Close(store) // a scratch store, dropped after the run

	var tJS, tAck, tPipe, tDirect, tAlone time.Duration
	per := (n + rounds - 1) / rounds
	for from := 0; from < n; from += per {
		to := min(from+per, n)

		msgs := make([][]byte, 0, to-from)
		for _, raw := range raws[from:to] {
			msgs = append(msgs, raw)
		}
		d, err := js.Publish(ctx, msgs)
		if err != nil {
			return nil, fmt.Errorf("jetstream alone: %w", err)
		}
		tJS += d

		var bodies [][]byte
		for i := from; i < to; i += batch {
			b, _ := json.Marshal(raws[i:min(i+batch, to)])
			bodies = append(bodies, b)
		}
		ack, pipe, err := ingestRound(ctx, e, bodies, concurrency)
		if err != nil {
			return nil, err
		}
		tAck, tPipe = tAck+ack, tPipe+pipe
		if alone != nil {
			start := time.Now()
			if _, err := postAll(ctx, alone, bodies, concurrency); err != nil {
				return nil, fmt.Errorf("ingest alone: %w", err)
			}
			tAlone += time.Since(start)
		}

		start := time.Now()
		for i := from; i < to; i += 512 {
			for _, err := range store.Apply(ctx, applied[i:min(i+512, to)]) {
				if err != nil {
					return nil, fmt.Errorf("direct insert: %w", err)
				}
			}
		}
		tDirect += time.Since(start)
	}
	if hits, err := e.Search(ctx, "ingest", "u1", "deploy", 1); err != nil || len(hits) == 0 {
		return nil, fmt.Errorf("ingested events are not searchable (%d hits): %v", len(hits), err)
	}
	rate := func(d time.Duration) float64 { return float64(n) / d.Seconds() }
	r := &IngestResult{Events: n, Batch: batch, Rounds: rounds, AckRate: rate(tAck), PipelineRate: rate(tPipe),
		JetStreamRate: rate(tJS), DirectRate: rate(tDirect)}
	if alone != nil {
		r.AloneAckRate = rate(tAlone)
	}
	r.JetStreamRatio = r.PipelineRate / r.JetStreamRate
	r.Ratio = r.PipelineRate / r.DirectRate
	return r, nil
}

// ingestRound posts the batches in bodies and returns the time until
// every event was acknowledged and until the last was searchable.
func ingestRound(ctx context.Context, e *Engram, bodies [][]byte, concurrency int) (acked, searchable time.Duration, err error) {
	start := time.Now()
	top, err := postAll(ctx, e, bodies, concurrency)
	if err != nil {
		return 0, 0, err
	}
	acked = time.Since(start)
	if err := e.WaitProjected(ctx, top); err != nil {
		return 0, 0, err
	}
	return acked, time.Since(start), nil
}

// postAll posts the batches in bodies, concurrency at a time, and returns
// the highest sequence acknowledged.
func postAll(ctx context.Context, e *Engram, bodies [][]byte, concurrency int) (uint64, error) {
	p := pool.NewWithResults[uint64]().WithContext(ctx).WithMaxGoroutines(concurrency).WithCancelOnError()
	for _, b := range bodies {
		p.Go(func(ctx context.Context) (uint64, error) {
			return e.Post(ctx, "application/cloudevents-batch+json", b)
		})
	}
	seqs, err := p.Wait()
	var top uint64
	for _, s := range seqs {
		top = max(top, s)
	}
	return top, err
}

// IngestSetup is one configuration the ingest benchmark runs in.
type IngestSetup struct {
	Sync  string // JetStream's sync policy: "always" or an interval
	Nodes int    // 1: engram's embedded server; 3: a cluster on loopback, three replicas
}

func (s IngestSetup) String() string {
	if s.Nodes <= 1 {
		return fmt.Sprintf("sync %s, one node", s.Sync)
	}
	return fmt.Sprintf("sync %s, %d-node cluster (R%d)", s.Sync, s.Nodes, s.Nodes)
}

// IngestIn runs Ingest in setup: an engram (every role in one process)
// and the JetStream it is compared with, both fresh.
func IngestIn(ctx context.Context, setup IngestSetup, n, rounds int) (*IngestResult, error) {
	var cluster *stream.Cluster
	var e *Engram
	var err error
	if setup.Nodes > 1 {
		// err is the function's: StartWith's below must reach the check
		// after this branch.
		var dir string
		if dir, err = os.MkdirTemp("", "engram-cluster-"); err != nil {
			return nil, err
		}
		defer quiet.RemoveAll(dir)
		if cluster, err = stream.StartCluster(dir, setup.Nodes, stream.Sync(setup.Sync)); err != nil {
			return nil, err
		}
		defer cluster.Shutdown()
		e, err = StartWith(ctx, func(c *Config) {
			c.NATS.URL = cluster.URL()
			c.NATS.NKeyDir = cluster.Auth.Dir
			c.NATS.Replicas = setup.Nodes
		})
	} else {
		e, err = Start(ctx, setup.Sync)
	}
	if err != nil {
		return nil, err
	}
	defer e.Close()
	// On one node, the ingest worker apart too, on a server of its own.
	var alone *Engram
	if setup.Nodes <= 1 {
		if alone, err = StartRoles(ctx, app.RoleIngest, func(c *Config) { c.NATS.Sync = setup.Sync }); err != nil {
			return nil, err
		}
		defer alone.Close()
	}
	js, err := stream.OpenRateStream(ctx, stream.Sync(setup.Sync), cluster, setup.Nodes)
	if err != nil {
		return nil, err
	}
	defer js.Close()
	return Ingest(ctx, e, alone, js, n, 1000, 4, rounds)
}
