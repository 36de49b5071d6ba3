//go:build soak

package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
)

// What routing a query costs, without a cluster (issue 26's bar: the p95
// of /v1/context through another retriever within 1 ms of asking the
// owner): two retrievers on one bus share two partitions, and one user's
// context is asked of the owner of the user's partition and through the
// other, which forwards it over HTTP to the owner's advertised address
// or, with that address passed over, over NATS, in turn, on kept-alive
// connections; then by 4 clients at once; then in batches of each, in
// turn, for the CPU a routed request costs beyond the owner's own answer
// (the process holds both retrievers and the bus, so the CPU of the whole
// path is counted).
// ENGRAM_SOAK_ROUTED sets how many requests of each (default 2,000); it
// takes about a minute. docs/scale.md ("What routing costs") has its figures.
//
//	go test -tags soak -run TestRoutingOverhead -v ./internal/app
func TestRoutingOverhead(t *testing.T) {
	n := 2000
	if v := os.Getenv("ENGRAM_SOAK_ROUTED"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 20 {
			t.Fatalf("ENGRAM_SOAK_ROUTED=%q: want a number of requests, at least 20", v)
		}
	}
	const partitions, users = 2, 8
	bus := busWithFastLeases(t)
	r1 := readWorker(t, bus, "r1", RoleRetriever, partitions)
	r2 := readWorker(t, bus, "r2", RoleRetriever, partitions)
	allServing(t, partitions, r1, r2)
	readUsers(t, r1, users)

	user := "u01"
	p := stream.PartitionOf("default", user, partitions)
	owner, other := r1, r2
	if part, release := r2.reads.answering(p); part != nil {
		release()
		owner, other = r2, r1
	}
	body, _ := json.Marshal(map[string]any{"user": user, "query": "where do I live and what do I drink?", "budget_tokens": 2000})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	ask := func(front *App) (time.Duration, string) {
		start := time.Now()
		resp, err := client.Post("http://"+front.HTTPAddr()+"/v1/context", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("context through %s: %v", front.Config.Instance, err)
		}
		raw, err := io.ReadAll(resp.Body)
		quiet.Close(resp.Body)
		took := time.Since(start)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("context through %s: %d %v %s", front.Config.Instance, resp.StatusCode, err, raw)
		}
		return took, string(raw)
	}
	// The turns are not waited for by readUsers: both answers hold them
	// once the owner has applied them.
	wait.Until(t, "the user's turns in both answers", func() bool {
		_, a := ask(owner)
		_, b := ask(other)
		return a == b && strings.Contains(a, "杭州") && strings.Contains(a, "Hangzhou")
	})
	if _, a := ask(owner); strings.Contains(a, "degraded") {
		t.Fatalf("the owner's answer is degraded: %s", a)
	}

	// The front sends the user's requests over HTTP to the owner's
	// advertised address; passing that address over (as a front does
	// one that refused a connection) sends them over NATS instead, so
	// both routes are measured in one run, on one machine's load.
	var addr string
	wait.Until(t, "the owner's address known to the other", func() bool {
		addr = other.routes.url(p)
		return addr != ""
	})
	overNATS := func(on bool) {
		other.routes.mu.Lock()
		defer other.routes.mu.Unlock()
		if on {
			other.routes.refused[addr] = time.Now().Add(time.Hour)
		} else {
			delete(other.routes.refused, addr)
		}
	}
	type route struct {
		name string
		nats bool
	}
	routes := []route{{"over HTTP", false}, {"over NATS", true}}
	askVia := func(r route) time.Duration {
		overNATS(r.nats)
		d, _ := ask(other)
		return d
	}
	for range 100 { // warm every path: connections, caches, the JIT of SQLite's statements
		ask(owner)
		for _, r := range routes {
			askVia(r)
		}
	}
	var direct []time.Duration
	routed := make([][]time.Duration, len(routes))
	for i := range n {
		// Who goes first turns, so that none gets the others' warm
		// caches or their scheduler luck every time.
		for j := range len(routes) + 1 {
			switch k := (i + j) % (len(routes) + 1); k {
			case len(routes):
				d, _ := ask(owner)
				direct = append(direct, d)
			default:
				routed[k] = append(routed[k], askVia(routes[k]))
			}
		}
	}
	for k, r := range routes {
		pd, pr := quantile(direct, 95), quantile(routed[k], 95)
		t.Logf("context over %d each, %s: p50 the owner %v, routed %v (+%v); p95 the owner %v, routed %v (+%v); p99 the owner %v, routed %v; load average %s",
			n, r.name, quantile(direct, 50), quantile(routed[k], 50), quantile(routed[k], 50)-quantile(direct, 50),
			pd, pr, pr-pd, quantile(direct, 99), quantile(routed[k], 99), loadNow())
	}

	// Side by side: clients asking at once, each turn and turn about, as
	// agents do; the copy answers routed queries as its HTTP server
	// answers direct ones. Each route has two turns of its own, the
	// routes alternating.
	const clients = 4
	directAtOnce := make([][]time.Duration, len(routes))
	routedAtOnce := make([][]time.Duration, len(routes))
	for turn := range 2 * len(routes) {
		k := turn % len(routes)
		overNATS(routes[k].nats)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				for i := range n / clients / 2 {
					first, second := owner, other
					if (i+c)%2 == 1 {
						first, second = other, owner
					}
					for _, front := range []*App{first, second} {
						d, _ := ask(front)
						mu.Lock()
						if front == owner {
							directAtOnce[k] = append(directAtOnce[k], d)
						} else {
							routedAtOnce[k] = append(routedAtOnce[k], d)
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
	}
	for k, r := range routes {
		pdc, prc := quantile(directAtOnce[k], 95), quantile(routedAtOnce[k], 95)
		t.Logf("context, %d clients at once, over %d each, %s: p50 the owner %v, routed %v (+%v); p95 the owner %v, routed %v (+%v); load average %s",
			clients, len(directAtOnce[k]), r.name, quantile(directAtOnce[k], 50), quantile(routedAtOnce[k], 50),
			quantile(routedAtOnce[k], 50)-quantile(directAtOnce[k], 50), pdc, prc, prc-pdc, loadNow())
	}

	// CPU: batches of each, in turn, so that a change of the machine's
	// load falls on all.
	const batch = 100
	cpuRouted := make([]time.Duration, len(routes))
	var cpuDirect time.Duration
	rounds := max(n/batch, 2)
	for i := range rounds {
		for j := range len(routes) + 1 {
			k := (i + j) % (len(routes) + 1)
			c0 := processCPU(t)
			for range batch {
				if k == len(routes) {
					ask(owner)
				} else {
					askVia(routes[k])
				}
			}
			if c := processCPU(t) - c0; k == len(routes) {
				cpuDirect += c
			} else {
				cpuRouted[k] += c
			}
		}
	}
	asked := time.Duration(rounds * batch)
	for k, r := range routes {
		t.Logf("CPU a request (client, both retrievers and the bus), %s: the owner %v, routed %v (+%v); load average %s", r.name,
			(cpuDirect / asked).Round(time.Microsecond), (cpuRouted[k] / asked).Round(time.Microsecond),
			((cpuRouted[k] - cpuDirect) / asked).Round(time.Microsecond), loadNow())
	}
	// The p50 is what the route costs; the p95s are reported, not held
	// to the bar here: on this shared two-core machine the owner's own
	// p95 moves by milliseconds from one run to the next with the load
	// (docs/scale.md), and clustertest's soak holds the bar.
	for k, r := range routes {
		if d := quantile(routed[k], 50) - quantile(direct, 50); d > time.Millisecond {
			t.Errorf("routing %s adds %v to the p50, want at most 1 ms", r.name, d)
		}
		if d := quantile(routedAtOnce[k], 50) - quantile(directAtOnce[k], 50); d > 2*quantile(directAtOnce[k], 50) {
			t.Errorf("with %d clients at once %s, a routed query's p50 is %v, the owner's %v: routed queries wait for each other",
				clients, r.name, quantile(routedAtOnce[k], 50), quantile(directAtOnce[k], 50))
		}
	}
}

// quantile is the pct-th percentile of ds, to the microsecond.
func quantile(ds []time.Duration, pct int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)*pct/100, len(s)-1)].Round(time.Microsecond)
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadNow is the machine's load average over the last minute.
func loadNow() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	return strings.Fields(string(b))[0]
}
