package retrieval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/textseg"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
)

// brokenFTS is the real read model with its full-text paths failing, as a
// corrupt index or a locked database would make them.
type brokenFTS struct{ *sqlite.Store }

var errIndex = errors.New("fts5: database disk image is malformed")

func (b brokenFTS) RecallMemories(context.Context, memory.Scope, textseg.Query, int) ([]memory.MemoryHit, error) {
	return nil, errIndex
}

func (b brokenFTS) RecallTurns(context.Context, memory.Scope, textseg.Query, int) ([]memory.TurnHit, error) {
	return nil, errIndex
}

func openWith(t *testing.T, turns ...string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	now := time.Now().UTC()
	var batch []memory.Applied
	for i, c := range turns {
		batch = append(batch, memory.Applied{Envelope: memory.Envelope{Seq: uint64(i + 1), Source: "t", ID: fmt.Sprint(i),
			Type: events.TypeTurnRecorded, Scope: memory.Scope{Namespace: "default", User: "u"}, Time: now.Add(-time.Duration(len(turns)-i) * time.Minute)},
			Data: &events.TurnRecorded{SessionID: "s", TurnIndex: i, Role: "user", Content: c}})
	}
	batch = append(batch, memory.Applied{Envelope: memory.Envelope{Seq: uint64(len(turns) + 1), Source: "t", ID: "name",
		Type: events.TypeMemoryAdded, Scope: memory.Scope{Namespace: "default", User: "u"}, Time: now},
		Data: &events.MemoryAdded{Kind: "identity", Category: "identity", Subject: "user", Predicate: "name", Content: "用户叫小王", Importance: 1, Confidence: 1}})
	for _, err := range st.Apply(t.Context(), batch) {
		if err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// When full-text search fails, the answer falls back to recent turns and
// the profile, says so, and reports the fall once per request.
func TestDegradesToRecentAndProfile(t *testing.T) {
	t.Parallel()
	st := openWith(t, "我们在讨论部署", "部署到了 staging")
	e := NewEngine(brokenFTS{st})
	var mu sync.Mutex
	var falls []string
	e.Degraded = func(_ memory.Scope, from, to, reason string) {
		mu.Lock()
		defer mu.Unlock()
		falls = append(falls, from+"->"+to+": "+reason)
	}
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "上次部署到哪里了？"})
	if err != nil {
		t.Fatalf("a failing path must not fail the request: %v", err)
	}
	if len(resp.Degraded) == 0 || resp.Degraded[0] != "fts->recent" {
		t.Fatalf("degraded = %v", resp.Degraded)
	}
	if len(falls) != 1 || !strings.Contains(falls[0], "malformed") {
		t.Fatalf("falls = %v", falls)
	}
	if len(resp.Blocks.Turns) != 2 || len(resp.Blocks.Profile) != 1 || !strings.Contains(resp.Rendered, "小王") {
		t.Fatalf("fallback blocks: turns %d profile %d rendered %q", len(resp.Blocks.Turns), len(resp.Blocks.Profile), resp.Rendered)
	}

	// The same store, healthy: no fall.
	healthy := NewEngine(st)
	healthy.Degraded = e.Degraded
	resp, err = healthy.Context(t.Context(), Request{User: "u", Query: "上次部署到哪里了？"})
	if err != nil || len(resp.Degraded) != 0 || len(falls) != 1 {
		t.Fatalf("healthy: err %v degraded %v falls %v", err, resp.Degraded, falls)
	}
}

// brokenReads is the real read model with every read but full text
// failing: the scratchpad, the memories of an asked time, the year a time
// is anchored to, episodes, daily summaries, recent turns, the agent's
// card and the unconfirmed memories.
type brokenReads struct{ *sqlite.Store }

var errRead = errors.New("sqlite: database is locked")

func (b brokenReads) Scratchpad(context.Context, memory.Scope) (memory.Scratchpad, error) {
	return memory.Scratchpad{}, errRead
}

func (b brokenReads) Memories(ctx context.Context, q memory.MemoryQuery) ([]memory.Memory, error) {
	if !q.CreatedFrom.IsZero() {
		return nil, errRead
	}
	return b.Store.Memories(ctx, q)
}

func (b brokenReads) SaidWithin(context.Context, memory.Scope, time.Time, time.Time) (bool, error) {
	return false, errRead
}

func (b brokenReads) RecallEpisodes(context.Context, memory.Scope, textseg.Query, int) ([]memory.Episode, error) {
	return nil, errRead
}

func (b brokenReads) RecallDailySummaries(context.Context, memory.Scope, textseg.Query, string, string, int) ([]memory.DailySummary, error) {
	return nil, errRead
}

func (b brokenReads) Identity(context.Context, memory.Scope) (memory.Identity, bool, error) {
	return memory.Identity{}, false, errRead
}

func (b brokenReads) PendingFirst(context.Context, memory.Scope, time.Time, string, int) ([]memory.Memory, error) {
	return nil, errRead
}

func (b brokenReads) RecentTurns(context.Context, memory.Scope, time.Time, int) ([]memory.TurnHit, error) {
	return nil, errRead
}

// A read that fails inside ranking is never dropped (issue 25): the answer
// goes on with what the other paths found, names each fall, and reports
// each to Degraded with its reason.
func TestEveryFailedReadIsDegraded(t *testing.T) {
	t.Parallel()
	st := openWith(t, "我们在讨论部署", "三月初部署到了 staging")
	e := NewEngine(brokenReads{st})
	var falls []string
	e.Degraded = func(_ memory.Scope, from, to, reason string) {
		if !strings.Contains(reason, errRead.Error()) {
			t.Errorf("fall %s->%s: reason %q does not carry the read's error", from, to, reason)
		}
		falls = append(falls, from+"->"+to)
	}
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "三月初部署到哪里了？", Force: true})
	if err != nil {
		t.Fatalf("a failing read must not fail the request: %v", err)
	}
	want := []string{"scratchpad->none", "anchor->latest", "time->fts", "episodes->none", "daily->none", "recent->none", "identity->none", "pending->none"}
	if got := resp.Degraded; !slices.Equal(got, want) {
		t.Fatalf("degraded = %v, want %v", got, want)
	}
	if !slices.Equal(falls, want) {
		t.Fatalf("falls reported = %v, want %v", falls, want)
	}
	if len(resp.Blocks.Turns) == 0 || !strings.Contains(resp.Blocks.Turns[0].Content, "staging") {
		t.Fatalf("full text still answers: turns %+v", resp.Blocks.Turns)
	}
	for _, f := range want {
		from, to, _ := strings.Cut(f, "->")
		if !slices.Contains(Falls, [2]string{from, to}) {
			t.Fatalf("%s is not among Falls, whose metrics exist from the start", f)
		}
	}

	// A search returns the error of the read it needed.
	if _, err := e.Search(t.Context(), memory.SearchQuery{Scope: memory.Scope{Namespace: "default", User: "u"}, Text: "三月初部署到哪里了", Limit: 5}); !errors.Is(err, errRead) {
		t.Fatalf("search: err = %v, want the failed read's", err)
	}
}

// Every weight a memory is ranked by is in Weights (issue 25): a
// memory of the project the query names, of the kind it asks for, of the
// request's persona, gains what Weights says and nothing else does.
func TestBoostsAreWeights(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.apply(user, events.TypeMemoryAdded, f.now.Add(-time.Hour), &events.MemoryAdded{MemoryID: "m1", Kind: "preference", Category: "decision",
		Subject: "user", Predicate: "note", Content: "atlas deploys on fridays", Project: "atlas", Importance: 0.5, Confidence: 1})
	score := func(w Weights, req Request) float64 {
		e := NewEngine(f.st)
		e.Now = func() time.Time { return f.now }
		e.Weights = w
		req.User, req.Namespace, req.Force, req.Explain = user.User, user.Namespace, true, true
		resp, err := e.Context(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Blocks.Memories) != 1 {
			t.Fatalf("memories = %+v", resp.Blocks.Memories)
		}
		return resp.Blocks.Memories[0].Signals["boost"]
	}
	w := SeedWeights()
	for _, tc := range []struct {
		name string
		req  Request
		set  func(*Weights, float64)
	}{
		{"persona", Request{Query: "fridays deploys", Persona: "preference"}, func(w *Weights, v float64) { w.Persona = v }},
		{"intent", Request{Query: "what do i like about deploys"}, func(w *Weights, v float64) { w.Intent = v }},
		{"project", Request{Query: "how does atlas deploy"}, func(w *Weights, v float64) { w.Project = v }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ww := w
			tc.set(&ww, 1.7)
			if got := score(ww, tc.req); math.Abs(got-1.7) > 1e-9 {
				t.Fatalf("boost = %v, want 1.7 from Weights", got)
			}
		})
	}
}

// fakeVectors answers the semantic path with fixed cosines.
type fakeVectors struct {
	st     Store
	cosine map[string]float64 // by memory content
	err    error
}

func (f fakeVectors) SearchMemories(ctx context.Context, scope memory.Scope, _ string, k int, also []string) ([]memory.MemoryHit, map[string]float64, error) {
	if f.err != nil {
		return nil, nil, f.err
	}
	mems, err := f.st.Memories(ctx, memory.MemoryQuery{Scope: scope, Limit: 100})
	if err != nil {
		return nil, nil, err
	}
	var hits []memory.MemoryHit
	scores := map[string]float64{}
	for _, m := range mems {
		if c, ok := f.cosine[m.Content]; ok {
			hits = append(hits, memory.MemoryHit{Memory: m, Semantic: c})
			scores[m.ID] = c
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].Semantic > hits[j].Semantic })
	return hits[:min(k, len(hits))], scores, nil
}

// With vectors, a memory full text cannot find is recalled at the
// relevance of its cosine; with the vector path failing, full text answers
// alone and the fall is reported.
func TestVectorFusion(t *testing.T) {
	t.Parallel()
	st := openWith(t)
	tea := memory.Applied{Envelope: memory.Envelope{Seq: 100, Source: "t", ID: "tea", Type: events.TypeMemoryAdded,
		Scope: memory.Scope{Namespace: "default", User: "u"}, Time: time.Now().UTC().Add(-60 * 24 * time.Hour)},
		// An event two months old: its category decay (0.325) scales its
		// importance, not its score.
		Data: &events.MemoryAdded{Kind: "preference", Category: "event", Subject: "user", Predicate: "drink",
			Content: "用户爱喝乌龙茶", Importance: 0.5, Confidence: 1}}
	for _, err := range st.Apply(t.Context(), []memory.Applied{tea}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	e := NewEngine(st)
	var falls []string
	e.Degraded = func(_ memory.Scope, from, to, _ string) { falls = append(falls, from+"->"+to) }
	e.Vectors = fakeVectors{st: st, cosine: map[string]float64{"用户爱喝乌龙茶": 0.8}}
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "早上来点什么饮品", Force: true, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Blocks.Memories) != 1 {
		t.Fatalf("memories = %+v", resp.Blocks.Memories)
	}
	sig := resp.Blocks.Memories[0].Signals
	// Full text misses it: its relevance is its cosine, ranked by seed
	// 000's signals, importance decayed.
	want := 0.8 * (0.40 + 0.25*sig["recency"] + 0.20*0.5*sig["decay"] + 0.15*sig["access"]) * sig["boost"]
	if sig["semantic"] != 0.8 || sig["relevance"] != 0.8 || sig["decay"] >= 1 || math.Abs(sig["score"]-want) > 1e-9 {
		t.Fatalf("signals = %v, want score %v", sig, want)
	}

	e.Vectors = fakeVectors{err: errors.New("embeddings: 503")}
	resp, err = e.Context(t.Context(), Request{User: "u", Query: "乌龙茶", Force: true})
	if err != nil {
		t.Fatalf("a failing vector path must not fail the request: %v", err)
	}
	if len(resp.Blocks.Memories) != 1 || !slices.Contains(resp.Degraded, "vectors->fts") || !slices.Equal(falls, []string{"vectors->fts"}) {
		t.Fatalf("memories %d, degraded %v, falls %v", len(resp.Blocks.Memories), resp.Degraded, falls)
	}
}

// Vectors only add (issue 23): a memory full text ranks first stays first
// when the vectors find another that shares a few common words with the
// question (seed 004's hybrid sum put that one first).
func TestVectorsOnlyAdd(t *testing.T) {
	t.Parallel()
	st := openWith(t)
	for i, m := range []struct{ id, content string }{{"tea", "User drinks oolong tea every morning"}, {"walk", "User walks the dog every morning"}} {
		mustApply(t, st, memory.Applied{Envelope: memory.Envelope{Seq: uint64(200 + i), Source: "t", ID: m.id, Type: events.TypeMemoryAdded,
			Scope: memory.Scope{Namespace: "default", User: "u"}, Time: time.Now().UTC().Add(-24 * time.Hour)},
			Data: &events.MemoryAdded{MemoryID: m.id, Kind: "fact", Category: "decision", Subject: "user", Predicate: "note",
				Content: m.content, Importance: 0.5, Confidence: 1}})
	}
	e := NewEngine(st)
	e.Vectors = fakeVectors{st: st, cosine: map[string]float64{"User drinks oolong tea every morning": 0.1, "User walks the dog every morning": 0.9}}
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "oolong tea", Force: true, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(resp.Blocks.Memories); len(got) < 2 || got[0] != "tea" {
		t.Fatalf("memories = %v, want the one full text found first (tea)", got)
	}
}

func mustApply(t *testing.T, st *sqlite.Store, batch ...memory.Applied) {
	t.Helper()
	for _, err := range st.Apply(t.Context(), batch) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A query of stopwords alone is not searched by text: it would match
// nearly everything and rank it by noise. Recent turns answer, or the
// recent messages when they carry words.
func TestStopwordQuery(t *testing.T) {
	t.Parallel()
	st := openWith(t, "the deploy went to the staging cluster", "the cat sat on the mat")
	e := NewEngine(st)
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "what about the", Force: true, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range resp.Blocks.Turns {
		if it.Signals["text"] != 0 {
			t.Fatalf("turn %q found by text for a stopword query: %v", it.Content, it.Signals)
		}
	}
	resp, err = e.Context(t.Context(), Request{User: "u", Query: "what about the", Force: true, Explain: true,
		RecentMessages: []Message{{Role: "user", Content: "staging"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Blocks.Turns) == 0 || resp.Blocks.Turns[0].Signals["text"] == 0 || !strings.Contains(resp.Blocks.Turns[0].Content, "staging") {
		t.Fatalf("with context, turns = %+v", resp.Blocks.Turns)
	}
}

// A profile memory the query matches is in the profile card once, not
// again among the memories; and evidence turns are trimmed lowest score
// first when the recent tier is over budget: the best one stays.
func TestProfileOnceAndTurnsTrimmedByScore(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("部署 staging 集群的细节 ", 40)
	st := openWith(t, "小王 说 "+long, "小王 又说 "+long, "小王 最后说 "+long)
	e := NewEngine(st)
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "小王 部署", Force: true, BudgetTokens: 800})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Blocks.Profile) != 1 || slices.ContainsFunc(resp.Blocks.Memories, func(it Item) bool { return it.ID == resp.Blocks.Profile[0].ID }) {
		t.Fatalf("profile %+v, memories %+v: the name memory is listed twice", resp.Blocks.Profile, resp.Blocks.Memories)
	}
	if len(resp.Dropped) == 0 || len(resp.Blocks.Turns) == 0 {
		t.Fatalf("setup: the budget trimmed nothing (dropped %v, turns %d)", resp.Dropped, len(resp.Blocks.Turns))
	}
	for _, id := range resp.Dropped {
		if strings.Contains(resp.Rendered, id) {
			t.Fatalf("dropped %s is rendered", id)
		}
	}
	full, err := e.Context(t.Context(), Request{User: "u", Query: "小王 部署", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if best := full.Blocks.Turns[0].ID; !slices.ContainsFunc(resp.Blocks.Turns, func(it Item) bool { return it.ID == best }) {
		t.Fatalf("the best turn %s was trimmed: kept %+v", best, resp.Blocks.Turns)
	}
}

// The unconfirmed memories the context asks about are the newest (of the
// request's session first), however many wait: a user with more than
// the confirmation queue's page of older ones still sees today's.
func TestPendingAskedAreTheNewest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const waiting = 205
	for i := range waiting {
		f.apply(user, events.TypeMemoryAdded, f.now.Add(time.Duration(i-waiting)*time.Minute), &events.MemoryAdded{
			MemoryID: fmt.Sprintf("p%03d", i), Kind: "fact", Category: "profile", Subject: fmt.Sprintf("thing%03d", i),
			Predicate: "note", Content: fmt.Sprintf("unconfirmed note number %03d", i), Importance: 0.5, Confidence: 0.7})
	}
	resp, err := NewEngine(f.st).Context(t.Context(), Request{User: user.User, Query: "anything new?", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range resp.Blocks.Pending {
		got = append(got, it.ID)
	}
	if want := []string{"p204", "p203", "p202"}; !slices.Equal(got, want) {
		t.Fatalf("pending asked = %v, want the newest %v", got, want)
	}
}

// Every fall a response can name is one a retrieval.degraded event can
// carry: the app publishes each, and an event the contract refused
// would be a second warning instead of the record of the first.
func TestFallsArePublishable(t *testing.T) {
	t.Parallel()
	for _, f := range Falls {
		if err := (&events.RetrievalDegraded{From: f[0], To: f[1], Reason: "database is locked"}).Validate(); err != nil {
			t.Errorf("fall %s->%s: %v", f[0], f[1], err)
		}
	}
}
