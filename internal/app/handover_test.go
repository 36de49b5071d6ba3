package app

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
)

// A graceful handover: one extractor holds every partition, a second
// joins while sessions stream in, and half the partitions move to it.
// What the first had waiting (turns of open sessions, messages taken and
// not yet acknowledged) is picked up by the second: every session is
// extracted exactly once, no turn in two requests, none left behind.
func TestExtractorHandoverExactlyOnce(t *testing.T) {
	// Not parallel: partition leases live 10 s and renew every 2.5 s, and
	// on two loaded cores beside other tests a renewal comes late enough
	// to move partitions mid-test.
	const partitions, users, rounds, perRound, turnsPer = 4, 12, 8, 6, 3
	bus := busWithFastLeases(t)
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string {
		return `{"facts":[{"subject":"user","predicate":"note","content":"a note","kind":"fact","category":"event","importance":0.5,"confidence":0.9}]}`
	})
	llmURL, model := srv.Config().BaseURL, srv.Config().Model

	ingest := partitionWorker(t, bus, "ingest", RoleIngest, partitions, "", "")
	x1 := partitionWorker(t, bus, "x1", RoleExtractor, partitions, llmURL, model)
	wait.For(t, "x1 to hold every partition", func() error { return wait.Equal(partitionsHeld(t, bus, "extractor")["x1"], partitions) })
	// Round r opens sessions r*perRound… with their turns, and ends the
	// sessions the round before opened: each session's turns wait in a
	// batcher across a round, the handover among them.
	session := func(s int) (user, id string) { return fmt.Sprintf("u%d", s%users), fmt.Sprintf("s%d", s) }
	round := func(r int) {
		var evs []any
		for s := r * perRound; s < (r+1)*perRound && r < rounds; s++ {
			user, id := session(s)
			for i := range turnsPer {
				evs = append(evs, turnEvent(fmt.Sprintf("%s-%d", id, i), user, id, i, "user",
					fmt.Sprintf("session %d, turn %d: I moved to Lisbon last spring", s, i)))
			}
		}
		for s := (r - 1) * perRound; r > 0 && s < r*perRound; s++ {
			user, id := session(s)
			evs = append(evs, endEvent(id+"-end", user, id, turnsPer))
		}
		mustAccept(t, postBatch(t, ingest, evs...))
	}
	var x2 *App
	for r := 0; r <= rounds; r++ {
		round(r)
		if r == 2 {
			x2 = partitionWorker(t, bus, "x2", RoleExtractor, partitions, llmURL, model)
		}
	}
	wait.Until(t, "two partitions each", func() bool {
		held := partitionsHeld(t, bus, "extractor")
		return held["x1"] == 2 && held["x2"] == 2
	})
	const sessions = rounds * perRound
	wait.For(t, "every turn extracted", func() error {
		return errors.Join(wait.Equal(countTurnsAll(t, x1, users), sessions*turnsPer),
			wait.Equal(countUnextracted(t, x1), 0),
			wait.Equal(countTurnsAll(t, x2, users), sessions*turnsPer),
			wait.Equal(countUnextracted(t, x2), 0))
	})
	checkExtractedOnce(t, bus.op, sessions, turnsPer)
}

// checkExtractedOnce reads the stream's record: each turn in exactly
// one request, each request answered exactly once, every session
// requested. It returns the number of requests.
func checkExtractedOnce(t *testing.T, js jetstream.JetStream, sessions, turnsPer int) int {
	t.Helper()
	requests, extracted, readings := map[string]bool{}, map[string]int{}, map[string]int{}
	covered := map[string]map[int]string{}
	for _, m := range readStream(t, js, "mem.*.*."+events.TypeExtractionRequested, "mem.*.*."+events.TypeMemoryExtracted) {
		switch d := m.Data.(type) {
		case *events.ExtractionRequested:
			key := events.User(m.Event) + "/" + d.SessionID
			if covered[key] == nil {
				covered[key] = map[int]string{}
			}
			for _, tr := range d.Turns {
				if other, ok := covered[key][tr.TurnIndex]; ok && other != d.RequestID {
					t.Errorf("%s turn %d in requests %s and %s", key, tr.TurnIndex, other, d.RequestID)
				}
				covered[key][tr.TurnIndex] = d.RequestID
			}
			requests[d.RequestID] = true
		case *events.MemoryExtracted:
			if d.Pass == events.PassTurn {
				// The rules' reading of one turn: one event, whoever read it.
				if readings[d.RequestID]++; readings[d.RequestID] > 1 {
					t.Errorf("turn reading %s stored %d times", d.RequestID, readings[d.RequestID])
				}
				continue
			}
			extracted[d.RequestID]++
		}
	}
	if got, want := len(readings), sessions*turnsPer; got != want {
		t.Errorf("%d turns read at once, want every user turn (%d)", got, want)
	}
	if got := len(covered); got != sessions {
		t.Fatalf("%d sessions requested, want %d", got, sessions)
	}
	for key, turns := range covered {
		if len(turns) != turnsPer {
			t.Errorf("%s: %d turns requested, want %d", key, len(turns), turnsPer)
		}
	}
	for id := range requests {
		if extracted[id] != 1 {
			t.Errorf("request %s answered %d times, want once", id, extracted[id])
		}
	}
	if len(extracted) != len(requests) {
		t.Errorf("%d requests answered, %d made", len(extracted), len(requests))
	}
	return len(requests)
}

// A graceful handover of the consolidator: one holds every partition, a
// second joins while sessions end, and every ended session gets its one
// session-end episode when it ends, not from a later sweep.
func TestConsolidatorHandover(t *testing.T) {
	// Not parallel: partition leases live 10 s and renew every 2.5 s, and
	// on two loaded cores beside other tests a renewal comes late enough
	// to move partitions mid-test.
	const partitions, users, rounds = 4, 8, 6
	bus := busWithFastLeases(t)
	ingest := partitionWorker(t, bus, "ingest", RoleIngest, partitions, "", "")
	retriever := partitionWorker(t, bus, "retriever", RoleRetriever, partitions, "", "")
	partitionWorker(t, bus, "c1", RoleConsolidator, partitions, "", "")
	base := "http://" + retriever.HTTPAddr()
	wait.For(t, "c1 to hold every partition", func() error { return wait.Equal(partitionsHeld(t, bus, "consolidator")["c1"], partitions) })
	for r := range rounds {
		s := fmt.Sprintf("s%d", r)
		var evs []any
		for u := range users {
			user := fmt.Sprintf("u%d", u)
			evs = append(append(evs, conversation(user+s, user, s)...), endEvent(user+s+"-end", user, s, 4))
		}
		mustAccept(t, postBatch(t, ingest, evs...))
		if r == 1 {
			partitionWorker(t, bus, "c2", RoleConsolidator, partitions, "", "")
		}
	}
	wait.Until(t, "two partitions each", func() bool {
		held := partitionsHeld(t, bus, "consolidator")
		return held["c1"] == 2 && held["c2"] == 2
	})
	wait.Until(t, "every session's episode for every user", func() bool {
		for u := range users {
			if len(episodesOf(t, base, "default", fmt.Sprintf("u%d", u))) < rounds {
				return false
			}
		}
		return true
	})
	built := map[string]int{}
	for _, m := range readStream(t, bus.op, "mem.*.*."+events.TypeEpisodeBuilt) {
		built[m.Event.ID()]++
	}
	if len(built) != users*rounds {
		t.Errorf("%d episodes built, want %d", len(built), users*rounds)
	}
	for u := range users {
		eps := episodesOf(t, base, "default", fmt.Sprintf("u%d", u))
		if len(eps) != rounds {
			t.Errorf("u%d: %d episodes, want %d", u, len(eps), rounds)
		}
		for _, ep := range eps {
			if ep.Source != events.SourceSessionEnd {
				t.Errorf("u%d: episode %s from %s, want %s", u, ep.ID, ep.Source, events.SourceSessionEnd)
			}
		}
	}
}

// An extractor that takes a partition recovers only the turns its batcher
// consumer has already been delivered (up to its ack floor): the turns
// after them come from the consumer, in stream order. Here the whole
// session is in the stream before the extractor starts: turns 0 and 1, a
// compression of them, then turns 2 and 3. The compression's request
// covers turns 0 and 1 only, as it does when the batcher saw the events
// live; turns 2 and 3 came after it.
func TestExtractorRecoversOnlyWhatItsConsumerDelivered(t *testing.T) {
	t.Parallel()
	const partitions = 4
	bus := busWithFastLeases(t)
	ingest := partitionWorker(t, bus, "ingest", RoleIngest, partitions, "", "")
	mustAccept(t, postBatch(t, ingest,
		turnEvent("r-0", "ana", "s1", 0, "user", "My name is Ana and I prefer dark mode"),
		turnEvent("r-1", "ana", "s1", 1, "assistant", "Noted."),
		compressing("r-compress", "ana", "s1"),
		turnEvent("r-2", "ana", "s1", 2, "user", "I moved to Lisbon last spring"),
		turnEvent("r-3", "ana", "s1", 3, "assistant", "Noted as well."),
	))
	partitionWorker(t, bus, "x1", RoleExtractor, partitions, "", "")
	wait.Until(t, "the compression's request", func() bool {
		for _, m := range readStream(t, bus.op, "mem.*.*."+events.TypeExtractionRequested) {
			if m.Data.(*events.ExtractionRequested).Reason == "compressing" {
				return true
			}
		}
		return false
	})
	for _, m := range readStream(t, bus.op, "mem.*.*."+events.TypeExtractionRequested) {
		d := m.Data.(*events.ExtractionRequested)
		if d.Reason != "compressing" {
			continue
		}
		var got []int
		for _, tr := range d.Turns {
			got = append(got, tr.TurnIndex)
		}
		if fmt.Sprint(got) != "[0 1]" {
			t.Errorf("the compression's request covers turns %v, want [0 1] (turns 2 and 3 came after it)", got)
		}
	}
}

// A partition given up before its durable consumer was ever made (its
// creation timed out while a node was down, say) is taken later by an
// instance that makes the durable then: it starts where the group's
// layout began, not where the other partitions' durables have got to,
// or its users' events since would be skipped. Here a lease another
// instance holds keeps the partition from x1 while the others move on.
func TestPartitionDurableMadeLateStartsWithTheLayout(t *testing.T) {
	t.Parallel()
	const partitions, users, turnsPer = 4, 8, 2
	bus := busWithFastLeases(t)
	ingest := partitionWorker(t, bus, "ingest", RoleIngest, partitions, "", "")
	js := bus.op
	kv, err := js.CreateOrUpdateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: stream.PartitionBucket,
		History: 1, TTL: time.Second, Storage: jetstream.FileStorage, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	ghost := stream.PartitionOf("default", "u0", partitions)
	key := fmt.Sprintf("extractor.p.%d", ghost)
	hold, release := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(release)
		for {
			if _, err := kv.Put(t.Context(), key, []byte("ghost")); err != nil && t.Context().Err() == nil {
				t.Errorf("hold partition %d: %v", ghost, err)
			}
			select {
			case <-hold:
				_ = kv.Delete(t.Context(), key)
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	x1 := partitionWorker(t, bus, "x1", RoleExtractor, partitions, "", "")
	wait.For(t, "x1 to hold every partition but the ghost's", func() error { return wait.Equal(partitionsHeld(t, bus, "extractor")["x1"], partitions-1) })
	var evs []any
	for u := range users {
		user := fmt.Sprintf("u%d", u)
		for i := range turnsPer {
			evs = append(evs, turnEvent(fmt.Sprintf("%s-%d", user, i), user, "s1", i, "user", "I moved to Lisbon last spring"))
		}
		evs = append(evs, endEvent(user+"-end", user, "s1", turnsPer))
	}
	mustAccept(t, postBatch(t, ingest, evs...))
	wait.Until(t, "the other partitions' sessions extracted", func() bool {
		if countTurnsAll(t, x1, users) != users*turnsPer {
			return false
		}
		for u := range users {
			user := fmt.Sprintf("u%d", u)
			if stream.PartitionOf("default", user, partitions) != ghost && unextractedOf(t, x1, user) > 0 {
				return false
			}
		}
		return true
	})
	close(hold)
	<-release
	wait.For(t, "x1 to hold every partition", func() error { return wait.Equal(partitionsHeld(t, bus, "extractor")["x1"], partitions) })
	wait.For(t, "every session extracted", func() error { return wait.Equal(countUnextracted(t, x1), 0) })
}
