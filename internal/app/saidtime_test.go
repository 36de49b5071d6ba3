package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// When the facts of these tests were said: the first on one day, the
// update the next; between is when only the first was true.
var (
	saidFirst  = time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	saidUpdate = time.Date(2025, 11, 2, 9, 0, 0, 0, time.UTC)
	between    = time.Date(2025, 11, 1, 21, 0, 0, 0, time.UTC)
)

// story is a fact said and then changed, one user's.
type story struct {
	user          string
	first, update string // what the user said, in that order
	// The memories: subject and predicate of the changed fact; oldWord
	// is in the first version and newWord only in the update.
	subject, predicate, oldWord, newWord string
}

// stories are the changes a person reads at once as updates, in both
// languages: a move, a changed habit, a service migrated.
var stories = []story{
	{"ana", "I live in Lisbon.", "I moved to Porto last week.", "user", "location", "Lisbon", "Porto"},
	{"lilei", "我住在上海。", "我搬到北京了。", "user", "location", "上海", "北京"},
	{"tom", "I really like coffee.", "I switched to tea now.", "user", "likes", "coffee", "tea"},
	{"xiaomei", "我平时喜欢喝咖啡。", "我现在改喝茶了。", "user", "likes", "咖啡", "茶"},
	{"ops", "We use Jenkins for CI.", "Our CI has moved to GitHub Actions, the old Jenkins is retired.", "jenkins", "uses", "uses Jenkins", "no longer"},
	{"yunwei", "我们用 Jenkins 做 CI。", "CI 已经迁移到 GitHub Actions 了，旧的 Jenkins 已经下线。", "jenkins", "uses", "使用 Jenkins", "不再"},
}

// said is a turn of user's session, said at at.
func said(user, session, content string, at time.Time) map[string]any {
	ev := turnEvent(user+"-"+session, user, session, 0, "user", content)
	ev["time"] = at.Format(time.RFC3339Nano)
	return ev
}

// memoryWithHistory is GET /v1/memories/{id}.
type memoryWithHistory struct {
	Memory  memory.Memory
	History []memory.Change
}

func getMemory(t *testing.T, a *App, user, id string) memoryWithHistory {
	t.Helper()
	r := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/memories/"+url.PathEscape(id)+"?namespace=default&user="+url.QueryEscape(user), "", nil, nil)
	if r.Status != 200 {
		t.Fatalf("get memory %s: %d %s", id, r.Status, r.Raw)
	}
	var out memoryWithHistory
	if err := json.Unmarshal([]byte(r.Raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// check reads what the story left: the update current and alone, the
// first version in its history (each old version's successors lead to
// the current one), and as of the time between them, the first version.
// It reports what it found wrong.
func (s story) check(t *testing.T, a *App) {
	t.Helper()
	isNew := func(m memory.Memory) bool { return strings.Contains(m.Content, s.newWord) }
	isOld := func(m memory.Memory) bool { return !isNew(m) && strings.Contains(m.Content, s.oldWord) }
	all := find(listMemories(t, a, s.user, "&status=all"), s.subject, s.predicate)
	byID := map[string]memory.Memory{}
	var current []memory.Memory
	var old []memory.Memory
	for _, m := range all {
		byID[m.ID] = m
		switch {
		case m.Status == memory.StatusActive && isNew(m):
			current = append(current, m)
		case m.Status == memory.StatusActive && isOld(m):
			t.Errorf("%s: the first version is still current: %q", s.user, m.Content)
		case isOld(m):
			old = append(old, m)
		}
	}
	if len(current) != 1 {
		t.Fatalf("%s: %d current versions saying %q, want 1; all: %s", s.user, len(current), s.newWord, contents(all))
	}
	if len(old) == 0 {
		t.Fatalf("%s: the first version (%q) is not in the history; all: %s", s.user, s.oldWord, contents(all))
	}
	for _, m := range old {
		next, seen := m, map[string]bool{}
		for next.Status != memory.StatusActive && next.SupersededBy != "" && !seen[next.ID] {
			seen[next.ID] = true
			next = byID[next.SupersededBy]
		}
		if next.ID != current[0].ID {
			t.Errorf("%s: %q (%s) leads to %q, not to the current %q", s.user, m.Content, m.Status, next.Content, current[0].Content)
		}
	}
	var then []string
	for _, m := range find(listMemories(t, a, s.user, "&as_of="+url.QueryEscape(between.Format(time.RFC3339))), s.subject, s.predicate) {
		then = append(then, m.Content)
		if isNew(m) {
			t.Errorf("%s: as of %s the update %q was current already", s.user, between, m.Content)
		}
	}
	if len(then) == 0 {
		t.Errorf("%s: as of %s nothing was current, want %q", s.user, between, s.oldWord)
	}
	// The history says when each change was said, and when engram
	// learned it.
	h := getMemory(t, a, s.user, old[0].ID)
	if !h.Memory.SaidAt.Equal(saidFirst) || h.Memory.LearnedAt.IsZero() {
		t.Errorf("%s: the first version said %v, learned %v; want said %v", s.user, h.Memory.SaidAt, h.Memory.LearnedAt, saidFirst)
	}
	superseded := false
	for _, c := range h.History {
		if c.Change == "superseded" && c.SaidAt.Equal(saidUpdate) && !c.Time.IsZero() {
			superseded = true
		}
	}
	if !superseded {
		t.Errorf("%s: the first version's history %+v has no superseded said at %v", s.user, h.History, saidUpdate)
	}
}

func contents(mems []memory.Memory) string {
	var out []string
	for _, m := range mems {
		out = append(out, fmt.Sprintf("%q %s", m.Content, m.Status))
	}
	return strings.Join(out, ", ")
}

// The case, without an LLM: a session left open says the first
// fact; another session says the update and ends; then the first ends.
// The update, said last, is current and the first is in its history,
// for a move, a changed habit and a migrated service, in both languages;
// a rebuild reaches the same read model.
func TestNewestSaidFactIsCurrentAfterAnOpenSession(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	var first, updates, ends []any
	for _, s := range stories {
		first = append(first, said(s.user, "a", s.first, saidFirst))
		updates = append(updates, said(s.user, "b", s.update, saidUpdate), endEvent(s.user+"-b-end", s.user, "b", 1))
		ends = append(ends, endEvent(s.user+"-a-end", s.user, "a", 1))
	}
	mustAccept(t, postBatch(t, a, first...))
	mustAccept(t, postBatch(t, a, updates...))
	waitSettled(t, a)
	mustAccept(t, postBatch(t, a, ends...))
	seq := waitSettled(t, a)
	for _, s := range stories {
		t.Run(s.user, func(t *testing.T) { s.check(t, a) })
	}

	stopApp(t, a)
	rebuilt, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil || len(rebuilt.Diff) != 0 || rebuilt.Target != seq {
		t.Fatalf("rebuild: diff %v, target %d (want %d), %v", rebuilt.Diff, rebuilt.Target, seq, err)
	}
}

// llmFacts answers an extraction prompt as a model would for the two
// location stories, naming the turn each fact came from; any other
// prompt gets no facts.
func llmFacts(req llmtest.ChatRequest) string {
	p := promptTurns(req)
	fact := func(content string, updates bool) string {
		return fmt.Sprintf(`{"facts":[{"subject":"user","predicate":"location","content":%q,"kind":"identity","category":"identity","importance":0.8,"confidence":0.95,"updates":%v,"turn":0}]}`, content, updates)
	}
	switch {
	case strings.Contains(p, "Lisbon"):
		return fact("Lives in Lisbon", false)
	case strings.Contains(p, "Porto"):
		return fact("Moved to Porto", true)
	case strings.Contains(p, "上海"):
		return fact("住在上海", false)
	case strings.Contains(p, "北京"):
		return fact("搬到了北京", true)
	}
	return `{"facts":[]}`
}

// promptTurns is the turns an extraction prompt asks about: the facts are
// in them, not among the known facts the prompt lists before them (the
// rules' readings of both turns may be there).
func promptTurns(req llmtest.ChatRequest) string {
	p := req.LastUser()
	if i := strings.Index(p, "turns:\n"); i >= 0 {
		return p[i:]
	}
	return p
}

// The LLM fails the first fact's extraction until the update's has been
// extracted: the retry publishes the older fact after the newer one, and
// the newer stays current.
func TestNewestSaidFactIsCurrentAfterAnLLMRetry(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	var updated atomic.Int32
	srv.Always(func(w http.ResponseWriter, c *llmtest.Call) {
		p := promptTurns(*c.Chat)
		if strings.Contains(p, "Porto") || strings.Contains(p, "北京") {
			defer updated.Add(1)
		} else if updated.Load() < 2 {
			llmtest.Status(http.StatusServiceUnavailable, "")(w, c)
			return
		}
		llmtest.OK(llmFacts(*c.Chat))(w, c)
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	cfg.Extract.MaxAttempts = 100
	a := New(cfg, RoleAll, zaptest.NewLogger(t))
	a.extractBackoff = func(int) time.Duration { return 20 * time.Millisecond }
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopApp(t, a) })

	for _, s := range stories[:2] {
		mustAccept(t, postBatch(t, a, said(s.user, "a", s.first, saidFirst), endEvent(s.user+"-a-end", s.user, "a", 1)))
	}
	srv.WaitCalls(2) // both first facts failed once
	for _, s := range stories[:2] {
		mustAccept(t, postBatch(t, a, said(s.user, "b", s.update, saidUpdate), endEvent(s.user+"-b-end", s.user, "b", 1)))
	}
	waitSettled(t, a)
	for _, s := range stories[:2] {
		t.Run(s.user, func(t *testing.T) { s.check(t, a) })
	}
}

// The first fact's extraction runs out of tries after the update was
// extracted: the rules cover it, then the dead letter is redriven and
// the model extracts it again. Neither displaces the update.
func TestNewestSaidFactIsCurrentAfterARedrive(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	var down atomic.Bool
	srv.Always(func(w http.ResponseWriter, c *llmtest.Call) {
		if p := promptTurns(*c.Chat); down.Load() && (strings.Contains(p, "Lisbon") || strings.Contains(p, "上海")) {
			llmtest.Status(http.StatusInternalServerError, "")(w, c)
			return
		}
		llmtest.OK(llmFacts(*c.Chat))(w, c)
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	cfg.Extract.MaxAttempts = 2
	a := New(cfg, RoleAll, zaptest.NewLogger(t))
	a.extractBackoff = func(int) time.Duration { return 20 * time.Millisecond }
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopApp(t, a) })

	down.Store(true)
	for _, s := range stories[:2] {
		mustAccept(t, postBatch(t, a, said(s.user, "a", s.first, saidFirst),
			said(s.user, "b", s.update, saidUpdate), endEvent(s.user+"-b-end", s.user, "b", 1)))
	}
	waitSettled(t, a)
	for _, s := range stories[:2] {
		mustAccept(t, postEvent(t, a, endEvent(s.user+"-a-end", s.user, "a", 1)))
	}
	waitSettled(t, a)
	for _, s := range stories[:2] {
		t.Run("rules/"+s.user, func(t *testing.T) { s.check(t, a) })
	}

	down.Store(false)
	dead, err := stream.ListDeadLetters(t.Context(), jsOf(a), stream.DLQFilter{})
	if err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	redriven := 0
	for _, d := range dead {
		if d.Consumer != "extractor" {
			continue
		}
		if _, err := stream.Redrive(t.Context(), jsOf(a), d.Seq); err != nil {
			t.Fatal(err)
		}
		redriven++
	}
	if redriven != 2 {
		t.Fatalf("%d of the extractor's dead letters redriven, want 2: %+v", redriven, dead)
	}
	waitSettled(t, a)
	if srv.Calls() < calls+2 {
		t.Fatalf("the model was asked %d times after the redrive, want 2", srv.Calls()-calls)
	}
	for _, s := range stories[:2] {
		t.Run("redriven/"+s.user, func(t *testing.T) {
			s.check(t, a)
			n := 0
			for _, m := range find(listMemories(t, a, s.user, "&status=superseded"), s.subject, s.predicate) {
				if strings.Contains(m.Content, s.oldWord) {
					n++
				}
			}
			if n != 2 {
				t.Fatalf("%d superseded versions of the first fact, want the rules' and the model's", n)
			}
		})
	}
}

// Re-extraction of the first fact's turns alone, after both were
// extracted in order, publishes it last; it stays in the history, live
// and in a rebuild.
func TestNewestSaidFactIsCurrentAfterReextract(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	for _, s := range stories {
		mustAccept(t, postBatch(t, a, said(s.user, "a", s.first, saidFirst), endEvent(s.user+"-a-end", s.user, "a", 1)))
	}
	waitSettled(t, a)
	for _, s := range stories {
		mustAccept(t, postBatch(t, a, said(s.user, "b", s.update, saidUpdate), endEvent(s.user+"-b-end", s.user, "b", 1)))
	}
	waitSettled(t, a)
	rep, err := Reextract(t.Context(), jsOf(a), cfg.ReadModelPath(), ReextractOptions{
		Since: saidFirst.Add(-time.Hour), Until: saidFirst.Add(time.Hour)})
	if err != nil || rep.Turns != len(stories) {
		t.Fatalf("reextract: %+v, %v", rep, err)
	}
	seq := waitSettled(t, a)
	for _, s := range stories {
		t.Run(s.user, func(t *testing.T) { s.check(t, a) })
	}
	stopApp(t, a)
	rebuilt, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil || len(rebuilt.Diff) != 0 || rebuilt.Target != seq {
		t.Fatalf("rebuild: diff %v, target %d (want %d), %v", rebuilt.Diff, rebuilt.Target, seq, err)
	}
}

// The workers apart, two extractors on two partitions (ana's and
// lilei's): one dies with the first facts' sessions open; the other
// takes its partition over, extracts the updates' sessions, then the
// first ones when they end.
func TestNewestSaidFactIsCurrentAcrossAnExtractorHandover(t *testing.T) {
	t.Parallel()
	const partitions = 2
	bus := busWithFastLeases(t)
	front := partitionWorker(t, bus, "front", RoleIngest|RoleRetriever, partitions, "", "")
	x1 := partitionWorker(t, bus, "x1", RoleExtractor, partitions, "", "")
	partitionWorker(t, bus, "x2", RoleExtractor, partitions, "", "")
	wait.Until(t, "a partition each", func() bool {
		held := partitionsHeld(t, bus, "extractor")
		return held["x1"] == 1 && held["x2"] == 1
	})

	var evs []any
	for _, s := range stories[:2] {
		evs = append(evs, said(s.user, "a", s.first, saidFirst))
	}
	mustAccept(t, postBatch(t, front, evs...))
	wait.Until(t, "the batchers to take the first facts", func() bool {
		for p := range partitions {
			c, err := jsOf(front).Consumer(t.Context(), stream.MemoryStream, stream.PartitionDurable("batcher", p, partitions))
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
	crash(x1)
	wait.For(t, "x2 to take x1's partition", func() error { return wait.Equal(partitionsHeld(t, bus, "extractor")["x2"], partitions) })

	evs = nil
	for _, s := range stories[:2] {
		evs = append(evs, said(s.user, "b", s.update, saidUpdate), endEvent(s.user+"-b-end", s.user, "b", 1))
	}
	mustAccept(t, postBatch(t, front, evs...))
	wait.Until(t, "the updates extracted", func() bool {
		for _, s := range stories[:2] {
			if len(find(listMemories(t, front, s.user, ""), s.subject, s.predicate)) == 0 {
				return false
			}
		}
		return true
	})
	evs = nil
	for _, s := range stories[:2] {
		evs = append(evs, endEvent(s.user+"-a-end", s.user, "a", 1))
	}
	mustAccept(t, postBatch(t, front, evs...))
	wait.For(t, "every turn extracted", func() error {
		return errors.Join(wait.Equal(countUnextracted(t, front), 0),
			wait.Equal(countStoryTurns(t, front), 4))
	})
	for _, s := range stories[:2] {
		t.Run(s.user, func(t *testing.T) { s.check(t, front) })
	}
}

// countStoryTurns counts the turns of the first two stories' users.
func countStoryTurns(t *testing.T, a *App) int {
	t.Helper()
	n := 0
	for _, s := range stories[:2] {
		n += countTurns(t, a, memory.Scope{Namespace: "default", User: s.user})
	}
	return n
}

// A memory written by hand may say when it was said: said before the
// current value, it goes into the history. A said_at that is no time, or
// is in the future, is refused with the field named.
func TestManualMemorySaidEarlier(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	postMemory(t, a, `{"user":"mia","kind":"identity","category":"identity","subject":"user","predicate":"location","content":"User lives in Porto","importance":0.8}`)
	postMemory(t, a, `{"user":"mia","kind":"identity","category":"identity","subject":"user","predicate":"location","content":"User lived in Lisbon","importance":0.8,"said_at":"2025-11-01T09:00:00Z"}`)
	waitSettled(t, a)
	if active := find(listMemories(t, a, "mia", ""), "user", "location"); len(active) != 1 || active[0].Content != "User lives in Porto" {
		t.Fatalf("active %s, want Porto alone", contents(active))
	}
	if then := find(listMemories(t, a, "mia", "&as_of=2025-11-02T00:00:00Z"), "user", "location"); len(then) != 1 || then[0].Content != "User lived in Lisbon" {
		t.Fatalf("as of 2025-11-02: %s, want Lisbon", contents(then))
	}
	for _, bad := range []string{`"yesterday"`, `"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `"`} {
		r := do(t, "POST", "http://"+a.HTTPAddr()+"/v1/memories", "application/json", []byte(`{"user":"mia","kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0.5,"said_at":`+bad+`}`), nil)
		if r.Status != http.StatusBadRequest || !strings.Contains(r.Raw, "said_at") {
			t.Errorf("said_at %s: %d %s, want 400 naming said_at", bad, r.Status, r.Raw)
		}
	}
}
