package natsapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/retrieval/retrievaltest"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
)

// busConns starts an embedded server and connects n clients to it.
func busConns(t *testing.T, n int) []*nats.Conn {
	t.Helper()
	emb, err := stream.StartEmbedded(stream.EmbeddedConfig{StoreDir: t.TempDir(), Sync: "always"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	conns := make([]*nats.Conn, n)
	for i := range conns {
		if conns[i], err = nats.Connect("", emb.ConnectOption()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(conns[i].Close)
	}
	return conns
}

// A partition's copy that serves answers the requests forwarded to it
// side by side, as its owner's HTTP server answers those asked of it
// directly: nats.go hands a subscription's messages to its handler one at
// a time, and a copy that answered them so made every routed query wait
// for those before it (issue 26: the routing overhead). Each forwarded
// request here waits until all of them are in the copy at once, so
// answered one at a time, none would be.
func TestPartitionAnswersSideBySide(t *testing.T) {
	const inFlight = 4
	most, errs := inCopyAtOnce(t, inFlight, "", 2*time.Second)
	if most < inFlight {
		t.Errorf("at most %d of %d forwarded requests were in the copy at once", most, inFlight)
	}
	for i, e := range errs {
		if e != "" {
			t.Errorf("request %d: %s", i, e)
		}
	}
}

// A copy being built answers in turn: what ends its degraded answers is
// its projector, which answering side by side would take the cores from.
func TestPartitionBeingBuiltAnswersInTurn(t *testing.T) {
	if most, _ := inCopyAtOnce(t, 3, "partition 0 is being rebuilt", 300*time.Millisecond); most != 1 {
		t.Errorf("%d forwarded requests were in a copy being built at once, want 1", most)
	}
}

// inCopyAtOnce forwards n requests at once to a copy of partition 0 whose
// Building says building, each held in the copy until all n are in or
// wait has passed, and says how many were in the copy at once at most,
// and what went wrong with each request.
func inCopyAtOnce(t *testing.T, n int, building string, wait time.Duration) (most int, errs []string) {
	t.Helper()
	conns := busConns(t, 2)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	var mu sync.Mutex
	inside, peak := 0, 0 // the handlers' own: requests left when wait passed are answered after this returns
	all := make(chan struct{})
	part := &Partition{Building: func() string { return building }, HTTP: func(_ context.Context, _ string, req HTTPRequest) HTTPResponse {
		mu.Lock()
		inside++
		if peak = max(peak, inside); inside == n {
			close(all)
		}
		mu.Unlock()
		defer func() { mu.Lock(); inside--; mu.Unlock() }()
		select {
		case <-all:
			return HTTPResponse{Status: http.StatusOK, Header: http.Header{}, Body: req.Body}
		case <-ctx.Done():
			return HTTPResponse{Status: http.StatusServiceUnavailable, Header: http.Header{}}
		}
	}}
	svc, err := ServePartition(conns[0], 0, part, "0.0.0", zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := svc.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	r := &Router{NC: conns[1], N: 1, Wait: wait}
	var wg sync.WaitGroup
	errs = make([]string, n)
	for i := range n {
		wg.Go(func() {
			body := []byte(strconv.Itoa(i))
			ans, err := r.ForwardHTTP(ctx, "default", 0, HTTPRequest{Method: http.MethodGet, URL: "/v1/search?user=u", Body: body})
			switch {
			case err != nil:
				errs[i] = err.Error()
			case ans.Status != http.StatusOK || string(ans.Body) != string(body):
				errs[i] = "answered " + strconv.Itoa(ans.Status) + " " + string(ans.Body)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return peak, errs
}

// An answer over NATS read from a copy that was still being built says
// so, though the copy caught up before the answer was sent (as
// httpapi's TestAnswerOfACopyBeingBuiltSaysSo for HTTP).
func TestPartitionAnswerOfACopyBeingBuiltSaysSo(t *testing.T) {
	conns := busConns(t, 2)
	for _, op := range []string{"search", "context"} {
		t.Run(op, func(t *testing.T) {
			c := &retrievaltest.CatchingUp{}
			svc, err := ServePartition(conns[0], 0, &Partition{Searcher: c, Engine: c, Building: c.Building}, "0.0.0", zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			if err := conns[0].Flush(); err != nil { // the subscriptions reach the server before the request
				t.Fatal(err)
			}
			defer func() {
				if err := svc.Stop(); err != nil {
					t.Errorf("stop: %v", err)
				}
			}()
			msg, err := conns[1].RequestWithContext(t.Context(), PartitionSubject("default", 0, op), []byte(`{"user":"ana","q":"home","query":"home"}`))
			if err != nil {
				t.Fatal(err)
			}
			if want := `"degraded":["partition 0 is being rebuilt`; !strings.Contains(string(msg.Data), want) {
				t.Errorf("answer %s, want it to say %s", msg.Data, want)
			}
		})
	}
}
