package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/sourcegraph/conc"
)

// readTopology is issue 26's: four retrievers over eight partitions of
// the users, behind one ingest; nothing extracts or consolidates, so
// what the read models hold is what the agents sent.
func readTopology(leaseTTL time.Duration) topology {
	return topology{ingests: 1, retrievers: 4, partitions: 8, leaseTTL: leaseTTL}
}

// readEvents are user u's events, the same on every deployment (ids and
// times fixed): a session of turns, and two memories an agent wrote.
func readEvents(w workload, u int) []any {
	user := w.user(u)
	name, city, no := names[u%len(names)], cities[u%len(cities)], dislike[u%len(dislike)]
	var evs []any
	for i, text := range []string{
		fmt.Sprintf("我叫%s，住在%s，每天骑车上班。", name, city),
		fmt.Sprintf("I can't stand %s, and we deploy the billing service on Fridays.", no),
		"我喜欢喝咖啡，但下午三点以后不喝。",
		fmt.Sprintf("Remind me: the %s office moves next month.", city),
	} {
		evs = append(evs, w.turn(u, "r", i, "user", text, nil))
	}
	for i, m := range []struct{ kind, category, predicate, content string }{
		{"fact", "identity", "lives_in", fmt.Sprintf("%s lives in %s", name, city)},
		{"preference", "config", "dislikes", fmt.Sprintf("%s dislikes %s", name, no)},
	} {
		evs = append(evs, w.event(u, fmt.Sprintf("%s-mem%d", user, i), "memory.added", "r", 10+i, map[string]any{
			"memory_id": fmt.Sprintf("%s-m%d", user, i), "kind": m.kind, "category": m.category, "subject": "user",
			"predicate": m.predicate, "content": m.content, "importance": 0.6 + 0.1*float64(i), "confidence": 0.95,
		}))
	}
	return evs
}

// settleReads waits until every consumer of MEMORY has been delivered and
// has acknowledged all there is, and the stream's end has not moved for
// calm: every read model then holds it.
func settleReads(t *testing.T, js jetstream.JetStream, calm time.Duration) uint64 {
	t.Helper()
	var last uint64
	var calmSince time.Time
	wait.UntilWithin(t, 2*time.Minute, "the read models to settle", func() bool {
		busy := func() bool { calmSince = time.Time{}; return false }
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, stream.MemoryStream)
		if err != nil {
			return busy()
		}
		si, err := s.Info(ctx)
		if err != nil {
			return busy()
		}
		lister := s.ListConsumers(ctx)
		for ci := range lister.Info() {
			if ci.NumPending > 0 || ci.NumAckPending > 0 {
				return busy()
			}
		}
		if si.State.LastSeq != last {
			last = si.State.LastSeq
			return busy()
		}
		if calmSince.IsZero() {
			calmSince = time.Now()
		}
		return time.Since(calmSince) > calm
	})
	return last
}

// volatile is what two deployments fed the same events answer
// differently and the issue leaves out ("the same ranking for the same
// data"): scores, which weigh recency against each process's clock; a
// turn's id, the row number of the read model that answers (a partition's
// copy numbers its own rows, docs/scale.md); and token counts, since a
// provenance names that id.
var volatile = regexp.MustCompile(`"score":[-0-9.e+]+|\bt_[0-9]+\b|"tokens":[0-9]+`)

// answer asks front for user's context (or, with search, a search) and
// returns the status and the answer with volatile left out.
func answer(ctx context.Context, front, user string, search bool) (int, string, error) {
	var req *http.Request
	var err error
	if search {
		v := url.Values{"user": {user}, "q": {"咖啡 Friday office"}}
		req, err = http.NewRequestWithContext(ctx, "GET", front+"/v1/search?"+v.Encode(), nil)
	} else {
		body, _ := json.Marshal(map[string]any{"user": user, "query": "我住在哪里？what do I dislike?", "budget_tokens": 3000})
		req, err = http.NewRequestWithContext(ctx, "POST", front+"/v1/context", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer quiet.Close(resp.Body)
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, volatile.ReplaceAllString(string(raw), "#"), err
}

// itemsOf is what a context answer holds: its memories' ids and its
// turns' contents, sorted, or "degraded" when it says it is.
func itemsOf(raw string) string {
	var r struct {
		Blocks   map[string][]struct{ ID, Content string }
		Degraded []string
	}
	if json.Unmarshal([]byte(raw), &r) != nil {
		return "unreadable: " + raw
	}
	for _, d := range r.Degraded {
		if strings.HasPrefix(d, "partition ") {
			return "degraded"
		}
	}
	var items []string
	for block, its := range r.Blocks {
		for _, it := range its {
			key := it.ID
			if block == "turns" {
				key = it.Content
			}
			items = append(items, block+":"+key)
		}
	}
	sort.Strings(items)
	return strings.Join(items, "|")
}

// Issue 26's bars on the three-node cluster: four retrievers share eight
// partitions, each keeping about a quarter of the users' rows; every
// user's context and search through any front answer as the single
// binary's; each partition's readiness and copy can be asked for and
// rebuilt; a retriever killed under query load has its users answered
// again within 15 s with no wrong answer between. The fast version runs
// 40 users with leases of 3 s; ENGRAM_SOAK=1 runs 1,000 users with the
// default 10 s leases and holds the routing overhead to 1 ms.
func TestReadPartitions(t *testing.T) {
	users, leaseTTL := 40, 3*time.Second
	if soak() {
		users, leaseTTL = 1000, 0
	}
	w := newWorkload(users, time.Now())
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	began := time.Now()

	// Nothing is extracted on either side while the test runs: the
	// cluster runs no extractor, and the single binary's rules read no
	// turn at once.
	single := startSingle(t, "ENGRAM_EXTRACT_QUIET_GAP=24h", "ENGRAM_EXTRACT_RULES_AT_ONCE=false")
	cluster := startClusterOf(t, readTopology(leaseTTL))
	t.Logf("deployments up in %v", time.Since(began).Round(time.Millisecond))
	load := func(d *deployment) {
		const batch = 50
		for u := 0; u < users; u += batch {
			var evs []any
			for v := u; v < min(u+batch, users); v++ {
				evs = append(evs, readEvents(w, v)...)
			}
			if err := w.post(ctx, d.ingestURL(u), evs); err != nil {
				t.Fatal(err)
			}
		}
	}
	load(single)
	load(cluster)
	settleReads(t, single.operatorJS(t), 500*time.Millisecond)
	cjs := cluster.operatorJS(t)
	settleReads(t, cjs, 500*time.Millisecond)
	fronts := []string{cluster.ingestURL(0)}
	for _, r := range cluster.procs["retriever"] {
		fronts = append(fronts, "http://"+r.http)
	}
	// The partitions settle: each held by one retriever, whose copy
	// serves, and no retriever keeps a copy it handed over.
	wait.UntilWithin(t, 2*time.Minute, "every partition held and served by one copy", func() bool {
		states, err := stream.PartitionStates(ctx, cjs, stream.RoleRetriever)
		if err != nil || len(states) != cluster.parts {
			return false
		}
		files := 0
		for _, r := range cluster.procs["retriever"] {
			fs, _ := filepath.Glob(filepath.Join(cluster.dir, r.name, "engram-*of8.db"))
			files += len(fs)
		}
		for _, st := range states {
			if !st.Held || st.State != stream.StateServing {
				return false
			}
		}
		return files == cluster.parts
	})
	t.Logf("loaded and settled at %v", time.Since(began).Round(time.Millisecond))

	// Each retriever's copies hold about a quarter of the rows, all of
	// them together.
	whole, err := sqlite.ReadStats(ctx, filepath.Join(single.readModels()[0], "engram.db"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	totalRows := whole.Turns + whole.Memories
	sumRows, sumUsers := 0, 0
	for _, r := range cluster.procs["retriever"] {
		files, _ := filepath.Glob(filepath.Join(cluster.dir, r.name, "engram-*of8.db"))
		rows, us := 0, 0
		for _, f := range files {
			st, err := sqlite.ReadStats(ctx, f, "", "")
			if err != nil {
				t.Fatal(err)
			}
			rows, us = rows+st.Turns+st.Memories, us+st.Users
		}
		share := float64(rows) / float64(totalRows)
		t.Logf("%s: %d copies, %d users, %d of %d rows (%.0f%%)", r.name, len(files), us, rows, totalRows, 100*share)
		if share > 0.35 {
			t.Errorf("%s holds %.0f%% of the rows, want at most 35%%", r.name, 100*share)
		}
		sumRows, sumUsers = sumRows+rows, sumUsers+us
	}
	if sumRows != totalRows || sumUsers != users {
		t.Errorf("the retrievers hold %d rows of %d users together, want %d rows of %d", sumRows, sumUsers, totalRows, users)
	}

	// Every user's answers through a front, as the single binary's: the
	// context through one front per user (a context records which
	// memories it used, which later answers rank by, so each user asks
	// once on each deployment), the search through every front.
	want := map[string]string{}
	singleURL := single.apiURL(0)
	for u := range users {
		user := w.user(u)
		_, wantCtx, err := answer(ctx, singleURL, user, false)
		if err != nil {
			t.Fatal(err)
		}
		_, wantSearch, err := answer(ctx, singleURL, user, true)
		if err != nil {
			t.Fatal(err)
		}
		want[user] = itemsOf(wantCtx)
		front := fronts[u%len(fronts)]
		if code, got, err := answer(ctx, front, user, false); err != nil || code != 200 || got != wantCtx {
			t.Errorf("context of %s through %s: %d %v\n%s\nwant (single binary):\n%s", user, front, code, err, got, wantCtx)
		}
		if !soak() && u%4 != 0 {
			continue // the fast version searches a quarter of the users through every front
		}
		for _, front := range fronts {
			if code, got, err := answer(ctx, front, user, true); err != nil || code != 200 || got != wantSearch {
				t.Errorf("search of %s through %s: %d %v\n%s\nwant (single binary):\n%s", user, front, code, err, got, wantSearch)
			}
		}
	}
	t.Logf("answers compared at %v", time.Since(began).Round(time.Millisecond))
	for _, r := range append(cluster.procs["retriever"], cluster.procs["ingest"]...) {
		t.Logf("%s: resident memory %s", r.name, residentMemory(r.cmd.Process.Pid))
	}

	// Which retriever holds which partition, as an operator sees it.
	opEnv := []string{"ENGRAM_NATS_URL=" + cluster.natsURL, "ENGRAM_NATS_NKEY=" + cluster.operator, "ENGRAM_PARTITIONS=8",
		"ENGRAM_DATA_DIR=" + t.TempDir()}
	out, code := engram(t, opEnv, "stats", "--partitions", "--json")
	var view struct {
		Copies []stream.PartitionState `json:"copies"`
	}
	if err := json.Unmarshal([]byte(out), &view); code != 0 || err != nil {
		t.Fatalf("engram stats --partitions: exit %d, %v:\n%s", code, err, out)
	}
	owner := map[int]string{}
	for _, c := range view.Copies {
		if c.State == stream.StateServing && c.Held {
			owner[c.Partition] = c.Instance
		}
	}
	if len(owner) != 8 {
		t.Errorf("engram stats --partitions shows %d partitions held and served, want 8:\n%s", len(owner), out)
	}

	// The routing overhead: a user's context through a retriever that
	// does not hold the user's partition, and from the one that does,
	// turn and turn about.
	user := w.user(1)
	p := stream.PartitionOf("default", user, 8)
	var direct, routed string
	for _, r := range cluster.procs["retriever"] {
		if r.name == owner[p] {
			direct = "http://" + r.http
		} else if routed == "" {
			routed = "http://" + r.http
		}
	}
	if direct == "" || routed == "" {
		t.Fatalf("no owner of partition %d among the retrievers (%v)", p, owner)
	}
	n := 100
	if soak() {
		n = 1000
	}
	var tDirect, tRouted []time.Duration
	for range n {
		for _, c := range []struct {
			front string
			into  *[]time.Duration
		}{{direct, &tDirect}, {routed, &tRouted}} {
			start := time.Now()
			if code, _, err := answer(ctx, c.front, user, false); err != nil || code != 200 {
				t.Fatalf("context through %s: %d %v", c.front, code, err)
			}
			*c.into = append(*c.into, time.Since(start))
		}
	}
	pd, pr := percentile(tDirect, 95), percentile(tRouted, 95)
	t.Logf("context over %d: p50 the owner %v, through another retriever %v; p95 the owner %v, through another %v (+%v); load average %s",
		n, percentile(tDirect, 50).Round(10*time.Microsecond), percentile(tRouted, 50).Round(10*time.Microsecond),
		pd.Round(10*time.Microsecond), pr.Round(10*time.Microsecond), (pr - pd).Round(10*time.Microsecond), loadAverage())
	if soak() && pr-pd > time.Millisecond {
		t.Errorf("routing adds %v to the p95, want at most 1 ms", pr-pd)
	}

	// A partition's copy rebuilt from the stream equals the live one.
	rebuildParts := []int{p}
	if soak() {
		rebuildParts = []int{0, 1, 2, 3, 4, 5, 6, 7}
	}
	for _, k := range rebuildParts {
		var dir string
		for _, r := range cluster.procs["retriever"] {
			if r.name == owner[k] {
				dir = filepath.Join(cluster.dir, r.name)
			}
		}
		out, code := engram(t, []string{"ENGRAM_DATA_DIR=" + dir, "ENGRAM_NATS_URL=" + cluster.natsURL,
			"ENGRAM_NATS_NKEY=" + cluster.operator, "ENGRAM_PARTITIONS=8"}, "rebuild", "--quiet", "--partition", strconv.Itoa(k))
		if code != 0 || !strings.Contains(out, "OK: rebuilt read model equals the live one") {
			t.Errorf("engram rebuild --partition %d: exit %d:\n%s", k, code, out)
		}
	}
	t.Logf("rebuilt at %v", time.Since(began).Round(time.Millisecond))

	// A retriever killed under query load: its users are answered again,
	// by the others, within 15 s, and nothing between is wrong.
	victim := cluster.procs["retriever"][3]
	var orphans []string
	for u := range users {
		if owner[stream.PartitionOf("default", w.user(u), 8)] == victim.name {
			orphans = append(orphans, w.user(u))
		}
	}
	if len(orphans) == 0 {
		t.Fatalf("%s holds no user's partition", victim.name)
	}
	q := &queries{want: want, right: map[string]time.Time{}}
	stop := make(chan struct{})
	var wg conc.WaitGroup
	for i := range 4 {
		wg.Go(func() { q.run(ctx, t, fronts[i%len(fronts)], orphans, stop) })
	}
	wait.UntilWithin(t, time.Minute, "answers before the kill", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return q.asked > 20 })
	q.mu.Lock()
	q.since = time.Now()
	q.right = map[string]time.Time{}
	q.mu.Unlock()
	victim.kill(t)
	var back time.Duration
	wait.UntilWithin(t, time.Minute, "the killed retriever's users answered right again", func() bool {
		var ok bool
		back, ok = q.answeredAgain(orphans)
		return ok
	})
	close(stop)
	wg.Wait()
	t.Logf("%s killed: its %d users answered right again %v after (lease TTL %v); %d answers meanwhile: %d degraded, "+
		"%d refused; load average %s", victim.name, len(orphans), back.Round(time.Millisecond), cmpOr(leaseTTL, stream.DefaultLeaseTTL),
		q.asked, q.degraded, q.refused, loadAverage())
	for _, w := range q.wrong {
		t.Errorf("wrong answer: %s", w)
	}
	if back > 15*time.Second {
		t.Errorf("answered again %v after the kill, want within 15 s", back)
	}
	t.Logf("done at %v", time.Since(began).Round(time.Millisecond))
}

func cmpOr(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// queries asks users' context through a front while a retriever dies,
// and keeps what came back: each answer holds what the single binary's
// held, or says it is degraded, or is refused (503); never another one.
type queries struct {
	want map[string]string

	mu       sync.Mutex
	asked    int
	degraded int
	refused  int
	wrong    []string
	// since is when the fault began; right is, per user, when the first
	// right answer to a request sent after it came back.
	since time.Time
	right map[string]time.Time
}

func (q *queries) run(ctx context.Context, t *testing.T, front string, users []string, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		user := users[i%len(users)]
		sent := time.Now()
		code, raw, err := answer(ctx, front, user, false)
		if err != nil {
			t.Errorf("context of %s through %s: %v", user, front, err)
			return
		}
		got := itemsOf(raw)
		q.mu.Lock()
		q.asked++
		switch {
		case code == 200 && got == q.want[user]:
			if !q.since.IsZero() && !sent.Before(q.since) {
				if _, ok := q.right[user]; !ok {
					q.right[user] = time.Now()
				}
			}
		case code == 200 && got == "degraded":
			q.degraded++
		case code == 503:
			q.refused++
		default:
			q.wrong = append(q.wrong, fmt.Sprintf("%s through %s: %d %s", user, front, code, raw))
		}
		q.mu.Unlock()
	}
}

// answeredAgain is how long after the fault the last of users got its
// first right answer; false while one has not.
func (q *queries) answeredAgain(users []string) (time.Duration, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var worst time.Duration
	for _, u := range users {
		at, ok := q.right[u]
		if !ok {
			return 0, false
		}
		worst = max(worst, at.Sub(q.since))
	}
	return worst, true
}

// percentile is the pct-th percentile of ds.
func percentile(ds []time.Duration, pct int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)*pct)/100]
}

// residentMemory is process pid's resident set (VmRSS), as Linux says it.
func residentMemory(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// loadAverage is the machine's load average over the last minute, beside
// any timing figure.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}
