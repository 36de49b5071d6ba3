package app

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap/zaptest"
)

// routedPair starts two retrievers sharing two partitions, fills users
// through the first, and returns them with a user whose partition the
// second answers for: a request for it through the first is routed.
func routedPair(t *testing.T, bus *testBus, opts1, opts2 []func(*config.Config)) (front, owner *App, user string, p int) {
	t.Helper()
	const partitions = 2
	r1 := readWorker(t, bus, "r1", RoleRetriever, partitions, opts1...)
	r2 := readWorker(t, bus, "r2", RoleRetriever, partitions, opts2...)
	allServing(t, partitions, r1, r2)
	wait.Until(t, "a partition served by each", func() bool {
		for _, r := range []*App{r1, r2} {
			if r.Readiness(t.Context()) != nil {
				return false
			}
			r.reads.mu.Lock()
			held := 0
			for _, part := range r.reads.parts {
				if part.held.Load() && part.svc != nil {
					held++
				}
			}
			n := len(r.reads.parts)
			r.reads.mu.Unlock()
			if held != 1 || n != 1 {
				return false
			}
		}
		return true
	})
	for u := range 8 {
		user = fmt.Sprintf("u%02d", u)
		p = stream.PartitionOf("default", user, partitions)
		if part, release := r2.reads.answering(p); part != nil {
			release()
			return r1, r2, user, p
		}
	}
	t.Fatal("r2 answers for none of the users")
	return nil, nil, "", 0
}

// busRequests counts the requests a front forwards over NATS to
// partition p's copies.
func busRequests(t *testing.T, bus *testBus, p int) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	sub, err := bus.op.Conn().Subscribe(natsapi.PartitionSubject("default", p, "http"), func(*nats.Msg) { n.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := bus.op.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	return &n
}

// contextOf asks api for user's context with the headers hdr.
func contextOf(t *testing.T, api *App, user string, hdr map[string]string) httpResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"user": user, "query": "where do I live and what do I drink?", "budget_tokens": 2000})
	return do(t, "POST", "http://"+api.HTTPAddr()+"/v1/context", "application/json", body, hdr)
}

// sameAnswer asks user's context of the owner and through the front and
// says how the routed answer differs, "" when it does not.
func sameAnswer(t *testing.T, front, owner *App, user string, hdr map[string]string) string {
	t.Helper()
	want := contextOf(t, owner, user, hdr)
	got := contextOf(t, front, user, hdr)
	if got.Status != 200 || got.Raw != want.Raw {
		return fmt.Sprintf("through %s: %d %s\nof the owner: %d %s", front.Config.Instance, got.Status, got.Raw, want.Status, want.Raw)
	}
	return ""
}

// A front that does not hold a user's partition sends the user's request
// over HTTP to the instance whose copy answers, at the address its state
// advertises: the bus carries none of it, and the answer is the owner's.
func TestRoutedReadGoesOverHTTP(t *testing.T) {
	bus := busWithFastLeases(t)
	front, owner, user, p := routedPair(t, bus, nil, nil)
	readUsers(t, front, 8)
	if got, want := owner.advertisedURL(), "http://"+owner.HTTPAddr(); got != want {
		t.Fatalf("the owner advertises %q, want %q (its bound loopback address)", got, want)
	}
	wait.Until(t, "the front routes the partition to the owner's address", func() bool {
		return front.routes.url(p) == owner.advertisedURL()
	})
	overBus := busRequests(t, bus, p)
	wait.Until(t, "the user's turns and memories in the routed answer", func() bool {
		r := contextOf(t, front, user, nil)
		return strings.Contains(r.Raw, "杭州") && strings.Contains(r.Raw, "Hangzhou")
	})
	for range 20 {
		if diff := sameAnswer(t, front, owner, user, nil); diff != "" {
			t.Fatal(diff)
		}
	}
	v := fmt.Sprintf("/v1/search?user=%s&q=coffee", user)
	if got, want := do(t, "GET", "http://"+front.HTTPAddr()+v, "", nil, nil), do(t, "GET", "http://"+owner.HTTPAddr()+v, "", nil, nil); got.Status != 200 || got.Raw != want.Raw {
		t.Fatalf("search through the front: %d %s\nof the owner: %d %s", got.Status, got.Raw, want.Status, want.Raw)
	}
	if n := overBus.Load(); n != 0 {
		t.Errorf("%d requests forwarded over NATS, want none: the owner advertises its address", n)
	}

	// A request marked forwarded (by a front, or by the caller) goes on
	// over NATS, never over HTTP again; the answer is the same.
	mark := map[string]string{httpapi.ForwardedHeader: "a caller"}
	if diff := sameAnswer(t, front, owner, user, mark); diff != "" {
		t.Fatal(diff)
	}
	if got := overBus.Load(); got != 1 {
		t.Errorf("a request marked forwarded: %d over NATS, want 1", got)
	}
}

// A routed answer holds the asking user's rows alone, whichever way it
// was forwarded.
func TestRoutedReadKeepsToItsUser(t *testing.T) {
	const users = 8
	bus := busWithFastLeases(t)
	front, owner, _, _ := routedPair(t, bus, nil, nil)
	readUsers(t, front, users)
	waitSettled(t, owner)
	routed := 0
	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		if front.routes.url(stream.PartitionOf("default", user, 2)) == "" {
			continue // the front holds it
		}
		routed++
		var r httpResult
		wait.Until(t, user+"'s memory in its routed answer", func() bool {
			r = contextOf(t, front, user, nil)
			return strings.Contains(r.Raw, fmt.Sprintf("Hangzhou (%d)", u))
		})
		for v := range users {
			if v != u && strings.Contains(r.Raw, fmt.Sprintf("(%d)", v)) {
				t.Errorf("%s's routed context holds user u%02d's rows: %s", user, v, r.Raw)
			}
		}
	}
	if routed == 0 {
		t.Fatal("no user's request was routed")
	}
}

// deadAddress is a loopback address nothing listens on.
func deadAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// An owner whose advertised address takes no connection is asked over
// NATS: the answer is the same.
func TestRoutedReadFallsBackToNATS(t *testing.T) {
	bus := busWithFastLeases(t)
	dead := "http://" + deadAddress(t)
	front, owner, user, p := routedPair(t, bus, nil, []func(*config.Config){func(c *config.Config) { c.HTTP.AdvertiseURL = dead }})
	readUsers(t, front, 8)
	wait.Until(t, "the front routes the partition to the dead address", func() bool {
		front.routes.mu.Lock()
		defer front.routes.mu.Unlock()
		return front.routes.urls[p] == dead
	})
	overBus := busRequests(t, bus, p)
	wait.Until(t, "the user's memory in the routed answer", func() bool {
		return strings.Contains(contextOf(t, front, user, nil).Raw, "Hangzhou")
	})
	if diff := sameAnswer(t, front, owner, user, nil); diff != "" {
		t.Fatal(diff)
	}
	if overBus.Load() == 0 {
		t.Error("no request forwarded over NATS, want every one: the advertised address is dead")
	}
}

// dyingAddress is a listener that takes each connection, reads the
// request on it, and closes it without an answer, as an owner killed
// while it answers does, or with freeze keeps it open and silent until
// the test ends, as a frozen owner (or one whose host vanished) does; it
// counts the requests it took.
func dyingAddress(t *testing.T, freeze bool) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var took atomic.Int64
	var conns conc.WaitGroup
	ended := make(chan struct{})
	t.Cleanup(func() { close(ended); _ = ln.Close(); conns.Wait() })
	conns.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer func() { _ = c.Close() }()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					took.Add(1)
				}
				if freeze {
					<-ended
				}
			})
		}
	})
	return ln.Addr().String(), &took
}

// A read whose owner took it over HTTP and died before it answered, or
// froze, is asked again over NATS, as the bus route asks a read again:
// the caller gets its answer, not a 503 or a wait without end. A write
// is not sent twice (TestRelay).
func TestRoutedReadAskedAgainWhenTheOwnerDies(t *testing.T) {
	for _, freeze := range []bool{false, true} {
		t.Run(map[bool]string{false: "dies", true: "freezes"}[freeze], func(t *testing.T) { ownerGone(t, freeze) })
	}
}

func ownerGone(t *testing.T, freeze bool) {
	bus := busWithFastLeases(t)
	dying, took := dyingAddress(t, freeze)
	front, owner, user, p := routedPair(t, bus, nil, []func(*config.Config){func(c *config.Config) { c.HTTP.AdvertiseURL = "http://" + dying }})
	readUsers(t, owner, 8) // writes through the owner: a write forwarded to it would be refused, not sent twice
	wait.Until(t, "the front routes the partition to the dying address", func() bool {
		return front.routes.url(p) == "http://"+dying
	})
	wait.Until(t, "the user's memory in the routed answer", func() bool {
		return strings.Contains(contextOf(t, front, user, nil).Raw, "Hangzhou")
	})
	if took.Load() == 0 {
		t.Fatal("no request reached the dying owner")
	}
	if diff := sameAnswer(t, front, owner, user, nil); diff != "" {
		t.Fatal(diff)
	}
}

// A request forwarded over HTTP to an instance that does not answer for
// the partition (its copy moved since the front looked) goes on over
// NATS, which reaches the copy that answers: one request on the bus for
// each asked.
func TestForwardedReadIsNotForwardedAgain(t *testing.T) {
	const partitions = 2
	bus := busWithFastLeases(t)
	ingest := readWorker(t, bus, "ingest", RoleIngest, partitions)
	// r2 advertises the ingest's address: a front that believes it sends
	// r2's users' requests to an instance that holds none of them.
	stale := []func(*config.Config){func(c *config.Config) { c.HTTP.AdvertiseURL = "http://" + ingest.HTTPAddr() }}
	front, owner, user, p := routedPair(t, bus, nil, stale)
	readUsers(t, front, 8)
	wait.Until(t, "the front routes the partition to the ingest", func() bool {
		return front.routes.url(p) == "http://"+ingest.HTTPAddr()
	})
	overBus := busRequests(t, bus, p)
	wait.Until(t, "the user's memory in the routed answer", func() bool {
		return strings.Contains(contextOf(t, front, user, nil).Raw, "Hangzhou")
	})
	const asked = 10
	before := overBus.Load()
	for range asked {
		if diff := sameAnswer(t, front, owner, user, nil); diff != "" {
			t.Fatal(diff)
		}
	}
	if got, want := overBus.Load()-before, int64(asked); got != want {
		t.Errorf("%d requests over NATS for %d asked through the front, want one each: the ingest sends them on over NATS", got, want)
	}

}

// The owner checks the caller's token itself, as it does a direct
// request's: a token the front takes and the owner does not is refused
// by the owner, and the mark gets no one past the check.
func TestForwardedReadTokenCheckedByOwner(t *testing.T) {
	const both, frontOnly = "token-both-0123456789", "token-front-only-0123456789"
	bus := busWithFastLeases(t)
	tokens := func(toks ...string) []func(*config.Config) {
		return []func(*config.Config){func(c *config.Config) {
			c.HTTP.Tokens = map[string]string{}
			for _, tok := range toks {
				c.HTTP.Tokens[tok] = "*"
			}
		}}
	}
	front, owner, user, p := routedPair(t, bus, tokens(both, frontOnly), tokens(both))
	wait.Until(t, "the front routes the partition to the owner's address", func() bool {
		return front.routes.url(p) == owner.advertisedURL()
	})
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	if r := contextOf(t, front, user, bearer(both)); r.Status != 200 {
		t.Fatalf("a token both take, through the front: %d %s", r.Status, r.Raw)
	}
	r := contextOf(t, front, user, bearer(frontOnly))
	e, _ := r.Body["error"].(map[string]any)
	if code, _ := e["code"].(string); r.Status != 401 || code != "unauthorized" {
		t.Errorf("a token the owner does not take, through the front: %d %s, want 401 unauthorized from the owner", r.Status, r.Raw)
	}
	for u := range 8 {
		if local := fmt.Sprintf("u%02d", u); stream.PartitionOf("default", local, 2) != p {
			if r := contextOf(t, front, local, bearer(frontOnly)); r.Status != 200 {
				t.Errorf("the front's own token for a user it holds: %d %s, want 200", r.Status, r.Raw)
			}
			break
		}
	}
	marked := bearer("token-unknown-0123456789")
	marked[httpapi.ForwardedHeader] = "r1"
	if r := contextOf(t, owner, user, marked); r.Status != 401 {
		t.Errorf("an unknown token marked forwarded, straight to the owner: %d %s, want 401", r.Status, r.Raw)
	}
	if r := contextOf(t, owner, user, map[string]string{httpapi.ForwardedHeader: "r1"}); r.Status != 401 {
		t.Errorf("no token, marked forwarded, straight to the owner: %d %s, want 401", r.Status, r.Raw)
	}
}

// Where a front asks each partition: the serving copy, the holder's first
// (the other is handing over); the holder's copy being built when none
// serves; the bus when the copy to ask advertises no address; and the last
// address while no state names the partition.
func TestRoutesFromStates(t *testing.T) {
	r := newRoutes(time.Minute, zaptest.NewLogger(t))
	r.setSelf("http://self:1")
	st := func(p int, inst, state string, held bool, url string) stream.PartitionState {
		return stream.PartitionState{Partition: p, Instance: inst, State: state, Held: held, URL: url}
	}
	r.update([]stream.PartitionState{
		st(0, "old", stream.StateServing, false, "http://old:1"), st(0, "new", stream.StateBuilding, true, "http://new:1"),
		st(1, "old", stream.StateServing, false, "http://old:1"), st(1, "new", stream.StateServing, true, "http://new:1"),
		st(2, "taker", stream.StateBuilding, true, "http://taker:1"),
		st(3, "quiet", stream.StateServing, true, ""), st(3, "other", stream.StateBuilding, true, "http://other:1"),
		st(4, "self", stream.StateServing, true, "http://self:1"),
		st(5, "gone", stream.StateBuilding, false, "http://gone:1"),
	})
	want := map[int]string{0: "http://old:1", 1: "http://new:1", 2: "http://taker:1", 3: "", 4: "", 5: "", 6: ""}
	for p, w := range want {
		if got := r.url(p); got != w {
			t.Errorf("partition %d: %q, want %q", p, got, w)
		}
	}
	r.update([]stream.PartitionState{st(0, "new", stream.StateServing, true, "http://new:1")})
	if got, want := r.url(0), "http://new:1"; got != want {
		t.Errorf("partition 0 once the taker serves: %q, want %q", got, want)
	}
	if got, want := r.url(1), "http://new:1"; got != want {
		t.Errorf("partition 1, named by no state now: %q, want the last address %q", got, want)
	}
	r.refuse("http://new:1")
	if got := r.url(0); got != "" {
		t.Errorf("partition 0 once its address refused a connection: %q, want the bus", got)
	}
}
