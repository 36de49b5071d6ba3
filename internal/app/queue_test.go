package app

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram/internal/wait"
)

// A firing waiting for confirmation survives a restart (the queue lives
// in JetStream), and approved afterwards it runs on its original event,
// read again from the stream.
func TestConfirmQueueSurvivesRestart(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.Consolidate.RulesDir = t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg.Consolidate.RulesDir, "confirm.yaml"), []byte(`rules:
  - name: ask_on_manual_memory
    on: memory.added
    do: [render_cards]
    mode: confirm
`), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startApp(t, cfg, RoleAll)
	postMemory(t, a, `{"user":"ann","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"ann prefers tea","importance":0.9}`)
	var pend struct {
		Pending []struct {
			ID   string `json:"id"`
			Rule string `json:"rule"`
		} `json:"pending"`
	}
	list := func(a *App) int {
		r := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/consolidation/pending?user=ann", "", nil, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("pending: %d %s", r.Status, r.Raw)
		}
		if err := json.Unmarshal([]byte(r.Raw), &pend); err != nil {
			t.Fatal(err)
		}
		return len(pend.Pending)
	}
	wait.For(t, "the firing to wait for confirmation", func() error { return wait.Equal(list(a), 1) })
	id := pend.Pending[0].ID
	stopApp(t, a)

	a = startApp(t, cfg, RoleAll)
	if n := list(a); n != 1 || pend.Pending[0].ID != id {
		t.Fatalf("after a restart, pending = %+v, want %s", pend.Pending, id)
	}
	if r := do(t, "POST", "http://"+a.HTTPAddr()+"/v1/consolidation/pending/"+id+"/approve?user=ann", "", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("approve: %d %s", r.Status, r.Raw)
	}
	if n := list(a); n != 0 {
		t.Fatalf("approved firing still pending: %+v", pend.Pending)
	}
}
