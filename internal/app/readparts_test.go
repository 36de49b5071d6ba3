package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// readWorker starts a retriever or an ingest apart on bus, sharing
// partitions partitions with its peers (the bus's leases should be fast:
// busWithFastLeases), with the clock of answers fixed and no access
// published while the test compares answers.
func readWorker(t *testing.T, bus *testBus, name string, roles Roles, partitions int, opts ...func(*config.Config)) *App {
	t.Helper()
	cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
	bus.use(&cfg)
	cfg.Instance, cfg.Partitions = name, partitions
	for _, o := range opts {
		o(&cfg)
	}
	a := New(cfg, roles, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Named(name))
	a.accessEvery = time.Hour
	now := time.Date(2026, 1, 9, 12, 0, 0, 0, time.UTC)
	a.retrievalNow = func() time.Time { return now }
	if err := a.Open(t.Context()); err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	return a
}

// readUsers fills users users through front: turns, and memories added
// through the write API (forwarded to each user's partition), each
// waited for.
func readUsers(t *testing.T, front *App, users int) {
	t.Helper()
	var evs []any
	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		for i, text := range []string{"我住在杭州，每天骑车上班", "We deploy the billing service on Fridays", "我喜欢喝咖啡 but not after 3pm"} {
			evs = append(evs, turnEvent(fmt.Sprintf("%s-t%d", user, i), user, "s1", i, "user", fmt.Sprintf("%s (%d)", text, u)))
		}
	}
	mustAccept(t, postBatch(t, front, evs...))
	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		for i, m := range []string{`"kind":"fact","category":"event","subject":"user","predicate":"lives_in","content":"The user lives in Hangzhou (%d)"`,
			`"kind":"preference","category":"config","subject":"user","predicate":"drinks","content":"The user drinks coffee before 3pm (%d)"`} {
			body := fmt.Sprintf(`{"user":%q,`+m+`,"importance":0.%d}`, user, u, 5+i)
			r := do(t, "POST", "http://"+front.HTTPAddr()+"/v1/memories?wait=true", "application/json", []byte(body),
				map[string]string{"Idempotency-Key": fmt.Sprintf("%s-m%d", user, i)})
			if r.Status != 202 {
				t.Fatalf("add a memory for %s through %s: %d %s", user, front.Config.Instance, r.Status, r.Raw)
			}
		}
	}
}

// rowNumbers are what an answer says that depends on how the read model
// that answers numbers its rows: a turn's id is its row number, which a
// copy of one partition counts among its own users' turns only
// (docs/scale.md, "What differs from the single binary"), and its token
// count includes its provenance, which names the id. The turn itself is
// named by its session and index, which stay.
var rowNumbers = regexp.MustCompile(`\bt_[0-9]+\b|"tokens":[0-9]+`)

// answers are a user's context block and search results through api,
// row numbers left out.
func answers(t *testing.T, api *App, user string) (ctxBlock, search string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"user": user, "query": "where do I live and what do I drink?", "budget_tokens": 2000})
	r := do(t, "POST", "http://"+api.HTTPAddr()+"/v1/context", "application/json", body, nil)
	if r.Status != 200 {
		t.Fatalf("context of %s through %s: %d %s", user, api.Config.Instance, r.Status, r.Raw)
	}
	v := url.Values{"user": {user}, "q": {"杭州 coffee"}}
	s := do(t, "GET", "http://"+api.HTTPAddr()+"/v1/search?"+v.Encode(), "", nil, nil)
	if s.Status != 200 {
		t.Fatalf("search of %s through %s: %d %s", user, api.Config.Instance, s.Status, s.Raw)
	}
	return rowNumbers.ReplaceAllString(r.Raw, "#"), rowNumbers.ReplaceAllString(s.Raw, "#")
}

// allServing waits until the retrievers hold every partition between
// them, each copy serving.
func allServing(t *testing.T, partitions int, rs ...*App) {
	t.Helper()
	// Settled: a copy given up lives on until its taker's serves, and
	// its file goes only at its holder's next round.
	wait.Until(t, "every partition held and served, shared fairly, and no copy given up kept", func() bool {
		held, copies := 0, 0
		for _, r := range rs {
			if r.Readiness(t.Context()) != nil {
				return false
			}
			mine := 0
			r.reads.mu.Lock()
			for _, part := range r.reads.parts {
				copies++
				if part.held.Load() {
					mine++
				}
			}
			r.reads.mu.Unlock()
			if mine < partitions/len(rs) || mine > (partitions+len(rs)-1)/len(rs) {
				return false
			}
			held += mine
		}
		return held == partitions && copies == partitions
	})
}

// Two retrievers share four partitions: each keeps only its partitions'
// users, and every user's context and search answer through either of
// them, and through an ingest, as a retriever with the whole read model
// answers.
func TestReadPartitionsAnswerAsWhole(t *testing.T) {
	const partitions, users = 4, 12
	url := busWithFastLeases(t)
	ingest := readWorker(t, url, "ingest", RoleIngest, partitions)
	whole := readWorker(t, url, "whole", RoleRetriever, 1)
	r1 := readWorker(t, url, "r1", RoleRetriever, partitions)
	r2 := readWorker(t, url, "r2", RoleRetriever, partitions)
	allServing(t, partitions, r1, r2)
	readUsers(t, ingest, users)
	waitSettled(t, whole)

	for _, r := range []*App{r1, r2} {
		r.reads.mu.Lock()
		var held []int
		for p, part := range r.reads.parts {
			held = append(held, p)
			rows, err := part.store.AllUsers(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, sc := range rows {
				if got := stream.PartitionOf(sc.Namespace, sc.User, partitions); got != p {
					t.Errorf("%s: copy of partition %d holds %s, of partition %d", r.Config.Instance, p, sc.User, got)
				}
			}
		}
		r.reads.mu.Unlock()
		if len(held) != partitions/2 {
			t.Errorf("%s holds partitions %v, want %d of them", r.Config.Instance, held, partitions/2)
		}
		if r.Store() != nil {
			t.Errorf("%s keeps a whole read model", r.Config.Instance)
		}
	}

	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		wantCtx, wantSearch := answers(t, whole, user)
		if !bytes.Contains([]byte(wantCtx), []byte("Hangzhou")) {
			t.Fatalf("the whole read model's context of %s lacks its memory: %s", user, wantCtx)
		}
		for _, front := range []*App{ingest, r1, r2} {
			gotCtx, gotSearch := answers(t, front, user)
			if gotCtx != wantCtx {
				t.Errorf("context of %s through %s:\n%s\nwant (whole read model):\n%s", user, front.Config.Instance, gotCtx, wantCtx)
			}
			if gotSearch != wantSearch {
				t.Errorf("search of %s through %s:\n%s\nwant (whole read model):\n%s", user, front.Config.Instance, gotSearch, wantSearch)
			}
		}
	}

	for p := range partitions {
		r := do(t, "GET", fmt.Sprintf("http://%s/readyz?partition=%d", ingest.HTTPAddr(), p), "", nil, nil)
		if by, _ := r.Body["served_by"].(string); r.Status != 200 || by != "r1" && by != "r2" {
			t.Errorf("readyz of partition %d: %d %s", p, r.Status, r.Raw)
		}
	}
	if r := do(t, "GET", fmt.Sprintf("http://%s/readyz?partition=%d", ingest.HTTPAddr(), partitions), "", nil, nil); r.Status != 400 {
		t.Errorf("readyz of partition %d of %d: %d %s, want 400", partitions, partitions, r.Status, r.Raw)
	}
}

// queryLoad asks users' context through front until stop is closed, and
// keeps what came back: each answer is the whole read model's (want), or
// says it is degraded, or is refused as unavailable; never another one.
type queryLoad struct {
	mu       sync.Mutex
	asked    int
	wrong    []string
	degraded int
	refused  int
	// lastBad is when the last answer that was not want came back.
	lastBad time.Time
	// since, once set, is when the fault began; right is, per user, when
	// the first right answer to a request sent after it came back.
	since time.Time
	right map[string]time.Time
}

// fault marks now as when the fault began.
func (l *queryLoad) fault() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.since, l.right = time.Now(), map[string]time.Time{}
	return l.since
}

// answeredAgain is how long after the fault the last of users got its
// first right answer; false while one has not.
func (l *queryLoad) answeredAgain(users []string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var worst time.Duration
	for _, u := range users {
		at, ok := l.right[u]
		if !ok {
			return 0, false
		}
		worst = max(worst, at.Sub(l.since))
	}
	return worst, true
}

func (l *queryLoad) run(t *testing.T, front *App, users []string, want map[string]string, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		user := users[i%len(users)]
		sent := time.Now()
		body, _ := json.Marshal(map[string]any{"user": user, "query": "where do I live and what do I drink?", "budget_tokens": 2000})
		resp, err := http.Post("http://"+front.HTTPAddr()+"/v1/context", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Errorf("context of %s: %v", user, err)
			return
		}
		raw, _ := io.ReadAll(resp.Body)
		quiet.Close(resp.Body)
		got := rowNumbers.ReplaceAllString(string(raw), "#")
		l.mu.Lock()
		l.asked++
		switch {
		case resp.StatusCode == 200 && got == want[user]:
			if l.right != nil && !sent.Before(l.since) {
				if _, ok := l.right[user]; !ok {
					l.right[user] = time.Now()
				}
			}
		case resp.StatusCode == 200 && strings.Contains(got, `"degraded":["partition `):
			l.degraded++
			l.lastBad = time.Now()
		case resp.StatusCode == 503:
			l.refused++
			l.lastBad = time.Now()
		default:
			l.wrong = append(l.wrong, fmt.Sprintf("%s: %d %s", user, resp.StatusCode, raw))
			l.lastBad = time.Now()
		}
		l.mu.Unlock()
	}
}

// A retriever dies under query load: its users are answered again, by
// the other, within the lease TTL and a rebuild, and meanwhile every
// answer is right, or says it is degraded, or is refused: none is
// silently empty or wrong.
func TestReadPartitionFailover(t *testing.T) {
	const partitions, users = 4, 12
	url := busWithFastLeases(t)
	ingest := readWorker(t, url, "ingest", RoleIngest, partitions)
	whole := readWorker(t, url, "whole", RoleRetriever, 1)
	r1 := readWorker(t, url, "r1", RoleRetriever, partitions)
	r2 := readWorker(t, url, "r2", RoleRetriever, partitions)
	allServing(t, partitions, r1, r2)
	readUsers(t, ingest, users)
	waitSettled(t, whole)

	var names []string
	want := map[string]string{}
	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		names = append(names, user)
		want[user], _ = answers(t, whole, user)
	}
	l := &queryLoad{}
	stop := make(chan struct{})
	var wg conc.WaitGroup
	for range 2 {
		wg.Go(func() { l.run(t, ingest, names, want, stop) })
	}
	wait.Until(t, "answers before the kill", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.asked > 50 })
	var orphans []string // the users whose partitions r2 held
	r2.reads.mu.Lock()
	for _, user := range names {
		if part := r2.reads.parts[stream.PartitionOf("default", user, partitions)]; part != nil && part.held.Load() {
			orphans = append(orphans, user)
		}
	}
	r2.reads.mu.Unlock()
	if len(orphans) == 0 {
		t.Fatal("r2 holds no user's partition")
	}
	l.fault()
	crash(r2)
	allServing(t, partitions, r1)
	var back time.Duration
	wait.Until(t, "r2's users answered right again", func() bool {
		var ok bool
		back, ok = l.answeredAgain(orphans)
		return ok
	})
	close(stop)
	wg.Wait()
	t.Logf("%d answers: %d degraded, %d refused; r2's %d users answered right again %v after the kill (lease TTL %v)",
		l.asked, l.degraded, l.refused, len(orphans), back.Round(time.Millisecond), r1.leaseTTL)
	for _, w := range l.wrong {
		t.Errorf("wrong answer: %s", w)
	}
	if back > 15*time.Second {
		t.Errorf("answered again %v after the kill, want within 15 s", back)
	}
}

// A retriever joins: the others hand it partitions, and each keeps
// answering until the newcomer's copy serves, so no answer in between is
// degraded, refused or wrong.
func TestReadPartitionHandover(t *testing.T) {
	const partitions, users = 4, 12
	url := busWithFastLeases(t)
	ingest := readWorker(t, url, "ingest", RoleIngest, partitions)
	whole := readWorker(t, url, "whole", RoleRetriever, 1)
	r1 := readWorker(t, url, "r1", RoleRetriever, partitions)
	allServing(t, partitions, r1)
	readUsers(t, ingest, users)
	waitSettled(t, whole)
	var names []string
	want := map[string]string{}
	for u := range users {
		user := fmt.Sprintf("u%02d", u)
		names = append(names, user)
		want[user], _ = answers(t, whole, user)
	}
	l := &queryLoad{}
	stop := make(chan struct{})
	var wg conc.WaitGroup
	wg.Go(func() { l.run(t, ingest, names, want, stop) })
	r2 := readWorker(t, url, "r2", RoleRetriever, partitions)
	r3 := readWorker(t, url, "r3", RoleRetriever, partitions)
	wait.Until(t, "the partitions shared and r1's copies of the others dropped", func() bool {
		held := map[string]int{}
		for _, r := range []*App{r1, r2, r3} {
			if r.Readiness(t.Context()) != nil {
				return false
			}
			r.reads.mu.Lock()
			for _, part := range r.reads.parts {
				if !part.held.Load() {
					r.reads.mu.Unlock()
					return false
				}
				held[r.Config.Instance]++
			}
			r.reads.mu.Unlock()
		}
		// A fair share is the partitions over the retrievers, rounded up.
		return held["r1"]+held["r2"]+held["r3"] == partitions && held["r1"] <= 2 && held["r2"] <= 2 && held["r3"] <= 2
	})
	close(stop)
	wg.Wait()
	t.Logf("%d answers during the handover: %d degraded, %d refused, %d wrong", l.asked, l.degraded, l.refused, len(l.wrong))
	for _, w := range l.wrong {
		t.Errorf("wrong answer: %s", w)
	}
	if l.degraded+l.refused > 0 {
		t.Errorf("%d answers degraded and %d refused while the partitions changed hands, want none", l.degraded, l.refused)
	}
	// What r1 gave up leaves its disk.
	wait.Until(t, "r1's copies of the partitions it gave up deleted", func() bool {
		r1.reads.mu.Lock()
		defer r1.reads.mu.Unlock()
		for p := range partitions {
			_, err := os.Stat(r1.Config.ReadPartitionPath(p, partitions))
			if kept := r1.reads.parts[p] != nil; kept != (err == nil) {
				return false
			}
		}
		return true
	})
}

// engram rebuild --partition: a copy of one partition rebuilt from the
// stream, passing over the other partitions' events as the projector
// does, equals the live copy, table by table.
func TestReadPartitionRebuildEqualsLive(t *testing.T) {
	const partitions, users = 2, 12
	bus := busWithFastLeases(t)
	// The operator's credential: forget deletes from MEMORY.
	ingest := readWorker(t, bus, "ingest", RoleIngest, partitions, func(c *config.Config) {
		c.NATS.OperatorNKey = filepath.Join(bus.authDir, stream.RoleOperator+".nk")
	})
	r1 := readWorker(t, bus, "r1", RoleRetriever, partitions)
	allServing(t, partitions, r1)
	readUsers(t, ingest, users)
	// An erasure too: the live copy of the user's partition applies it,
	// and the rebuild finds the user's events gone from the stream.
	if r := do(t, "DELETE", "http://"+ingest.HTTPAddr()+"/v1/users/u03", "", nil, nil); r.Status != 200 {
		t.Fatalf("forget u03: %d %s", r.Status, r.Raw)
	}
	waitSettled(t, ingest)
	for p := range partitions {
		rep, err := Rebuild(t.Context(), r1.Config, RebuildOptions{Partition: &p}, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)))
		if err != nil {
			t.Fatalf("rebuild partition %d: %v", p, err)
		}
		if !rep.HadLive || len(rep.Diff) > 0 || rep.Built["turns"] == "" || strings.HasPrefix(rep.Built["turns"], "0:") {
			t.Errorf("partition %d: live %v, differs in %v; built %v", p, rep.HadLive, rep.Diff, rep.Built)
		}
		t.Logf("partition %d rebuilt to seq %d: %d events read in %v", p, rep.Target, rep.Read, rep.Took)
	}
}

// A partition's copy merges its full-text indexes while idle, as the
// whole read model does: each segment costs every word a query looks up
// a seek, and every write transaction adds one.
func TestReadPartitionCopyCompacts(t *testing.T) {
	t.Parallel()
	const partitions = 2
	bus := busWithFastLeases(t)
	cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
	bus.use(&cfg)
	cfg.Instance, cfg.Partitions = "r1", partitions
	r := New(cfg, RoleRetriever, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)).Named("r1"))
	r.compaction = sqlite.Compaction{Every: 50 * time.Millisecond, Segments: 1, Pages: 64, Share: 1}
	if err := r.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopApp(t, r) })
	ingest := readWorker(t, bus, "ingest", RoleIngest, partitions)
	allServing(t, partitions, r)
	// A batch at a time, each applied in its own transaction.
	for i := range 6 {
		mustAccept(t, postEvent(t, ingest, turnEvent(fmt.Sprintf("c-%d", i), fmt.Sprintf("u%d", i%3), "s1", i, "user",
			fmt.Sprintf("we shipped release %d of the billing service", i))))
		waitSettled(t, r)
	}
	wait.For(t, "every copy's indexes in one segment", func() error {
		r.reads.mu.Lock()
		defer r.reads.mu.Unlock()
		for p, part := range r.reads.parts {
			segs, err := part.store.TextSegments(t.Context())
			if err != nil {
				return err
			}
			for table, n := range segs {
				if n > 1 {
					return fmt.Errorf("partition %d: %s has %d segments", p, table, n)
				}
			}
		}
		return nil
	})
}
