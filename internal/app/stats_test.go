package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/metrics"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
	"go.uber.org/zap/zaptest"
)

// Issue 10 item 9, seed 004 §9: the quality figures of a known workload on
// a real engram, in GET /v1/stats and /metrics; the read model's figures
// are the same after a restart and in a rebuilt read model.
func TestQualityStats(t *testing.T) {
	// Not parallel: it counts what the process-wide metrics gained, which
	// another test's requests would add to.
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	const ns = "quality"
	add := func(body string) string {
		t.Helper()
		r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(`{"namespace":"`+ns+`","user":"qa",`+body[1:]), nil)
		if r.Status != 202 {
			t.Fatalf("add: %d %s", r.Status, r.Raw)
		}
		return r.Body["memory_id"].(string)
	}
	decide := func(id, action string) {
		t.Helper()
		if r := do(t, "POST", base+"/v1/pending/"+id+"/"+action+"?namespace="+ns+"&user=qa&wait=true", "application/json", []byte(`{}`), nil); r.Status != 202 {
			t.Fatalf("%s %s: %d %s", action, id, r.Status, r.Raw)
		}
	}
	add(`{"kind":"fact","category":"identity","subject":"user","predicate":"location","content":"用户住在北京","importance":0.6}`)
	add(`{"kind":"fact","category":"identity","subject":"user","predicate":"location","content":"用户住在上海","importance":0.6}`) // supersedes
	add(`{"kind":"preference","category":"config","subject":"user","predicate":"likes","content":"The user likes green tea","importance":0.6}`)
	p1 := add(`{"kind":"preference","category":"config","subject":"user","predicate":"likes","content":"The user likes cats","confidence":0.7}`)
	p2 := add(`{"kind":"preference","category":"config","subject":"user","predicate":"likes","content":"The user likes hiking","confidence":0.7}`)
	p3 := add(`{"kind":"preference","category":"config","subject":"user","predicate":"likes","content":"The user likes running","confidence":0.7}`)
	decide(p1, "confirm")
	decide(p2, "confirm")
	decide(p3, "ignore")
	turn := turnEvent("qa-turn-0", "qa", "s1", 0, "assistant", "Here is a recipe for green tea with honey.")
	turn["namespace"] = ns
	mustAccept(t, postEvent(t, a, turn))
	waitSettled(t, a)

	// Two context blocks: one finds the tea, one (a user with nothing) finds
	// nothing. The process counts them since it started (-count=N runs
	// this test in one process).
	prior := metrics.Default.Context(ns)
	memTokens, allTokens := int(prior.MemoryTokens), int(prior.TotalTokens)
	for _, body := range []string{`{"namespace":"` + ns + `","user":"qa","query":"what tea does the user like?","force":true}`,
		`{"namespace":"` + ns + `","user":"nobody","query":"what tea does the user like?","force":true}`} {
		r := do(t, "POST", base+"/v1/context", "application/json", []byte(body), nil)
		if r.Status != 200 {
			t.Fatalf("context: %d %s", r.Status, r.Raw)
		}
		var resp struct {
			Tokens int
			Blocks map[string][]struct{ Tokens int }
		}
		if err := json.Unmarshal([]byte(r.Raw), &resp); err != nil {
			t.Fatal(err)
		}
		allTokens += resp.Tokens
		for _, b := range []string{"profile", "memories"} {
			for _, it := range resp.Blocks[b] {
				memTokens += it.Tokens
			}
		}
	}
	if memTokens == int(prior.MemoryTokens) || allTokens < memTokens {
		t.Fatalf("setup: memory tokens %d of %d", memTokens, allTokens)
	}

	stats := func() map[string]any {
		t.Helper()
		r := do(t, "GET", base+"/v1/stats?namespace="+ns, "", nil, nil)
		if r.Status != 200 {
			t.Fatalf("stats: %d %s", r.Status, r.Raw)
		}
		return r.Body
	}
	got := stats()
	want := map[string]any{
		"users": 1.0, "turns": 1.0, "episodes": 0.0,
		"confirmed": 2.0, "ignored": 1.0, "confirmation_rate": 2.0 / 3,
		// wrong: running (ignored), per 2 confirmed (seed 004 §9); written
		// 6, Beijing superseded soon (an update, not a wrong write).
		"written": 6.0, "wrong_writes": 1.0, "wrong_write_rate": 0.5, "superseded_soon": 1.0, "window_days": 7.0,
		"context_served": float64(prior.Served + 2), "retrieval_hit_rate": float64(prior.Hits+1) / float64(prior.Served+2), "memory_token_share": float64(memTokens) / float64(allTokens),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if m := got["memories"].(map[string]any); m["active"] != 4.0 || m["superseded"] != 1.0 || m["rejected"] != 1.0 {
		t.Errorf("memories by status = %v, want 4 active, 1 superseded, 1 rejected", m)
	}
	if r := do(t, "GET", base+"/v1/stats?namespace="+ns+"&window_days=x", "", nil, nil); r.Status != 400 || !strings.Contains(r.Raw, "window_days") {
		t.Errorf("bad window_days: %d %s", r.Status, r.Raw)
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	quiet.Close(resp.Body)
	for _, line := range []string{"engram_memory_confirmation_ratio 0.6666666666666666", "engram_memory_wrong_write_ratio 0.5",
		`engram_context_served_total{result="hit"}`, `engram_context_tokens_total{block="memory"}`} {
		if !strings.Contains(string(raw), line) {
			t.Errorf("/metrics has no %q", line)
		}
	}

	// The read model's figures survive a restart and a rebuild.
	readModel := func(st map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range st {
			if !strings.HasPrefix(k, "context_") && k != "retrieval_hit_rate" && k != "memory_token_share" {
				out[k] = v
			}
		}
		b, _ := json.Marshal(out)
		var norm map[string]any
		_ = json.Unmarshal(b, &norm)
		return norm
	}
	before := readModel(got)
	stopApp(t, a)
	a = startApp(t, cfg, RoleAll)
	base = "http://" + a.HTTPAddr()
	waitSettled(t, a)
	if after := readModel(stats()); !jsonEqual(before, after) {
		t.Errorf("after a restart: %v, before: %v", after, before)
	}
	stopApp(t, a)
	out := cfg.ReadModelPath() + ".stats"
	if _, err := Rebuild(t.Context(), cfg, RebuildOptions{Out: out}, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := sqlite.Open(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(rebuilt)
	st, err := rebuilt.Quality(t.Context(), ns, "", memory.DefaultWrongWriteWindow)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st)
	var fromRebuild map[string]any
	_ = json.Unmarshal(b, &fromRebuild)
	if !jsonEqual(before, fromRebuild) {
		t.Errorf("rebuilt read model: %v, live: %v", fromRebuild, before)
	}
}

func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
