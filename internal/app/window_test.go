package app

import (
	"fmt"
	"testing"
)

// /v1/context with a session_id returns that session's window end to end,
// in the shape /openapi.json documents (do validates every response).
func TestContextSessionWindow(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	var evs []any
	for i := range 12 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		evs = append(evs, turnEvent(fmt.Sprintf("w%d", i), "wen", "live", i, role, fmt.Sprintf("第%d轮：继续调整支付重试策略", i)))
	}
	r := postBatch(t, a, evs...)
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
	resp := contextHTTP(t, a, map[string]any{"user": "wen", "query": "天气怎么样", "session_id": "live", "force": true})
	w := resp.Blocks.Window
	if len(w) == 0 || w[len(w)-1].TurnIndex == nil || *w[len(w)-1].TurnIndex != 11 {
		t.Fatalf("window = %+v, want the session's latest turns", w)
	}
	other := contextHTTP(t, a, map[string]any{"user": "someone-else", "query": "天气怎么样", "session_id": "live", "force": true})
	if len(other.Blocks.Window) != 0 {
		t.Fatalf("another user sees the session: %+v", other.Blocks.Window)
	}
}
