package app

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// A front forwards a user's request to the API of the instance whose copy
// of the user's partition answers, over HTTP, when that instance
// advertises where it is reached (config's http.advertise_url, published
// with each copy's state); over NATS otherwise (docs/scale.md, "What
// routing costs").

// openRoutes starts reading where each partition's copy is reached: a
// partitioned retriever's rounds read the copies' states already
// (readParts.step) and pass them on; an ingest reads them itself.
func (a *App) openRoutes(runCtx context.Context) {
	a.routes = newRoutes(max(a.leaseTTL, time.Second), a.Log.Named("routes"))
	a.relay = httpapi.NewRelay(time.Second)
	if a.partitionedReads() {
		return
	}
	js := a.js
	a.goWorker(runCtx, "partition routes", func(ctx context.Context) error {
		a.routes.run(ctx, js, max(a.leaseTTL/4, 100*time.Millisecond))
		return nil
	})
}

// routes is a front's table of the address each partition's answering
// copy is reached at, from the states the copies publish, read every
// round.
type routes struct {
	// self is this instance's own advertised address: a request is never
	// sent to it, as this instance's copies answer in process.
	self string
	// refusedFor is how long an address that refused a connection is
	// passed over: a dead instance's state outlives it by up to the lease
	// TTL.
	refusedFor time.Duration
	log        *zap.Logger

	mu      sync.Mutex
	urls    map[int]string
	refused map[string]time.Time
}

func newRoutes(refusedFor time.Duration, log *zap.Logger) *routes {
	return &routes{refusedFor: refusedFor, log: log, urls: map[int]string{}, refused: map[string]time.Time{}}
}

// url is where partition p's copy is asked, "" for the bus.
func (r *routes) url(p int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.urls[p]
	if u == "" || u == r.self {
		return ""
	}
	if until, ok := r.refused[u]; ok {
		if time.Now().Before(until) {
			return ""
		}
		delete(r.refused, u)
	}
	return u
}

// refuse passes over u for a while: no connection could be made to it.
func (r *routes) refuse(u string) {
	r.mu.Lock()
	r.refused[u] = time.Now().Add(r.refusedFor)
	r.mu.Unlock()
}

// setSelf is this instance's own advertised address, once it listens.
func (r *routes) setSelf(u string) {
	r.mu.Lock()
	r.self = u
	r.mu.Unlock()
}

// update takes the copies' states: each partition they name is asked
// where the copy the bus would reach is, as natsapi's subjects choose it:
// a serving copy (the lease holder's first: the other is handing over),
// else, when none serves, the holder's copy still being built. When the
// copy to ask advertises no address, the bus is the way.
func (r *routes) update(states []stream.PartitionState) {
	rank := func(st stream.PartitionState) int {
		switch {
		case st.State == stream.StateServing && st.Held:
			return 3
		case st.State == stream.StateServing:
			return 2
		case st.Held:
			return 1
		}
		return 0
	}
	best := map[int]stream.PartitionState{}
	for _, st := range states {
		if b, ok := best[st.Partition]; !ok || rank(st) > rank(b) {
			best[st.Partition] = st
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, st := range best {
		switch {
		case rank(st) == 0 || st.URL == "":
			delete(r.urls, p)
		case config.CheckAdvertiseURL(st.URL) != nil:
			// Not a base URL (a state written by something other than a
			// retriever's own config): the caller's token goes nowhere
			// but to a plain instance address.
			r.log.Warn("a partition state advertises no base URL; asking over NATS", zap.Int("partition", p),
				zap.String("instance", st.Instance))
			delete(r.urls, p)
		default:
			r.urls[p] = st.URL
		}
	}
	// A partition no state names keeps its last address: its state
	// expired between two writes of a busy instance, or its holder died.
	// Asking there is safe either way: a dead address takes no
	// connection (the bus is asked), and an instance that no longer
	// answers for the partition sends the request on over the bus.
}

// run reads the copies' states every every until ctx ends.
func (r *routes) run(ctx context.Context, js stream.JetStream, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		states, err := stream.PartitionStates(ctx, js, ReadGroup)
		switch {
		case err == nil:
			r.update(states)
		case ctx.Err() == nil:
			r.log.Debug("read partition states for routing; keeping the last", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// forwardWriteTimeout bounds a write forwarded over HTTP, as the bus
// bounds one (natsapi's 30 s for an answer).
const forwardWriteTimeout = 30 * time.Second

// forward sends req for partition p over HTTP to the instance whose copy
// answers, when one is known and the request may go there (it names its
// user and was not forwarded over HTTP already); sent is false when it
// was not, and the bus is to carry it.
func (r *routes) forward(ctx context.Context, relay *httpapi.Relay, front string, p int, req httpapi.Forwarded) (httpapi.Answer, bool, error) {
	u := r.url(p)
	if u == "" || !req.ByUser || req.Header.Get(httpapi.ForwardedHeader) != "" {
		metrics.Default.Forwarded(metrics.ForwardNATS)
		return httpapi.Answer{}, false, nil
	}
	// A read is given what the bus gives one try of it, then asked over
	// the bus (an owner that froze, or whose host vanished without a
	// reset, answers no one); a write what the bus gives a write.
	read := natsapi.MayAskAgain(req.Method, req.URL)
	limit := forwardWriteTimeout
	if read {
		limit = natsapi.AttemptTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	ans, err := relay.Send(sctx, u, front, req)
	if errors.Is(err, httpapi.ErrNotSent) {
		r.log.Warn("no connection to the instance that answers for a partition; asking over NATS",
			zap.Int("partition", p), zap.String("url", u), zap.Duration("for", r.refusedFor), zap.Error(err))
		r.refuse(u)
		metrics.Default.Forwarded(metrics.ForwardNoConnection)
		return httpapi.Answer{}, false, nil
	}
	if err != nil && ctx.Err() == nil && read {
		// The connection broke under the request, or no answer came in
		// time (its owner died or froze, most likely): a read is asked
		// again, as the bus asks one again.
		if errors.Is(sctx.Err(), context.DeadlineExceeded) {
			r.refuse(u)
		}
		r.log.Warn("the instance that answers for a partition took a read and gave no answer; asking over NATS",
			zap.Int("partition", p), zap.String("url", u), zap.Error(err))
		metrics.Default.Forwarded(metrics.ForwardNATS)
		return httpapi.Answer{}, false, nil
	}
	metrics.Default.Forwarded(metrics.ForwardHTTP)
	return ans, true, err
}
