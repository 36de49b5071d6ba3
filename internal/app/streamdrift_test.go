package app

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

// startWatched starts an App that looks at its streams every 10 ms and
// judges a moved first sequence after grace, its errors kept in logs as
// well as the test's log.
func startWatched(t *testing.T, cfg config.Config, roles Roles, grace time.Duration) (*App, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.ErrorLevel)
	log := zap.New(zapcore.NewTee(zaptest.NewLogger(t).Core(), core))
	a := New(cfg, roles, log)
	a.originEvery, a.truncationGrace = 10*time.Millisecond, grace
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	return a, logs
}

// Graces of the drift tests: a purge is judged at once; engram's own
// erasures get seconds, as they get minutes in production, to have
// their receipts applied (a busy machine deletes slowly).
const (
	reportGrace  = 10 * time.Millisecond
	erasureGrace = 3 * time.Second
)

// probe is a probe's status and reason.
func probe(t *testing.T, a *App, path string) (int, string) {
	t.Helper()
	r := do(t, "GET", "http://"+a.HTTPAddr()+path, "", nil, nil)
	reason, _ := r.Body["reason"].(string)
	return r.Status, reason
}

// driftMetric is engram_stream_drift{kind} as /metrics shows it.
func driftMetric(t *testing.T, a *App, kind string) string {
	t.Helper()
	r := do(t, "GET", "http://"+a.HTTPAddr()+"/metrics", "", nil, nil)
	prefix := `engram_stream_drift{kind="` + kind + `"} `
	for _, line := range strings.Split(r.Raw, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return v
		}
	}
	return "absent"
}

// driftLogged counts the errors logged for drift of kind.
func driftLogged(logs *observer.ObservedLogs, kind string) int {
	n := 0
	for _, e := range logs.All() {
		if e.ContextMap()["drift"] == kind {
			n++
		}
	}
	return n
}

// postTurns posts n turns of ana's and waits until the read model has them.
func postTurns(t *testing.T, a *App, n int, word string) {
	t.Helper()
	evs := make([]any, n)
	for i := range evs {
		evs[i] = turnEvent(fmt.Sprintf("%s-%02d", word, i), "ana", "s-"+word, i, "user", fmt.Sprintf("%s 第 %d 句", word, i))
	}
	r := postBatch(t, a, evs...)
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
}

var ana = memory.Scope{Namespace: "default", User: "ana"}

// Issue 21's defect: an operator's "max_msgs: 1" on MEMORY took 49 of 50
// events without a word, the read model went on serving them, and the
// next start put the setting back but not the events. Now the change is
// reported (an error logged once per kind, /healthz and /readyz 503 with
// the reason, engram_stream_drift), ingest refuses events that the
// stream would drop, the read model keeps its rows, and the next start
// reports it again instead of putting the setting back; the operator
// puts engram's configuration back (engram streams apply) and accepts
// the loss (engram streams accept).
func TestMemoryLimitIsReportedNotPapered(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a, logs := startWatched(t, cfg, RoleAll, reportGrace)
	postTurns(t, a, 50, "alpha")
	// The rules' readings of the turns and their extraction requests
	// too: published after the limit, each would push the loss up and
	// the truncation would be reported again with the larger count.
	waitSettled(t, a)

	js := jsOf(a) // the operator's: the process runs the embedded server
	s, err := js.Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	sc := s.CachedInfo().Config
	sc.MaxMsgs = 1
	if _, err := js.UpdateStream(t.Context(), sc); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the limit reported by /healthz", func() bool {
		code, reason := probe(t, a, "/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(reason, "max_msgs 1")
	})
	// At least the 49 turns the limit dropped: the rules' readings of
	// them went too.
	lost := regexp.MustCompile(`no longer holds (\d+) events`)
	wait.For(t, "the lost events reported by /readyz", func() error {
		code, reason := probe(t, a, "/readyz")
		if m := lost.FindStringSubmatch(reason); code == http.StatusServiceUnavailable && m != nil {
			if n, _ := strconv.Atoi(m[1]); n >= 49 {
				return nil
			}
		}
		return fmt.Errorf("%d %s", code, reason)
	})
	for _, kind := range []string{driftConfig, driftTruncated} {
		if got := driftMetric(t, a, kind); got != "1" {
			t.Errorf("engram_stream_drift{kind=%q} %s, want 1", kind, got)
		}
		if got := driftLogged(logs, kind); got != 1 {
			t.Errorf("drift %s logged %d times, want once", kind, got)
		}
	}
	if got := driftMetric(t, a, driftRecreated); got != "0" {
		t.Errorf("engram_stream_drift{kind=recreated} %s, want 0", got)
	}
	if r := postEvent(t, a, turnEvent("beta-0", "ana", "s-beta", 0, "user", "beta")); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("an event while MEMORY keeps one message: %d %s, want 503 (stored, it would be lost)", r.Status, r.Raw)
	}
	if got := countTurns(t, a, ana); got != 50 {
		t.Fatalf("the read model holds %d turns, want its 50", got)
	}
	if !searchable(t, a, "alpha") {
		t.Fatal("the read model no longer serves what the stream lost")
	}

	// The next start reports it again; it does not put the setting back.
	stopApp(t, a)
	a, _ = startWatched(t, cfg, RoleAll, reportGrace)
	if code, reason := probe(t, a, "/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(reason, "max_msgs 1") {
		t.Fatalf("/healthz after a restart: %d %q, want 503 naming max_msgs", code, reason)
	}
	if s, err = jsOf(a).Stream(t.Context(), stream.MemoryStream); err != nil || s.CachedInfo().Config.MaxMsgs != 1 {
		t.Fatalf("MEMORY after a restart: %v, want max_msgs left at 1 for the operator", err)
	}
	if got := countTurns(t, a, ana); got != 50 {
		t.Fatalf("the read model holds %d turns after a restart, want 50", got)
	}

	// The operator decides: engram's configuration back, the loss accepted.
	stopApp(t, a)
	log := zaptest.NewLogger(t)
	if _, err := ApplyStreams(t.Context(), cfg, log); err != nil {
		t.Fatal(err)
	}
	if _, err := AcceptStreams(t.Context(), cfg, log); err != nil {
		t.Fatal(err)
	}
	a, _ = startWatched(t, cfg, RoleAll, reportGrace)
	if code, reason := probe(t, a, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz once decided: %d %q", code, reason)
	}
	postTurns(t, a, 1, "gamma")
	if got := countTurns(t, a, ana); got != 51 {
		t.Fatalf("the read model holds %d turns, want its 50 and the new one", got)
	}
	if code, _ := probe(t, a, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz after the operator decided: %d", code)
	}
}

// A purge is reported as soon as it is judged, and the read model keeps
// every row; an operator's accept ends the report, and the rows stay.
func TestPurgedMemoryIsReported(t *testing.T) {
	t.Parallel()
	a, logs := startWatched(t, testConfig(t, t.TempDir()), RoleIngest|RoleRetriever, reportGrace)
	postTurns(t, a, 5, "alpha")
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(t.Context()); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the purge reported", func() bool {
		code, reason := probe(t, a, "/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(reason, "no longer holds 5 events")
	})
	if got := driftMetric(t, a, driftTruncated); got != "1" {
		t.Fatalf("engram_stream_drift{kind=truncated} %s, want 1", got)
	}
	if got := driftLogged(logs, driftTruncated); got != 1 {
		t.Fatalf("logged %d times, want once", got)
	}
	if got := countTurns(t, a, ana); got != 5 {
		t.Fatalf("the read model holds %d turns, want its 5", got)
	}
	if _, err := stream.AcceptMemory(t.Context(), jsOf(a)); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the report ended", func() bool { code, _ := probe(t, a, "/healthz"); return code == http.StatusOK })
	if got := driftMetric(t, a, driftTruncated); got != "0" {
		t.Fatalf("engram_stream_drift{kind=truncated} %s after the accept, want 0", got)
	}
	if got := countTurns(t, a, ana); got != 5 {
		t.Fatalf("the read model holds %d turns after the accept, want 5", got)
	}
}

// engram's own erasure is not drift: forgetting the user whose events
// open the stream moves its first sequence, and the read model drops
// their rows with the receipt.
func TestForgetIsNotDrift(t *testing.T) {
	t.Parallel()
	a, logs := startWatched(t, testConfig(t, t.TempDir()), RoleAll, erasureGrace)
	postTurns(t, a, 5, "alpha")
	r := postEvent(t, a, turnEvent("bo-0", "bo", "s-bo", 0, "user", "bo's turn"))
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
	if _, err := a.Forget(t.Context(), ana, "test"); err != nil {
		t.Fatal(err)
	}
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.FirstSeq <= 5 {
		t.Fatalf("MEMORY's first sequence %d after forgetting the user of 1–5, want past them", info.State.FirstSeq)
	}
	// Judged after the grace, once the read model has what the stream holds.
	wait.For(t, "the first sequence judged", func() error { return wait.Equal(a.drift.judgedFirst(), info.State.FirstSeq) })
	if code, reason := probe(t, a, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz after a forget: %d %q", code, reason)
	}
	if got := driftLogged(logs, driftTruncated); got != 0 {
		t.Fatalf("the forget was reported as drift %d times", got)
	}
}

// Retention's own erasure is not drift either: the raw turns that open
// the stream age out, its first sequence moves, and the receipt that
// follows the deletes drops the read model's rows.
func TestRetentionIsNotDrift(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.Retention.RawTurns = 2 * time.Second
	a, logs := startWatched(t, cfg, RoleAll, erasureGrace)
	postTurns(t, a, 3, "alpha")
	wait.For(t, "ana's turns to age out", func() error { return wait.Equal(countTurns(t, a, ana), 0) })
	info, err := stream.MemoryInfo(t.Context(), jsOf(a))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.FirstSeq <= 3 {
		t.Fatalf("MEMORY's first sequence %d after the turns 1–3 aged out, want past them", info.State.FirstSeq)
	}
	wait.Until(t, "the first sequence judged", func() bool { return a.drift.judgedFirst() >= info.State.FirstSeq })
	if code, reason := probe(t, a, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz after retention: %d %q", code, reason)
	}
	if got := driftLogged(logs, driftTruncated); got != 0 {
		t.Fatalf("retention was reported as drift %d times", got)
	}
}
