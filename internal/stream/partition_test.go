package stream

import (
	"context"
	"errors"
	"strings"
	"sync"
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

// Instances share the partitions evenly; one whose connection is cut
// stops working on its partitions before their leases expire, and the
// other takes them; one that stops gives them back at once; an instance
// with another number of partitions is refused.
func TestLeasesShareAndMove(t *testing.T) {
	t.Parallel()
	emb, err := StartEmbedded(EmbeddedConfig{StoreDir: t.TempDir(), Sync: "1s"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	const n, ttl = 4, time.Second
	// The operator makes the lease bucket, with the TTL the leases live by.
	if err := EnsureStreams(t.Context(), jsOf(t, emb), StreamsConfig{LeaseTTL: ttl}); err != nil {
		t.Fatal(err)
	}
	h := &holders{by: map[int]map[string]bool{}}
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	start := func(name string) (*nats.Conn, context.CancelFunc) {
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
		l, err := OpenLeases(t.Context(), js, LeaseConfig{Group: "extractor", Instance: name, N: n}, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		wg.Go(func() { l.Run(ctx, h.own(name)) })
		return nc, cancel
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
func jsOf(t *testing.T, emb *Embedded) jetstream.JetStream {
	t.Helper()
	nc, err := Connect(ConnConfig{Name: "setup"}, emb.ConnectOption())
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
