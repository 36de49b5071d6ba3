package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"go.uber.org/zap"
)

// ExtractorsResult is how fast extractors apart clear a backlog.
type ExtractorsResult struct {
	Sessions int
	Latency  time.Duration
	// Took is, per number of extractor instances, the time from the
	// backlog's publication to its last turn extracted.
	Took map[int]time.Duration
}

// Speedup is how many times faster n instances cleared the backlog than one.
func (r *ExtractorsResult) Speedup(n int) float64 {
	return r.Took[1].Seconds() / r.Took[n].Seconds()
}

// Extractors times 1, then 2, extractor instances (workers apart, sharing
// the users' partitions) clearing a backlog of sessions with a model of
// fixed latency: an ingest and read model process holds the embedded
// NATS, the extractors connect to it with the worker's credentials, and
// each extractor asks the model one request at a time.
func Extractors(ctx context.Context, sessions int, latency time.Duration, progress func(string)) (*ExtractorsResult, error) {
	res := &ExtractorsResult{Sessions: sessions, Latency: latency, Took: map[int]time.Duration{}}
	for _, n := range []int{1, 2} {
		took, err := clearBacklog(ctx, n, sessions, latency)
		if err != nil {
			return nil, fmt.Errorf("%d extractors: %w", n, err)
		}
		res.Took[n] = took
		progress(fmt.Sprintf("%d extractor(s): %d sessions in %s", n, sessions, took.Round(time.Millisecond)))
	}
	return res, nil
}

func clearBacklog(ctx context.Context, instances, sessions int, latency time.Duration) (time.Duration, error) {
	cs := newChatServer()
	cs.delay = latency
	defer cs.Close()
	root, err := os.MkdirTemp("", "engram-extractors-")
	if err != nil {
		return 0, err
	}
	defer quiet.RemoveAll(root)
	const partitions = 4
	hubCfg := config.Default()
	hubCfg.DataDir = filepath.Join(root, "hub")
	hubCfg.HTTP.Addr, hubCfg.NATS.Listen = "127.0.0.1:0", "127.0.0.1:0"
	hubCfg.NATS.Sync = "1s"
	hubCfg.Partitions = partitions
	hub := app.New(hubCfg, app.RoleIngest|app.RoleRetriever, zap.NewNop())
	if err := hub.Open(ctx); err != nil {
		return 0, err
	}
	e := &Engram{App: hub, Dir: root, base: "http://" + hub.HTTPAddr(), hc: &http.Client{}}
	var workers []*app.App
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, w := range workers {
			_ = w.Close(cctx)
		}
		_ = hub.Close(cctx)
	}()
	for i := range instances {
		cfg := config.Default()
		cfg.DataDir = filepath.Join(root, fmt.Sprintf("x%d", i+1))
		cfg.HTTP.Addr, cfg.NATS.Listen = "", ""
		// Each worker kind's own seed, from the hub's data dir.
		cfg.NATS.URL, cfg.NATS.NKeyDir = hub.NATSURL(), app.AuthDir(hubCfg)
		cfg.Instance, cfg.Partitions = fmt.Sprintf("x%d", i+1), partitions
		cfg.LLM.BaseURL, cfg.LLM.Model = cs.URL+"/v1", "bench-model"
		w := app.New(cfg, app.RoleExtractor, zap.NewNop())
		if err := w.Open(ctx); err != nil {
			return 0, err
		}
		workers = append(workers, w)
	}
	// The instances first share the partitions out (a lease round).
	if err := waitPartitions(ctx, hub, instances, partitions); err != nil {
		return 0, err
	}

	c := newCorpus(7)
	var batch []json.RawMessage
	for s := range sessions {
		user, session := fmt.Sprintf("u%d", s%50), fmt.Sprintf("s%d", s)
		for i := range 4 {
			d := &events.TurnRecorded{SessionID: session, TurnIndex: i, Role: []string{"user", "assistant"}[i%2], Content: c.sentence()}
			raw, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": fmt.Sprintf("%s-%d", session, i), "source": "bench",
				"type": events.TypeTurnRecorded, "user": user, "data": d})
			batch = append(batch, raw)
		}
		raw, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": session + "-end", "source": "bench",
			"type": events.TypeSessionEnded, "user": user, "data": &events.SessionEnded{SessionID: session, MessageCount: 4}})
		batch = append(batch, raw)
	}
	start := time.Now()
	var last uint64
	for i := 0; i < len(batch); i += 500 {
		body, _ := json.Marshal(batch[i:min(i+500, len(batch))])
		seq, err := e.Post(ctx, "application/cloudevents-batch+json", body)
		if err != nil {
			return 0, err
		}
		last = max(last, seq)
	}
	if err := e.WaitProjected(ctx, last); err != nil {
		return 0, err
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		left, err := hub.Store().Unextracted(ctx, time.Now().Add(24*time.Hour), 1)
		if err != nil {
			return 0, err
		}
		if len(left) == 0 {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("turns still unextracted after 10 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPartitions waits until instances share the extractor partitions
// evenly.
func waitPartitions(ctx context.Context, hub *app.App, instances, partitions int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		held, err := hub.PartitionsHeld(ctx, "extractor")
		if err != nil {
			return err
		}
		even := len(held) == instances
		for _, n := range held {
			even = even && n == partitions/instances
		}
		if even {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("partitions not shared out after a minute: %v", held)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
