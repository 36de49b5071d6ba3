package stream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

// holders records who works on which partition, and whether two ever did
// at once.
type holders struct {
	mu      sync.Mutex
	by      map[int]map[string]bool
	overlap []string
}

func (h *holders) own(name string) func(ctx context.Context, p int) {
	return func(ctx context.Context, p int) {
		h.mu.Lock()
		if h.by[p] == nil {
			h.by[p] = map[string]bool{}
		}
		h.by[p][name] = true
		if len(h.by[p]) > 1 {
			var who []string
			for n := range h.by[p] {
				who = append(who, n)
			}
			h.overlap = append(h.overlap, strings.Join(who, "+"))
		}
		h.mu.Unlock()
		<-ctx.Done()
		h.mu.Lock()
		delete(h.by[p], name)
		h.mu.Unlock()
	}
}

func (h *holders) count(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, who := range h.by {
		if who[name] {
			n++
		}
	}
	return n
}

// leaseBus is an embedded server whose lease bucket has ttl.
func leaseBus(t *testing.T, ttl time.Duration) *Embedded {
	t.Helper()
	emb, err := StartEmbedded(EmbeddedConfig{StoreDir: t.TempDir(), Sync: "1s"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	// The operator makes the lease bucket, with the TTL the leases live by.
	if err := EnsureStreams(t.Context(), jsOf(t, emb), StreamsConfig{LeaseTTL: ttl}); err != nil {
		t.Fatal(err)
	}
	return emb
}

// runLeases runs an instance of cfg's group on its own connection,
// recording in h what it works on, until the test ends or it is
// cancelled.
func runLeases(t *testing.T, emb *Embedded, h *holders, cfg LeaseConfig) (*nats.Conn, context.CancelFunc) {
	t.Helper()
	js := jsNamed(t, emb, cfg.Instance)
	l, err := OpenLeases(t.Context(), js, cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	t.Cleanup(cancel)
	wg.Go(func() { l.Run(ctx, h.own(cfg.Instance)) })
	return js.Conn(), cancel
}

// Instances share the partitions evenly; one whose connection is cut
// stops working on its partitions before their leases expire, and the
// other takes them; one that stops gives them back at once; an instance
// with another number of partitions is refused.
func TestLeasesShareAndMove(t *testing.T) {
	t.Parallel()
	const n, ttl = 4, time.Second
	emb := leaseBus(t, ttl)
	h := &holders{by: map[int]map[string]bool{}}
	start := func(name string) (*nats.Conn, context.CancelFunc) {
		return runLeases(t, emb, h, LeaseConfig{Group: "extractor", Instance: name, N: n})
	}
	_, stopA := start("a")
	bConn, _ := start("b")
	wait.For(t, "two partitions each", func() error {
		return errors.Join(wait.Equal(h.count("a"), 2),
			wait.Equal(h.count("b"), 2))
	})

	bConn.Close()
	wait.For(t, "a to hold every partition", func() error {
		return errors.Join(wait.Equal(h.count("a"), n),
			wait.Equal(h.count("b"), 0))
	})

	stopA()
	start("c")
	wait.For(t, "c to hold every partition", func() error {
		return errors.Join(wait.Equal(h.count("c"), n),
			wait.Equal(h.count("a"), 0))
	})
	h.mu.Lock()
	if len(h.overlap) > 0 {
		t.Errorf("partitions worked on by two at once: %v", h.overlap)
	}
	h.mu.Unlock()

	nc, err := Connect(ConnConfig{Name: "d"}, emb.ConnectOption())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	_, err = OpenLeases(t.Context(), js, LeaseConfig{Group: "extractor", Instance: "d", N: 8}, zaptest.NewLogger(t))
	if err == nil || !strings.Contains(err.Error(), "same number") {
		t.Fatalf("8 partitions beside running instances with 4: %v, want a refusal", err)
	}
}

func TestPartitionOf(t *testing.T) {
	t.Parallel()
	seen := map[int]bool{}
	for _, u := range []string{"ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal", "ivy", "李雷"} {
		p := PartitionOf("default", u, 4)
		if p < 0 || p >= 4 || PartitionOf("default", u, 4) != p {
			t.Fatalf("PartitionOf(%q)=%d", u, p)
		}
		seen[p] = true
		if got := PartitionOf("default", u, 1); got != 0 {
			t.Fatalf("one partition: %d", got)
		}
	}
	if len(seen) < 3 {
		t.Fatalf("ten users fell in %d of 4 partitions", len(seen))
	}
	if PartitionDurable("batcher", 0, 1) != "batcher" || PartitionDurable("batcher", 2, 4) != "batcher-3of4" {
		t.Fatal("durable names")
	}
}

// jsOf connects to emb, without credentials.
func jsOf(t *testing.T, emb *Embedded) jetstream.JetStream { return jsNamed(t, emb, "setup") }

// jsNamed connects to emb as name, without credentials, until the test
// ends.
func jsNamed(t *testing.T, emb *Embedded, name string) jetstream.JetStream {
	t.Helper()
	nc, err := Connect(ConnConfig{Name: name}, emb.ConnectOption())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// An instance of a group that probes, gone from the bus without a word
// (killed), has its partitions taken long before its leases expire.
func TestLeasesOfTheDeadTakenBeforeTheyExpire(t *testing.T) {
	t.Parallel()
	// Seen dead a round and a probe after its last renewal: 3.1 s, not
	// the TTL's 12.
	const n, ttl, probe = 4, 12 * time.Second, 100 * time.Millisecond
	emb := leaseBus(t, ttl)
	h := &holders{by: map[int]map[string]bool{}}
	start := func(name string) *nats.Conn {
		nc, _ := runLeases(t, emb, h, LeaseConfig{Group: "retriever", Instance: name, N: n, Probe: probe})
		return nc
	}
	start("a")
	b := start("b")
	wait.For(t, "two partitions each", func() error {
		return errors.Join(wait.Equal(h.count("a"), 2), wait.Equal(h.count("b"), 2))
	})
	// A state b published, saying it serves: it must not outlive b either,
	// or the routers would wait for b's copy.
	js, err := jetstream.New(b)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), PartitionBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), "retriever.s.0.b", []byte(`{"partition":0,"instance":"b","state":"serving"}`)); err != nil {
		t.Fatal(err)
	}

	b.Close() // as a SIGKILL does: no lease released
	killed := time.Now()
	wait.UntilWithin(t, 20*time.Second, "a to hold every partition", func() bool { return h.count("a") == n })
	if took := time.Since(killed); took >= ttl/2 {
		t.Fatalf("the partitions were taken %v after the kill, want well before the leases' TTL %v", took, ttl)
	}
	states, err := PartitionStates(t.Context(), jsOf(t, emb), "retriever")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range states {
		if st.Instance == "b" {
			t.Errorf("the dead instance's state outlived it: %+v", st)
		}
	}
}

// A slow member is not a dead one: one that answers its probes late keeps
// its leases, however many probes pass; once nothing listens, it is
// evicted, long before its leases would expire.
func TestLeasesOfTheSlowKept(t *testing.T) {
	t.Parallel()
	const n, ttl, probe = 4, 8 * time.Second, 50 * time.Millisecond
	emb := leaseBus(t, ttl)
	js := jsOf(t, emb)
	kv, err := js.KeyValue(t.Context(), PartitionBucket)
	if err != nil {
		t.Fatal(err)
	}
	// "slow" is a member holding two partitions whose answers come after
	// the probe has stopped waiting.
	nc := jsNamed(t, emb, "slow").Conn()
	var asked sync.WaitGroup
	t.Cleanup(asked.Wait)
	var probed atomic.Int64
	sub, err := nc.Subscribe(aliveSubject("retriever", "slow"), func(m *nats.Msg) {
		probed.Add(1)
		asked.Go(func() { time.Sleep(4 * probe); _ = m.Respond(nil) })
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"retriever.n", "retriever.m.slow", "retriever.p.0", "retriever.p.1"} {
		v := "slow"
		if k == "retriever.n" {
			v = "4"
		}
		if _, err := kv.Put(t.Context(), k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	h := &holders{by: map[int]map[string]bool{}}
	runLeases(t, emb, h, LeaseConfig{Group: "retriever", Instance: "a", N: n, Probe: probe})

	wait.For(t, "a to hold the other two", func() error { return wait.Equal(h.count("a"), 2) })
	// Probed for longer than a member that no one answers for is given (a
	// round and a probe), and the slow one never renews: counted as
	// misses, its late answers would have it evicted.
	from, span := probed.Load(), ttl/4+probe+ttl/8
	for start := time.Now(); time.Since(start) < span; time.Sleep(probe) {
		if got := h.count("a"); got != 2 {
			t.Fatalf("a holds %d partitions after probing a slow member for %v, want 2", got, time.Since(start).Round(time.Millisecond))
		}
	}
	if got := probed.Load() - from; got < 10 {
		t.Fatalf("the slow member was probed %d times in %v, want dozens", got, span)
	}
	for _, k := range []string{"retriever.m.slow", "retriever.p.0", "retriever.p.1"} {
		if e, err := kv.Get(t.Context(), k); err != nil || string(e.Value()) != "slow" {
			t.Fatalf("%s after probing a slow member: %v, want the slow member's", k, err)
		}
	}

	// Written again, so that they outlive the eviction by most of a TTL
	// however long the probing above took.
	for _, k := range []string{"retriever.m.slow", "retriever.p.0", "retriever.p.1"} {
		if _, err := kv.Put(t.Context(), k, []byte("slow")); err != nil {
			t.Fatal(err)
		}
	}
	evicted := deletion(t, kv, "retriever.p.0")
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	wait.For(t, "a to hold every partition once nothing listens", func() error { return wait.Equal(h.count("a"), n) })
	wait.For(t, "the member no one answers for evicted, not left to expire", evicted)
}

// deletion watches key and returns a check that it has been deleted
// since: evicted. A lease that expires leaves no entry behind.
func deletion(t *testing.T, kv jetstream.KeyValue, key string) func() error {
	t.Helper()
	w, err := kv.Watch(t.Context(), key, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	var deleted atomic.Bool
	go func() {
		for e := range w.Updates() {
			if e != nil && e.Operation() == jetstream.KeyValueDelete {
				deleted.Store(true)
			}
		}
	}()
	return func() error {
		if !deleted.Load() {
			return fmt.Errorf("%s not deleted", key)
		}
		return nil
	}
}

// A member that renews its membership and leases but does not listen on
// its alive subject (its subscription refused, an older version) is
// alive: it keeps its partitions; once it stops renewing, it is evicted,
// long before its leases would expire.
func TestLeasesOfTheDeafKept(t *testing.T) {
	t.Parallel()
	const n, ttl, probe = 4, 4 * time.Second, 50 * time.Millisecond
	emb := leaseBus(t, ttl)
	kv, err := jsOf(t, emb).KeyValue(t.Context(), PartitionBucket)
	if err != nil {
		t.Fatal(err)
	}
	revs := map[string]uint64{}
	for _, k := range []string{"retriever.m.deaf", "retriever.p.0", "retriever.p.1"} {
		if revs[k], err = kv.Put(t.Context(), k, []byte("deaf")); err != nil {
			t.Fatal(err)
		}
	}
	h := &holders{by: map[int]map[string]bool{}}
	runLeases(t, emb, h, LeaseConfig{Group: "retriever", Instance: "a", N: n, Probe: probe})
	wait.For(t, "a to hold the other two", func() error { return wait.Equal(h.count("a"), 2) })
	// Renewed twice a round (a live member renews each round; the test's
	// ticks come late under load), for three rounds: three times what a
	// dead one is given.
	tick := time.NewTicker(ttl / 8)
	defer tick.Stop()
	for range 6 {
		<-tick.C
		for k, rev := range revs {
			next, err := kv.Update(t.Context(), k, []byte("deaf"), rev)
			if err != nil {
				t.Fatalf("renew %s of a member that does not listen: %v, want it still its own", k, err)
			}
			revs[k] = next
		}
	}
	if got := h.count("a"); got != 2 {
		t.Fatalf("a holds %d partitions beside a live member that does not listen, want 2", got)
	}
	evicted := deletion(t, kv, "retriever.p.0")
	wait.For(t, "a to hold every partition once the deaf one stops renewing", func() error { return wait.Equal(h.count("a"), n) })
	wait.For(t, "the member that stopped renewing evicted, not left to expire", evicted)
}
