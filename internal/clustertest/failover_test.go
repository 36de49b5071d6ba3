package clustertest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/sourcegraph/conc"
)

// load is agents talking while processes die: each user's sessions, turn
// by turn, each ended by session.ended. An event is retried (same id) on
// the other ingest until one answers 202, as an agent's client does; what
// was answered 202 is acknowledged and must never be lost.
type load struct {
	w     workload
	d     *deployment
	turns int           // per session
	every time.Duration // between a user's turns

	acked    atomic.Int64
	mu       sync.Mutex
	ackedIDs map[string]bool // acknowledged turn.recorded ids
	sessions map[string]int  // user/session → turns acknowledged, for sessions whose end was acknowledged
	retries  atomic.Int64
}

func (l *load) turnID(u, s, i int) string { return fmt.Sprintf("%s-f%d-t%d", l.w.user(u), s, i) }

// user runs user u's sessions until stop is closed (the session under way
// is finished first).
func (l *load) user(ctx context.Context, u int, stop <-chan struct{}) error {
	// An agent's pace, not a flood: the test is about what is in flight
	// when processes die, and a flood would only make it slow.
	pace := time.NewTicker(l.every)
	defer pace.Stop()
	for s := 0; ; s++ {
		select {
		case <-stop:
			return nil
		default:
		}
		session := fmt.Sprintf("f%d", s)
		for i := range l.turns {
			role, text := "user", fmt.Sprintf("第%d轮：we use Go 1.2%d and 我住在城市%d。", i, i%10, u)
			if i%2 == 1 {
				role, text = "assistant", fmt.Sprintf("Noted, turn %d of %s.", i, session)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-pace.C:
			}
			ev := l.w.turn(u, session, i, role, text, nil)
			ev["id"] = l.turnID(u, s, i)
			if err := l.send(ctx, u, ev); err != nil {
				return err
			}
			l.mu.Lock()
			l.ackedIDs[ev["id"].(string)] = true
			l.mu.Unlock()
		}
		end := l.w.event(u, fmt.Sprintf("%s-f%d-end", l.w.user(u), s), "session.ended", session, l.turns,
			map[string]any{"session_id": session, "message_count": l.turns})
		if err := l.send(ctx, u, end); err != nil {
			return err
		}
		l.mu.Lock()
		l.sessions[l.w.user(u)+"/"+session] = l.turns
		l.mu.Unlock()
	}
}

// send posts one event until an ingest acknowledges it, trying the
// user's ingest first and then the others.
func (l *load) send(ctx context.Context, u int, ev map[string]any) error {
	ingest := l.d.procs["ingest"]
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		p := ingest[(u+attempt)%len(ingest)]
		err := l.w.post(ctx, "http://"+p.http, []any{ev})
		if err == nil {
			l.acked.Add(1)
			return nil
		}
		if strings.Contains(err.Error(), ": 400 ") {
			return err // refused as invalid: a bug in the load, not a failover
		}
		last = err
		l.retries.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("event %s never acknowledged: %w", ev["id"], last)
}

// streamLeader is the node that leads MEMORY now.
func streamLeader(t *testing.T, d *deployment, js jetstream.JetStream) *proc {
	t.Helper()
	var leader string
	wait.Within(t, 30*time.Second, "MEMORY to have a leader", func() error {
		if !(func() bool {
			s, err := js.Stream(t.Context(), stream.MemoryStream)
			if err != nil {
				return false
			}
			si, err := s.Info(t.Context())
			if err != nil || si.Cluster == nil {
				return false
			}
			leader = si.Cluster.Leader
			return leader != ""
		})() {
			return errors.New("not yet")
		}
		return nil
	})
	for _, n := range d.nodes {
		if "engram-"+strings.TrimPrefix(n.name, "nats-") == leader {
			return n
		}
	}
	t.Fatalf("MEMORY's leader %q is none of the nodes", leader)
	return nil
}

// SIGKILL one NATS node (MEMORY's leader) and one instance of each worker
// while agents talk, then restart them: no acknowledged event is lost,
// the stream holds no event twice, every session is extracted exactly
// once, the retrievers agree, and a rebuild of each equals it.
func TestFailover(t *testing.T) {
	users, turns, rounds := 4, 4, 1
	if soak() {
		users, turns, rounds = 16, 8, 3
	}
	// No model runs here, so a short model timeout costs nothing, and it
	// bounds the workers' ack waits: what a killed extractor or
	// consolidator held comes back that much sooner (see the report on
	// AckWait in docs/operations.md).
	began := time.Now()
	d := startCluster(t, "ENGRAM_LLM_TIMEOUT=1s")
	t.Logf("cluster up in %v", time.Since(began).Round(time.Millisecond))
	js := d.operatorJS(t)
	l := &load{w: newWorkload(users, time.Now()), d: d, turns: turns, every: 50 * time.Millisecond, ackedIDs: map[string]bool{}, sessions: map[string]int{}}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	stop := make(chan struct{})
	var wg conc.WaitGroup
	errs := make([]error, users)
	for u := range users {
		wg.Go(func() { errs[u] = l.user(ctx, u, stop) })
	}
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoad()
	acked := func(n int64) func() error {
		return func() error {
			if got := l.acked.Load(); got < n {
				return fmt.Errorf("%d acknowledged, want %d", got, n)
			}
			return nil
		}
	}

	victims := func() []*proc {
		out := []*proc{streamLeader(t, d, js)}
		for _, role := range []string{"ingest", "retriever", "extractor", "consolidator"} {
			ps := d.procs[role]
			out = append(out, ps[len(ps)-1])
		}
		return out
	}
	for round := range rounds {
		base := l.acked.Load()
		wait.Within(t, time.Minute, "load before the kill", acked(base+int64(3*users)))
		killed := victims()
		for _, p := range killed {
			p.kill(t)
		}
		t.Logf("round %d: killed %d processes at %d events acknowledged", round+1, len(killed), l.acked.Load())
		// The survivors keep acknowledging: two of three nodes are a quorum.
		base = l.acked.Load()
		wait.Within(t, time.Minute, "events acknowledged with a node and a worker of each kind down", acked(base+int64(2*users)))
		down := time.Now()
		for _, p := range killed {
			p.start(t)
		}
		t.Logf("round %d: restarted in %v", round+1, time.Since(down).Round(time.Millisecond))
		base = l.acked.Load()
		wait.Within(t, time.Minute, "load after the restart", acked(base+int64(2*users)))
	}
	stopLoad()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("load stopped at %v", time.Since(began).Round(time.Millisecond))
	last := settle(t, js, d.parts, 2*time.Second)
	t.Logf("settled at %v: %d events acknowledged (%d retries), %d sessions, stream at %d", time.Since(began).Round(time.Millisecond), l.acked.Load(), l.retries.Load(), len(l.sessions), last)

	checkStreamOnce(t, js, last)
	t.Logf("stream checked at %v", time.Since(began).Round(time.Millisecond))
	for _, p := range d.procs["retriever"] {
		p.stop(t)
	}
	t.Logf("retrievers stopped at %v", time.Since(began).Round(time.Millisecond))
	copies := d.readCopies()
	checkTurnsKept(t, copies, l)
	checkSessionsExtractedOnce(t, copies, l)
	for _, c := range copies {
		// The operator's `engram rebuild --partition`, against the
		// cluster, with the retriever stopped: it replays MEMORY's events
		// of the partition's users into a new file and compares.
		out, code := engram(t, []string{"ENGRAM_DATA_DIR=" + c.dir, "ENGRAM_NATS_URL=" + d.natsURL, "ENGRAM_NATS_NKEY=" + d.operator,
			"ENGRAM_PARTITIONS=" + strconv.Itoa(c.parts)}, "rebuild", "--quiet", "--partition", strconv.Itoa(c.partition))
		t.Logf("%s rebuilt at %v", c, time.Since(began).Round(time.Millisecond))
		if code != 0 || !strings.Contains(out, "rebuilt ") || strings.Contains(out, "MISMATCH") {
			t.Errorf("engram rebuild of %s: exit %d:\n%s", c, code, out)
		}
	}
}

// checkStreamOnce reads MEMORY from the start: no event (source and id)
// is stored twice, and nothing was dead-lettered.
func checkStreamOnce(t *testing.T, js jetstream.JetStream, last uint64) {
	t.Helper()
	seen := map[string]uint64{}
	for seq := uint64(1); seq <= last; seq++ {
		a, err := stream.Load(t.Context(), js, seq, 1<<20)
		if err != nil {
			t.Fatalf("read MEMORY: %v", err)
		}
		key := a.Source + " " + a.ID
		if prev, ok := seen[key]; ok {
			t.Errorf("event %s (%s) stored twice: seq %d and %d", a.ID, a.Type, prev, seq)
		}
		seen[key] = seq
	}
	s, err := js.Stream(t.Context(), stream.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	si, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if si.State.Msgs != 0 {
		t.Errorf("%d events dead-lettered", si.State.Msgs)
	}
}

// checkTurnsKept: the read models (each user's partition's copy) hold
// exactly the turns acknowledged.
func checkTurnsKept(t *testing.T, copies []readCopy, l *load) {
	t.Helper()
	stores := map[string]*sqlite.Store{}
	storeOf := func(user string) (*sqlite.Store, readCopy) {
		for _, c := range copies {
			if !c.keeps("default", user) {
				continue
			}
			if stores[c.path] == nil {
				s, err := sqlite.Open(t.Context(), c.path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { quiet.Close(s) })
				stores[c.path] = s
			}
			return stores[c.path], c
		}
		t.Fatalf("no read model holds %s", user)
		return nil, readCopy{}
	}
	n := 0
	for u := range l.w.users {
		s, c := storeOf(l.w.user(u))
		for sess := 0; ; sess++ {
			found := 0
			for i := range l.turns {
				if l.ackedIDs[l.turnID(u, sess, i)] {
					found++
				}
			}
			if found == 0 {
				break
			}
			st, err := s.SessionTurns(t.Context(), scopeOf(l.w.user(u)), fmt.Sprintf("f%d", sess))
			if err != nil {
				t.Fatal(err)
			}
			if len(st) != found {
				t.Errorf("%s: %s/f%d has %d turns, %d acknowledged", c, l.w.user(u), sess, len(st), found)
			}
			n += found
		}
	}
	if n != len(l.ackedIDs) {
		t.Errorf("checked %d turns of %d acknowledged", n, len(l.ackedIDs))
	}
}

// checkSessionsExtractedOnce: every turn of every ended session is in
// exactly one extraction, which ended extracted.
func checkSessionsExtractedOnce(t *testing.T, copies []readCopy, l *load) {
	t.Helper()
	in := turnsExtracted(t, copies, t.Errorf)
	for session, turns := range l.sessions {
		for i := range turns {
			if n := in[fmt.Sprintf("%s/%d", session, i)]; n != 1 {
				t.Errorf("turn %d of %s is in %d extractions, want 1", i, session, n)
			}
		}
	}
}
