package app

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/wait"
)

// The retriever run apart serves the whole write API: manual memories,
// pending decisions, the scratchpad, and the consolidator's confirm queue
// (asked over NATS from the consolidator run apart).
func TestWriteAPIOnSeparateRetriever(t *testing.T) {
	t.Parallel()
	bus := externalNATS(t)
	worker := func(roles Roles) *App {
		cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
		bus.use(&cfg)
		return startApp(t, cfg, roles)
	}
	retriever := worker(RoleRetriever)
	base := "http://" + retriever.HTTPAddr()

	// Without a consolidator, its queue is unavailable, not empty.
	if r := do(t, "GET", base+"/v1/consolidation/pending?user=ann", "", nil, nil); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("pending without a consolidator: %d %s, want 503", r.Status, r.Raw)
	}
	cons := WorkerDefaults(testConfig(t, t.TempDir()), "")
	bus.use(&cons)
	cons.Consolidate.RulesDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(cons.Consolidate.RulesDir, "confirm.yaml"), []byte(`rules:
  - name: ask_on_manual_memory
    on: memory.added
    do: [render_cards]
    mode: confirm
`), 0o600); err != nil {
		t.Fatal(err)
	}
	startApp(t, cons, RoleConsolidator)

	r := do(t, "POST", base+"/v1/memories?wait=true", "application/json",
		[]byte(`{"user":"ann","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"ann prefers tea","importance":0.9}`), nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("POST /v1/memories: %d %s", r.Status, r.Raw)
	}
	id, _ := r.Body["memory_id"].(string)
	if id == "" {
		t.Fatalf("no memory_id in %s", r.Raw)
	}
	if r := do(t, "PATCH", base+"/v1/memories/"+id+"?user=ann&wait=true", "application/json", []byte(`{"content":"ann prefers green tea"}`), nil); r.Status != http.StatusAccepted {
		t.Fatalf("PATCH: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "GET", base+"/v1/memories/"+id+"?user=ann", "", nil, nil); !strings.Contains(r.Raw, "green tea") {
		t.Fatalf("after PATCH: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "PUT", base+"/v1/scratchpad?user=ann&wait=true", "application/json", []byte(`{"content":"release on Friday"}`), nil); r.Status != http.StatusAccepted {
		t.Fatalf("PUT /v1/scratchpad: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "GET", base+"/v1/scratchpad?user=ann", "", nil, nil); !strings.Contains(r.Raw, "release on Friday") {
		t.Fatalf("scratchpad: %s", r.Raw)
	}
	// A pending decision on a memory that is not pending is a conflict,
	// answered by the route (not "no route").
	if r := do(t, "POST", base+"/v1/pending/"+id+"/confirm?user=ann", "", nil, nil); r.Status != http.StatusConflict {
		t.Fatalf("confirm: %d %s, want 409", r.Status, r.Raw)
	}

	// The manual memory fired the confirm-mode rule in the consolidator; the retriever lists and decides it, per user.
	var pend struct {
		Pending []struct{ ID string } `json:"pending"`
	}
	wait.Until(t, "the confirm-mode firing", func() bool {
		r := do(t, "GET", base+"/v1/consolidation/pending?user=ann", "", nil, nil)
		return r.Status == 200 && json.Unmarshal([]byte(r.Raw), &pend) == nil && len(pend.Pending) == 1
	})
	if r := do(t, "GET", base+"/v1/consolidation/pending?user=mallory", "", nil, nil); r.Status != 200 || strings.Contains(r.Raw, pend.Pending[0].ID) {
		t.Fatalf("another user's queue: %d %s", r.Status, r.Raw)
	}
	if r := do(t, "POST", base+"/v1/consolidation/pending/"+pend.Pending[0].ID+"/approve?user=mallory", "", nil, nil); r.Status != http.StatusNotFound {
		t.Fatalf("approve as another user: %d %s, want 404", r.Status, r.Raw)
	}
	if r := do(t, "POST", base+"/v1/consolidation/pending/"+pend.Pending[0].ID+"/approve?user=ann", "", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.Status, r.Raw)
	}

	if r := do(t, "DELETE", base+"/v1/memories/"+id+"?user=ann&wait=true", "", nil, nil); r.Status != http.StatusAccepted {
		t.Fatalf("DELETE: %d %s", r.Status, r.Raw)
	}
}
