package retrieval

import (
	"context"
	"errors"
	"fmt"
	"github.com/engramhq/engram/internal/textseg"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

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

// With vectors, a memory full text cannot find is recalled and ranked by
// seed 004's hybrid weights; with the vector path failing, full text
// answers alone and the fall is reported.
func TestVectorFusion(t *testing.T) {
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
	resp, err := e.Context(t.Context(), Request{User: "u", Query: "我平时喝什么", Force: true, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Blocks.Memories) != 1 {
		t.Fatalf("memories = %+v", resp.Blocks.Memories)
	}
	sig := resp.Blocks.Memories[0].Signals
	// seed 004's hybrid score, with importance (decayed) and access as a
	// bounded factor beside it.
	want := (0.55*0.8 + 0.30*sig["relevance"] + 0.15*sig["recency"]) * (0.85 + 0.1*0.5*sig["decay"] + 0.05*sig["access"]) * sig["boost"]
	if sig["semantic"] != 0.8 || sig["decay"] >= 1 || math.Abs(sig["score"]-want) > 1e-9 {
		t.Fatalf("signals = %v, want hybrid score %v", sig, want)
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

// A query of stopwords alone is not searched by text: it would match
// nearly everything and rank it by noise. Recent turns answer, or the
// recent messages when they carry words.
func TestStopwordQuery(t *testing.T) {
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
