package app

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// partitionWorker starts a worker apart on bus as instance name, sharing
// partitions partitions with its peers, whose leases expire fast (the
// bus's partition bucket lives 1 s).
func partitionWorker(t *testing.T, bus *testBus, name string, roles Roles, partitions int, llmURL, model string) *App {
	t.Helper()
	cfg := WorkerDefaults(testConfig(t, t.TempDir()), "")
	if roles&(RoleIngest|RoleRetriever) != 0 {
		cfg.HTTP.Addr = "127.0.0.1:0"
	}
	bus.use(&cfg)
	cfg.Instance, cfg.Partitions = name, partitions
	cfg.LLM.BaseURL, cfg.LLM.Model, cfg.LLM.Timeout = llmURL, model, 2*time.Second
	a := New(cfg, roles, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Named(name))
	if err := a.Open(t.Context()); err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	return a
}

// crash stops a worker as a crash would: its connection goes first, so
// it neither acknowledges what it holds nor gives its partitions back.
func crash(a *App) {
	for _, c := range a.order {
		c.nc.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = a.Close(ctx)
}

// partitionsHeld counts, per instance, the partitions of group it holds.
func partitionsHeld(t *testing.T, bus *testBus, group string) map[string]int {
	t.Helper()
	held, err := countHeld(t.Context(), bus.op, group)
	if err != nil {
		t.Fatal(err)
	}
	return held
}

// Two extractors share the users' partitions; one dies abruptly in the
// middle of a backlog, the other takes its partitions, and every session
// is extracted exactly once: each turn in one request, each request
// answered once, no turn left unextracted.
func TestExtractorsFailOverExactlyOnce(t *testing.T) {
	// Not parallel: partition leases live 10 s and renew every 2.5 s, and
	// on two loaded cores beside other tests a renewal comes late enough
	// to move partitions mid-test.
	// The first ended sessions are in the extractors' backlog when x1
	// dies; the open ones wait in the batchers, and end after.
	const partitions, users, ended, open, turnsPer = 4, 12, 36, 12, 3
	const sessions = ended + open
	bus := busWithFastLeases(t)
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string {
		return `{"facts":[{"subject":"user","predicate":"note","content":"a note","kind":"fact","category":"event","importance":0.5,"confidence":0.9}]}`
	})
	srv.Always(llmtest.Latency(100 * time.Millisecond))
	llmURL, model := srv.Config().BaseURL, srv.Config().Model

	ingest := partitionWorker(t, bus, "ingest", RoleIngest, partitions, "", "")
	x1 := partitionWorker(t, bus, "x1", RoleExtractor, partitions, llmURL, model)
	x2 := partitionWorker(t, bus, "x2", RoleExtractor, partitions, llmURL, model)
	wait.Until(t, "two partitions each", func() bool {
		held := partitionsHeld(t, bus, "extractor")
		return held["x1"] == 2 && held["x2"] == 2
	})

	end := func(s int) {
		session := fmt.Sprintf("s%d", s)
		mustAccept(t, postEvent(t, ingest, endEvent(session+"-end", fmt.Sprintf("u%d", s%users), session, turnsPer)))
	}
	turns := func(s int) []any {
		user, session := fmt.Sprintf("u%d", s%users), fmt.Sprintf("s%d", s)
		var evs []any
		for i := range turnsPer {
			evs = append(evs, turnEvent(fmt.Sprintf("%s-%d", session, i), user, session, i, "user",
				fmt.Sprintf("session %d, turn %d: I moved to Lisbon last spring", s, i)))
		}
		return evs
	}
	var evs []any
	for s := ended; s < sessions; s++ {
		evs = append(evs, turns(s)...)
	}
	mustAccept(t, postBatch(t, ingest, evs...))
	wait.Until(t, "the batchers to take every turn", func() bool {
		for p := range partitions {
			c, err := bus.op.Consumer(t.Context(), stream.MemoryStream, stream.PartitionDurable("batcher", p, partitions))
			if err != nil {
				return false
			}
			info, err := c.Info(t.Context())
			if err != nil || info.NumPending > 0 || info.NumAckPending > 0 {
				return false
			}
		}
		return true
	})
	evs = nil
	for s := range ended {
		session := fmt.Sprintf("s%d", s)
		evs = append(append(evs, turns(s)...), endEvent(session+"-end", fmt.Sprintf("u%d", s%users), session, turnsPer))
	}
	mustAccept(t, postBatch(t, ingest, evs...))
	wait.Until(t, "the extractors to be in the middle of the backlog", func() bool { return srv.Calls() >= ended/4 })
	crash(x1)
	if calls := srv.Calls(); calls >= ended {
		t.Fatalf("%d calls before the crash: the backlog was already done", calls)
	}
	for s := ended; s < sessions; s++ {
		end(s)
	}
	wait.For(t, "x2 to hold every partition", func() error { return wait.Equal(partitionsHeld(t, bus, "extractor")["x2"], partitions) })
	wait.For(t, "every turn extracted", func() error {
		return errors.Join(wait.Equal(countTurnsAll(t, x2, users), sessions*turnsPer),
			wait.Equal(countUnextracted(t, x2), 0))
	})

	// The stream's record: each turn in exactly one request, each
	// request answered exactly once.
	requests := checkExtractedOnce(t, bus.op, sessions, turnsPer)
	t.Logf("%d sessions, %d requests, %d model calls (a request the dead instance held is asked again)",
		sessions, requests, srv.Calls())
}

// Two consolidators share the users' partitions; one dies abruptly, the
// other takes its partitions, and every session ended before and after
// gets its one episode.
func TestConsolidatorsFailOver(t *testing.T) {
	// Not parallel: partition leases live 10 s and renew every 2.5 s, and
	// on two loaded cores beside other tests a renewal comes late enough
	// to move partitions mid-test.
	const partitions, users = 4, 8
	bus := busWithFastLeases(t)
	ingest := partitionWorker(t, bus, "ingest", RoleIngest, partitions, "", "")
	retriever := partitionWorker(t, bus, "retriever", RoleRetriever, partitions, "", "")
	c1 := partitionWorker(t, bus, "c1", RoleConsolidator, partitions, "", "")
	partitionWorker(t, bus, "c2", RoleConsolidator, partitions, "", "")
	base := "http://" + retriever.HTTPAddr()
	wait.Until(t, "two partitions each", func() bool {
		held := partitionsHeld(t, bus, "consolidator")
		return held["c1"] == 2 && held["c2"] == 2
	})
	session := func(s string) {
		var evs []any
		for u := range users {
			user := fmt.Sprintf("u%d", u)
			evs = append(append(evs, conversation(user+s, user, s)...), endEvent(user+s+"-end", user, s, 4))
		}
		mustAccept(t, postBatch(t, ingest, evs...))
	}
	episodes := func(want int) func() bool {
		return func() bool {
			for u := range users {
				if len(episodesOf(t, base, "default", fmt.Sprintf("u%d", u))) != want {
					return false
				}
			}
			return true
		}
	}
	session("s1")
	wait.Until(t, "a session episode for every user", episodes(1))
	crash(c1)
	session("s2")
	wait.For(t, "c2 to hold every partition", func() error { return wait.Equal(partitionsHeld(t, bus, "consolidator")["c2"], partitions) })
	wait.Until(t, "both sessions' episodes for every user", episodes(2))
	for u := range users {
		for _, ep := range episodesOf(t, base, "default", fmt.Sprintf("u%d", u)) {
			if ep.Source != events.SourceSessionEnd {
				t.Errorf("u%d: episode %s from %s, want %s", u, ep.ID, ep.Source, events.SourceSessionEnd)
			}
		}
	}
}

// countTurnsAll counts the turns in a's read model.
func countTurnsAll(t *testing.T, a *App, users int) int {
	t.Helper()
	n := 0
	for u := range users {
		n += countTurns(t, a, memory.Scope{Namespace: "default", User: fmt.Sprintf("u%d", u)})
	}
	return n
}

// readStream decodes every message of MEMORY on the subjects.
func readStream(t *testing.T, js jetstream.JetStream, subjects ...string) []*stream.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, stream.MemoryStream, jetstream.OrderedConsumerConfig{FilterSubjects: subjects})
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []*stream.Message
	for left := info.NumPending; left > 0; {
		batch, err := cons.Fetch(int(min(left, 256)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for m := range batch.Messages() {
			e, data, err := stream.Decode(m.Subject(), m.Headers(), m.Data(), 1<<20)
			if err != nil {
				t.Fatalf("decode %s: %v", m.Subject(), err)
			}
			out = append(out, &stream.Message{Event: e, Data: data, Subject: m.Subject()})
			got++
		}
		if got == 0 {
			t.Fatal("the stream gave nothing")
		}
		left -= uint64(got)
	}
	return out
}

// userStore is the read model of a that holds scope's rows: its own, or
// the copy of scope's partition a partitioned retriever keeps (nil while
// it keeps none).
func userStore(a *App, scope memory.Scope) *sqlite.Store {
	if a.reads == nil {
		return a.store
	}
	a.reads.mu.Lock()
	defer a.reads.mu.Unlock()
	if part := a.reads.parts[stream.PartitionOf(scope.Namespace, scope.User, a.reads.n)]; part != nil {
		return part.store
	}
	return nil
}

// dailySummaries are scope's days on date as a's read model has them
// (none while it keeps no copy of scope's partition).
func dailySummaries(t *testing.T, a *App, scope memory.Scope, date string) []memory.DailySummary {
	t.Helper()
	s := userStore(a, scope)
	if s == nil {
		return nil
	}
	days, err := s.DailySummaries(t.Context(), scope, date)
	if err != nil {
		t.Fatal(err)
	}
	return days
}

// readStores are a's read models: its own, or a partitioned retriever's
// copies.
func readStores(a *App) []*sqlite.Store {
	if a.reads == nil {
		return []*sqlite.Store{a.store}
	}
	a.reads.mu.Lock()
	defer a.reads.mu.Unlock()
	var out []*sqlite.Store
	for _, part := range a.reads.parts {
		out = append(out, part.store)
	}
	return out
}
