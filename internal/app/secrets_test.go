package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/secrets/corpus"
)

// Every secret of the corpus, sent as raw turns and as a memory, is
// masked before it enters the stream: no read path hands it back, and no
// file under the data dir holds it. A namespace that opted out keeps
// what it sent.
func TestSecretsMaskedAtIngest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Extract.UnmaskedNamespaces = []string{"raw"}
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	cases := corpus.Secrets()
	var evs []any
	for i, c := range cases {
		evs = append(evs, turnEvent(fmt.Sprintf("t-%d", i), "sam", "s1", i, "user", c.Text))
	}
	mustAccept(t, postBatch(t, a, evs...))
	add := `{"user":"sam","kind":"fact","category":"credential","subject":"user","predicate":"uses_key",` +
		`"content":"my key ` + cases[0].Secret + ` is for the batch job","importance":0.9}`
	if r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(add), nil); r.Status != 202 {
		t.Fatalf("add memory: %d %s", r.Status, r.Raw)
	}
	raw := turnEvent("r-1", "sam", "s1", 0, "user", cases[0].Text)
	raw["namespace"] = "raw"
	mustAccept(t, postEvent(t, a, raw))
	waitSettled(t, a)

	leaked := func(body string) string {
		for _, c := range cases {
			if strings.Contains(body, c.Secret) {
				return c.Secret
			}
		}
		return ""
	}
	found := 0
	for _, c := range cases {
		q := strings.TrimSpace(c.Before + " " + c.After)
		for _, query := range []string{c.Secret, q} {
			v := url.Values{"user": {"sam"}, "q": {query}, "limit": {"50"}}
			r := do(t, "GET", base+"/v1/search?"+v.Encode(), "", nil, nil)
			if s := leaked(r.Raw); s != "" {
				t.Fatalf("/v1/search?q=%q hands back %q", query, s)
			}
			if strings.Contains(r.Raw, `"kind":"turn"`) {
				found++
			}
			b, _ := json.Marshal(map[string]any{"user": "sam", "query": query, "force": true, "budget_tokens": 8000})
			r = do(t, "POST", base+"/v1/context", "application/json", b, nil)
			if r.Status != 200 {
				t.Fatalf("/v1/context: %d %s", r.Status, r.Raw)
			}
			if s := leaked(r.Raw); s != "" {
				t.Fatalf("/v1/context for %q hands back %q", query, s)
			}
		}
	}
	if found < len(cases)/2 {
		t.Fatalf("only %d searches found a turn: the masked turns should still be found by their words", found)
	}
	r := do(t, "GET", base+"/v1/memories?user=sam", "", nil, nil)
	if s := leaked(r.Raw); s != "" || !strings.Contains(r.Raw, "[secret:openai_key#") {
		t.Fatalf("/v1/memories: leaked %q: %s", s, r.Raw)
	}
	// The opt-out: namespace raw keeps the key as sent.
	v := url.Values{"namespace": {"raw"}, "user": {"sam"}, "q": {"OpenAI client"}}
	if r := do(t, "GET", base+"/v1/search?"+v.Encode(), "", nil, nil); !strings.Contains(r.Raw, cases[0].Secret) {
		t.Fatalf("namespace raw opted out, but its turn came back %s", r.Raw)
	}
	// Nothing under the data dir holds a masked namespace's secret: only
	// the opted-out turn's key may be there.
	stopApp(t, a)
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, c := range cases[1:] {
			if bytes.Contains(b, []byte(c.Secret)) {
				t.Errorf("%s holds %q", path, c.Secret)
			}
		}
		return nil
	})
}
