package consolidation

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	defaultrules "github.com/engramhq/engram/rules"
	"go.uber.org/zap/zaptest"
)

// fakeStore is an in-memory read model.
type fakeStore struct {
	mu    sync.Mutex
	seq   uint64
	turns map[string][]memory.Turn
	mems  map[memory.Scope][]memory.Memory
	core  map[memory.Scope][]memory.Memory
	pads  map[memory.Scope]memory.Scratchpad
	eps   map[memory.Scope][]memory.Episode
	daily map[memory.Scope][]memory.DailySummary
	swept map[memory.Scope][]string
}

func newFakeStore() *fakeStore {
	return &fakeStore{seq: 1 << 40, turns: map[string][]memory.Turn{}, mems: map[memory.Scope][]memory.Memory{},
		core: map[memory.Scope][]memory.Memory{}, pads: map[memory.Scope]memory.Scratchpad{},
		eps: map[memory.Scope][]memory.Episode{}, daily: map[memory.Scope][]memory.DailySummary{},
		swept: map[memory.Scope][]string{}}
}

func key(s memory.Scope, session string) string { return s.Namespace + "/" + s.User + "/" + session }

func (f *fakeStore) LastSeq(context.Context) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq, nil
}

func (f *fakeStore) Scopes(context.Context) ([]memory.Scope, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []memory.Scope
	for s := range f.mems {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b memory.Scope) int { return strings.Compare(a.User, b.User) })
	return out, nil
}

func (f *fakeStore) SessionTurns(_ context.Context, s memory.Scope, session string) ([]memory.Turn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.turns[key(s, session)]), nil
}

func (f *fakeStore) Unextracted(_ context.Context, before time.Time, limit int) ([]memory.Turn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []memory.Turn
	for _, ts := range f.turns {
		for _, t := range ts {
			if !t.Extracted && t.Time.Before(before) && len(out) < limit {
				out = append(out, t)
			}
		}
	}
	slices.SortFunc(out, func(a, b memory.Turn) int { return a.Time.Compare(b.Time) })
	return out, nil
}

func (f *fakeStore) UnconsolidatedSessions(_ context.Context, s memory.Scope, _ time.Time, _, _ int) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.swept[s]), nil
}

func (f *fakeStore) SessionMemoryIDs(context.Context, memory.Scope, string, int) ([]string, error) {
	return []string{"m_linked"}, nil
}

func (f *fakeStore) ActiveMemories(_ context.Context, s memory.Scope) ([]memory.Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.mems[s]), nil
}

func (f *fakeStore) CoreMemories(_ context.Context, s memory.Scope) ([]memory.Memory, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.core[s]), nil
}

func (f *fakeStore) Scratchpad(_ context.Context, s memory.Scope) (memory.Scratchpad, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pads[s], nil
}

func (f *fakeStore) Episodes(_ context.Context, s memory.Scope, session string, limit int) ([]memory.Episode, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []memory.Episode
	for _, e := range f.eps[s] {
		if session == "" || e.SessionID == session {
			out = append(out, e)
		}
	}
	return out[:min(len(out), limit)], nil
}

func (f *fakeStore) EpisodesEnded(_ context.Context, s memory.Scope, from, to time.Time) ([]memory.Episode, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []memory.Episode
	for _, e := range f.eps[s] {
		if !e.Ended.Before(from) && e.Ended.Before(to) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (f *fakeStore) Identity(context.Context, memory.Scope) (memory.Identity, bool, error) {
	return memory.Identity{}, false, nil
}

// Changes counts the memories created in the span; the SQLite store
// counts the rest from their history.
func (f *fakeStore) Changes(_ context.Context, s memory.Scope, since, until time.Time) (memory.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := memory.Report{Since: since, Until: until}
	for _, m := range f.mems[s] {
		if m.Created.After(since) && !m.Created.After(until) {
			r.Learned++
		}
	}
	return r, nil
}

func (f *fakeStore) DailySummaries(_ context.Context, s memory.Scope, date string) ([]memory.DailySummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []memory.DailySummary
	for _, d := range f.daily[s] {
		if d.Date == date {
			out = append(out, d)
		}
	}
	return out, nil
}

// recorder is an Emitter that keeps what it is given after checking it
// against the event contract, as the stream's publisher would.
type recorder struct {
	mu  sync.Mutex
	out []memory.Outgoing
}

func (r *recorder) emit(_ context.Context, outs ...memory.Outgoing) error {
	for _, o := range outs {
		if _, err := events.NewDerived(Source, o.Type, o.ID, o.Scope.Namespace, o.Scope.User, o.Time, o.Data); err != nil {
			return fmt.Errorf("build %s %s: %w", o.Type, o.ID, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out = append(r.out, outs...)
	return nil
}

func (r *recorder) ofType(typ string) []memory.Outgoing {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []memory.Outgoing
	for _, o := range r.out {
		if o.Type == typ {
			out = append(out, o)
		}
	}
	return out
}

func defaults(t *testing.T) *rules.Set {
	t.Helper()
	set, err := rules.LoadFS(defaultrules.FS, events.Types())
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// ruleSet loads rule files written by the test.
func ruleSet(t *testing.T, files map[string]string) *rules.Set {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set, err := rules.Load(dir, events.Types())
	if err != nil {
		t.Fatal(err)
	}
	return set
}

var ana = memory.Scope{Namespace: "default", User: "ana"}

var t0 = time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)

func newTest(t *testing.T, set *rules.Set) (*Consolidator, *fakeStore, *recorder) {
	t.Helper()
	st, rec := newFakeStore(), &recorder{}
	c := New(rec.emit, st, func() *rules.Set { return set }, zaptest.NewLogger(t))
	return c, st, rec
}

func session(st *fakeStore, scope memory.Scope, id string, texts ...string) {
	for i, s := range texts {
		role := []string{"user", "assistant"}[i%2]
		st.turns[key(scope, id)] = append(st.turns[key(scope, id)], memory.Turn{Scope: scope, SessionID: id, TurnIndex: i,
			Role: role, Content: s, Time: t0.Add(time.Duration(i) * time.Minute)})
	}
}

func ended(scope memory.Scope, session string, n int) memory.Applied {
	return memory.Applied{Envelope: memory.Envelope{Seq: 10, Source: "agent", ID: "end-" + session, Type: events.TypeSessionEnded,
		Scope: scope, Subject: session, Time: t0.Add(time.Hour)},
		Data: &events.SessionEnded{SessionID: session, MessageCount: n, Reason: "done"}}
}

func TestSessionEndBuildsEpisodeAndScratchpad(t *testing.T) {
	t.Parallel()
	c, st, rec := newTest(t, defaults(t))
	session(st, ana, "s1", "Please deploy the billing service to Kubernetes for the Atlas project.",
		"Deployed billing to Kubernetes; all pods are healthy. Next I will add alerts.", "thanks")
	if err := c.Handle(t.Context(), ended(ana, "s1", 3)); err != nil {
		t.Fatal(err)
	}
	eps := rec.ofType(events.TypeEpisodeBuilt)
	if len(eps) != 1 {
		t.Fatalf("episodes = %d, want 1", len(eps))
	}
	ep := eps[0].Data.(*events.Episode)
	if ep.Source != events.SourceSessionEnd || fmt.Sprint(ep.Turns) != "[0 1 2]" || !strings.Contains(ep.Goal, "billing") ||
		!slices.Equal(ep.LinkedMemories, []string{"m_linked"}) || !eps[0].Time.Equal(t0.Add(time.Hour)) {
		t.Fatalf("episode = %+v at %v", ep, eps[0].Time)
	}
	pads := rec.ofType(events.TypeScratchpadUpdated)
	if len(pads) != 1 || pads[0].Data.(*events.Scratchpad).EpisodeID != ep.ID || !strings.Contains(pads[0].Data.(*events.Scratchpad).Content, "billing") {
		t.Fatalf("scratchpads = %+v", pads)
	}
	// The same event again (a redelivery) publishes the same ids.
	if err := c.Handle(t.Context(), ended(ana, "s1", 3)); err != nil {
		t.Fatal(err)
	}
	if again := rec.ofType(events.TypeEpisodeBuilt); len(again) != 2 || again[1].ID != again[0].ID {
		t.Fatalf("ids differ on redelivery: %+v", again)
	}
	// Another user's session of the same id gets an id of its own.
	bob := memory.Scope{Namespace: "default", User: "bob"}
	session(st, bob, "s1", "Please deploy the billing service to Kubernetes for the Atlas project.",
		"Deployed billing to Kubernetes; all pods are healthy. Next I will add alerts.", "thanks")
	if err := c.Handle(t.Context(), ended(bob, "s1", 3)); err != nil {
		t.Fatal(err)
	}
	if all := rec.ofType(events.TypeEpisodeBuilt); all[2].ID == all[0].ID {
		t.Fatalf("two users' episodes share the event id %s", all[0].ID)
	}
}

func TestShortSessionIsNotConsolidated(t *testing.T) {
	t.Parallel()
	c, st, rec := newTest(t, defaults(t))
	session(st, ana, "s1", "hi", "hello")
	if err := c.Handle(t.Context(), ended(ana, "s1", 2)); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.ofType(events.TypeEpisodeBuilt)); n != 0 {
		t.Fatalf("%d episodes for a 2-message session", n)
	}
}

func TestCompressionEpisodeUsesTheEventsTurns(t *testing.T) {
	t.Parallel()
	c, _, rec := newTest(t, defaults(t))
	c.Store = nil // the turns travel in the event: no read model needed
	ev := memory.Applied{Envelope: memory.Envelope{Seq: 5, Source: "agent", ID: "cc-1", Type: events.TypeContextCompressing,
		Scope: ana, Subject: "s9", Time: t0},
		Data: &events.ContextCompressing{SessionID: "s9", Summary: "我们把数据库从 MySQL 迁移到了 Postgres。", Turns: []events.TurnRecorded{
			{SessionID: "s9", TurnIndex: 4, Role: "user", Content: "把数据库迁移到 Postgres"},
			{SessionID: "s9", TurnIndex: 5, Role: "assistant", Content: "好的，已经迁移完成。"},
		}}}
	if err := c.Handle(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	eps := rec.ofType(events.TypeEpisodeBuilt)
	if len(eps) != 1 {
		t.Fatalf("episodes = %d, want 1", len(eps))
	}
	ep := eps[0].Data.(*events.Episode)
	if ep.Source != events.SourceCompression || fmt.Sprint(ep.Turns) != "[4 5]" || !strings.Contains(ep.Summary, "Postgres") {
		t.Fatalf("compression episode = %+v", ep)
	}
}

func TestPublishRuleAndBadAction(t *testing.T) {
	t.Parallel()
	set := ruleSet(t, map[string]string{"mine.yaml": `
rules:
  - name: note_long_sessions
    on: session.ended
    when: {field: data.message_count, op: gte, value: 5}
    do:
      - publish:
          type: memory.added
          data: {kind: fact, category: event, subject: user, predicate: note, content: had a long session, importance: 0.3}
  - name: broken_publish
    on: session.ended
    do:
      - publish: {type: memory.added, data: {kind: nonsense}}
`})
	c, _, rec := newTest(t, set)
	if err := c.Handle(t.Context(), ended(ana, "s1", 4)); err != nil {
		t.Fatalf("a rule that can never publish must not fail the event: %v", err)
	}
	if n := len(rec.ofType(events.TypeMemoryAdded)); n != 0 {
		t.Fatalf("%d memory.added for 4 messages", n)
	}
	if err := c.Handle(t.Context(), ended(ana, "s1", 6)); err != nil {
		t.Fatal(err)
	}
	got := rec.ofType(events.TypeMemoryAdded)
	if len(got) != 1 || got[0].Scope != ana {
		t.Fatalf("published = %+v", got)
	}
	var d map[string]any
	if err := json.Unmarshal(got[0].Data.(json.RawMessage), &d); err != nil || d["content"] != "had a long session" {
		t.Fatalf("data = %v, %v", d, err)
	}
}

func TestConfirmRuleWaitsForApproval(t *testing.T) {
	t.Parallel()
	set := ruleSet(t, map[string]string{"c.yaml": `
rules:
  - name: ask_first
    on: session.ended
    do: [build_episode]
    mode: confirm
`})
	c, st, rec := newTest(t, set)
	session(st, ana, "s1", "Fix the flaky login test please.", "Fixed it: the test now waits for the token. Done.", "great")
	if err := c.Handle(t.Context(), ended(ana, "s1", 3)); err != nil {
		t.Fatal(err)
	}
	if err := c.Handle(t.Context(), ended(ana, "s1", 3)); err != nil { // redelivered
		t.Fatal(err)
	}
	if n := len(rec.ofType(events.TypeEpisodeBuilt)); n != 0 {
		t.Fatalf("a confirm rule ran before approval (%d episodes)", n)
	}
	bob := memory.Scope{Namespace: "default", User: "bob"}
	if got := c.PendingFirings(&bob); len(got) != 0 {
		t.Fatalf("bob sees %+v", got)
	}
	p := c.PendingFirings(&ana)
	if len(p) != 1 || p[0].Rule != "ask_first" || p[0].Actions[0] != `build_episode source="session_end"` {
		t.Fatalf("pending = %+v", p)
	}
	if err := c.Approve(t.Context(), p[0].ID, &bob); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Fatalf("bob approving ana's firing: %v, want not found", err)
	}
	if err := c.Approve(t.Context(), p[0].ID, &ana); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.ofType(events.TypeEpisodeBuilt)); n != 1 {
		t.Fatalf("%d episodes after approval, want 1", n)
	}
	if left := c.PendingFirings(nil); len(left) != 0 {
		t.Fatalf("still pending: %+v", left)
	}
}

// extract_now on a trigger the batcher does not watch requests the
// session's unextracted turns; on session.ended it adds nothing.
func TestExtractNow(t *testing.T) {
	t.Parallel()
	set := ruleSet(t, map[string]string{"x.yaml": `
rules:
  - name: extract_on_important
    on: memory.write.important
    do: [{extract_now: {reason: manual}}]
  - name: extract_on_end
    on: session.ended
    do: [extract_now]
`})
	c, st, rec := newTest(t, set)
	session(st, ana, "s1", "I moved to Berlin", "noted", "and I use Neovim")
	st.turns[key(ana, "s1")][0].Extracted = true
	if err := c.Handle(t.Context(), ended(ana, "s1", 3)); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.ofType(events.TypeExtractionRequested)); n != 0 {
		t.Fatalf("%d requests on session.ended; the batcher already asks", n)
	}
	imp := memory.Applied{Envelope: memory.Envelope{Seq: 11, Source: "engram/extractor", ID: "important-m1",
		Type: events.TypeMemoryImportant, Scope: ana, Subject: "s1", Time: t0},
		Data: &events.MemoryImportant{MemoryID: "m1", Kind: "fact", Category: "identity", Subject: "user", Predicate: "location",
			Content: "lives in Berlin", Importance: 0.9, SessionID: "s1", CauseEventID: "x"}}
	if err := c.Handle(t.Context(), imp); err != nil {
		t.Fatal(err)
	}
	reqs := rec.ofType(events.TypeExtractionRequested)
	if len(reqs) != 1 {
		t.Fatalf("requests = %+v", reqs)
	}
	r := reqs[0].Data.(*events.ExtractionRequested)
	if r.Reason != "manual" || len(r.Turns) != 2 || r.Turns[0].TurnIndex != 1 {
		t.Fatalf("request = %+v", r)
	}
}

// The shipped confirm-mode card rule asks once per user, however many
// important memories come: the firing waiting re-renders the cards as
// they are when it is approved. Another user gets their own; after the
// approval, the next important memory asks again.
func TestCardRuleAsksOncePerUser(t *testing.T) {
	set := ruleSet(t, map[string]string{"important.yaml": readShipped(t, "important.yaml")})
	c, _, _ := newTest(t, set)
	bob := memory.Scope{Namespace: "default", User: "bob"}
	important := func(scope memory.Scope, seq uint64, session string) memory.Applied {
		return memory.Applied{Envelope: memory.Envelope{Seq: seq, Source: "engram/extractor", ID: fmt.Sprintf("important-%d", seq),
			Type: events.TypeMemoryImportant, Scope: scope, Subject: session, Time: t0.Add(time.Duration(seq) * time.Minute)},
			Data: &events.MemoryImportant{MemoryID: fmt.Sprintf("m%d", seq), Kind: "preference", Category: "config", Subject: "user",
				Predicate: "likes", Content: fmt.Sprintf("likes thing %d", seq), Importance: 0.9, SessionID: session, CauseEventID: "x"}}
	}
	for seq, session := range []string{"s1", "s1", "s2", "s2", "s3"} {
		if err := c.Handle(t.Context(), important(ana, uint64(seq+1), session)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Handle(t.Context(), important(bob, 9, "b1")); err != nil {
		t.Fatal(err)
	}
	p := c.PendingFirings(&ana)
	if len(p) != 1 || p[0].Rule != "cards_on_important_rule" {
		t.Fatalf("ana's waiting firings after five important memories: %+v, want one", p)
	}
	if n := len(c.PendingFirings(&bob)); n != 1 {
		t.Fatalf("bob's waiting firings: %d, want 1", n)
	}
	if err := c.Approve(t.Context(), p[0].ID, &ana); err != nil {
		t.Fatal(err)
	}
	if err := c.Handle(t.Context(), important(ana, 10, "s4")); err != nil {
		t.Fatal(err)
	}
	if n := len(c.PendingFirings(&ana)); n != 1 {
		t.Fatalf("after the approval, a new important memory: %d waiting, want 1", n)
	}
}

func readShipped(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "rules", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
