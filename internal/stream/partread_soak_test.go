//go:build soak

package stream

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// soakInt reads an integer setting of the soak from the environment.
func soakInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// What it costs a retriever to read one partition's events out of MEMORY,
// two ways (docs/scale.md, "How a retriever reads its partitions"):
//
//   - skip: every message of the stream is delivered and passed over by
//     its subject (partitionOfSubject), the way a partition's projector
//     reads;
//
//   - filter: the server delivers only the partition's users, by a
//     consumer per chunk of users filtering mem.<ns>.<user>.> (the
//     "per-user filter" of the issue).
//
//     ENGRAM_SOAK_USERS=2000 ENGRAM_SOAK_EVENTS=200000 go test -tags soak -run TestPartitionReadCost -v ./internal/stream
func TestPartitionReadCost(t *testing.T) {
	users, total, parts := soakInt("ENGRAM_SOAK_USERS", 2000), soakInt("ENGRAM_SOAK_EVENTS", 200000), 8
	js := startJS(t)
	body := []byte(`{"specversion":"1.0","id":"x","source":"soak","type":"turn.recorded","data":{"session_id":"s","turn_index":1,"role":"user","content":"` +
		strings.Repeat("我们用 Go 写服务 and deploy on Fridays. ", 8) + `"}}`)
	start := time.Now()
	var futures []jetstream.PubAckFuture
	for i := range total {
		f, err := js.PublishAsync(Subject("default", fmt.Sprintf("u%06d", i%users), "turn.recorded"), body)
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
		if len(futures) == 4096 {
			<-js.PublishAsyncComplete()
			futures = futures[:0]
		}
	}
	<-js.PublishAsyncComplete()
	t.Logf("stored %d events of %d bytes for %d users in %v", total, len(body), users, time.Since(start).Round(time.Millisecond))

	// skip: one ordered consumer over the whole stream.
	start, cpu0 := time.Now(), cpuTime()
	oc, err := js.OrderedConsumer(t.Context(), MemoryStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	read, kept := 0, 0
	for read < total {
		b, err := oc.Fetch(4096, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			read++
			if p, ok := PartitionOfSubject(m.Subject(), parts); ok && p == 3 {
				kept++
			}
		}
	}
	skip, skipCPU := time.Since(start), cpuTime()-cpu0
	t.Logf("skip: read %d, kept %d (partition 3 of %d) in %v: %.0f messages/s read, %.0f kept/s; %.0f messages a CPU second "+
		"(server and reader)", read, kept, parts, skip.Round(time.Millisecond), float64(read)/skip.Seconds(), float64(kept)/skip.Seconds(),
		float64(read)/skipCPU.Seconds())

	// filter: the partition's users, a chunk of them per consumer.
	var mine []string
	for u := range users {
		user := fmt.Sprintf("u%06d", u)
		if PartitionOf("default", user, parts) == 3 {
			mine = append(mine, Subject("default", user, ">"))
		}
	}
	start, cpu0 = time.Now(), cpuTime()
	got := 0
	chunk := soakInt("ENGRAM_SOAK_CHUNK", 256)
	for i := 0; i < len(mine); i += chunk {
		filters := mine[i:min(i+chunk, len(mine))]
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		c, err := js.OrderedConsumer(ctx, MemoryStream, jetstream.OrderedConsumerConfig{FilterSubjects: filters})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		// The consumer counts what its filters match when it is made:
		// read until that many came.
		info, err := c.Info(ctx)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		for n := uint64(0); n < info.NumPending; {
			b, err := c.Fetch(4096, jetstream.FetchMaxWait(2*time.Second))
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			for range b.Messages() {
				n++
				got++
			}
		}
		cancel()
	}
	filter, filterCPU := time.Since(start), cpuTime()-cpu0
	t.Logf("filter: %d users in chunks of %d, kept %d in %v: %.0f kept/s, %.0f a CPU second", len(mine), chunk, got,
		filter.Round(time.Millisecond), float64(got)/filter.Seconds(), float64(got)/filterCPU.Seconds())
	t.Logf("load average %s", loadAverage())
	if got != kept {
		t.Errorf("filter kept %d, skip %d", got, kept)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
