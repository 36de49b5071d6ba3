package app

import (
	"encoding/json"
	"strings"
	"testing"
)

// The README tour's /v1/context example: the turn it records, then its
// question, gives the coffee preference README shows, with its reason.
func TestReadmeCoffeeExample(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	mustAccept(t, postBatch(t, a, turnEvent("turn-0001", "lilei", "s-42", 0, "user", "我住在北京市朝阳区，平时喜欢喝美式咖啡。"),
		endEvent("end-0001", "lilei", "s-42", 1)))
	waitSettled(t, a)
	r := do(t, "POST", "http://"+a.HTTPAddr()+"/v1/context", "application/json",
		[]byte(`{"user":"lilei","query":"我平时喝什么咖啡？","budget_tokens":1500}`), nil)
	if r.Status != 200 {
		t.Fatalf("context: %d %s", r.Status, r.Raw)
	}
	var out struct {
		Retrieved bool
		Reason    string
		Blocks    struct {
			Memories []struct{ Content string }
		}
		Rendered string
	}
	if err := json.Unmarshal([]byte(r.Raw), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Retrieved || !strings.HasPrefix(out.Reason, "preference:") {
		t.Fatalf("retrieved %v, reason %q; README shows true and a preference reason", out.Retrieved, out.Reason)
	}
	found := false
	for _, m := range out.Blocks.Memories {
		found = found || m.Content == "用户喜欢喝美式咖啡"
	}
	if !found || !strings.Contains(out.Rendered, "「用户喜欢喝美式咖啡」") {
		t.Fatalf("memories %+v, rendered %q: README shows the memory 用户喜欢喝美式咖啡", out.Blocks.Memories, out.Rendered)
	}
}
