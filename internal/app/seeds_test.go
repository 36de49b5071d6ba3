package app

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/contextblock"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
)

// Issue 24's retrieval half over HTTP, in the single binary and with the
// workers apart: seed 000 §4.4's attachments found by their descriptions
// (in /v1/context and /v1/search), seed 000 §5.5's tech_expert persona,
// and a seed's preset.
func TestSeedRetrievalSingleAndApart(t *testing.T) {
	t.Run("single", func(t *testing.T) {
		a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
		checkSeedRetrieval(t, a, a)
	})
	t.Run("apart", func(t *testing.T) {
		bus := externalNATS(t)
		worker := func(roles Roles) *App {
			cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
			bus.use(&cfg)
			return startApp(t, cfg, roles)
		}
		ingest := worker(RoleIngest)
		retriever := worker(RoleRetriever)
		worker(RoleExtractor)
		worker(RoleConsolidator)
		checkSeedRetrieval(t, ingest, retriever)
	})
}

// checkSeedRetrieval posts the turns to ingest and asks retriever (which
// also takes the memories: POST /v1/memories is served where memories are
// read).
func checkSeedRetrieval(t *testing.T, ingest, retriever *App) {
	t.Helper()
	at := time.Now().UTC().Add(-48 * time.Hour)
	turn := func(id, session string, index int, role, content string, att map[string]any) map[string]any {
		ev := turnEvent(id, "ana", session, index, role, content)
		ev["time"] = at.Add(time.Duration(len(id)) * time.Minute).Format(time.RFC3339Nano)
		if att != nil {
			ev["data"].(map[string]any)["attachments"] = []any{att}
		}
		return ev
	}
	r := postBatch(t, ingest,
		turn("a1", "s1", 0, "user", "给你看看我拍的照片", map[string]any{"name": "IMG_2041.jpg", "mime": "image/jpeg",
			"url": "https://im.test/2041.jpg", "description": "海边的日落，橙色的天空和几只海鸥"}),
		turn("a2", "s2", 0, "user", "这是我家的猫", map[string]any{"name": "IMG_2077.jpg", "mime": "image/jpeg",
			"url": "https://im.test/2077.jpg", "description": "一只橘猫趴在沙发上"}),
		turn("a3", "s3", 0, "user", "帮我把这个月的销售数据做成报告", nil),
		turn("a4", "s3", 1, "assistant", "做好了，见附件", map[string]any{"name": "report-2026-03.pdf", "mime": "application/pdf",
			"path": "/work/out/report-2026-03.pdf", "direction": "outbound", "description": "用户要求的月度销售报告"}),
		turn("a5", "s4", 0, "user", "收到一张单据，先存一下", map[string]any{"name": "scan-0412.pdf", "mime": "application/pdf",
			"path": "/inbox/scan-0412.pdf", "description": "2026年3月的电费发票"}),
	)
	mustAccept(t, r)
	for _, k := range []string{"skill", "error", "fact"} {
		postMemory(t, retriever, fmt.Sprintf(`{"user":"ana","kind":%q,"category":"solution","subject":"deploy","predicate":"%s note",`+
			`"content":"deploy %s: the deploy script runs on the deploy server","importance":0.5}`, k, k, k))
	}
	wait.Until(t, "the memories and turns at the retriever", func() bool {
		ana := memory.Scope{Namespace: "default", User: "ana"}
		mems, err := retriever.Store().Memories(t.Context(), memory.MemoryQuery{Scope: ana, Limit: 10})
		return err == nil && len(mems) == 3 && countTurns(t, retriever, ana) == 5
	})
	ctxReq := func(body string) retrieval.Response {
		t.Helper()
		res := do(t, "POST", "http://"+retriever.HTTPAddr()+"/v1/context", "application/json", []byte(body), nil)
		if res.Status != 200 {
			t.Fatalf("context %s: %d %s", body, res.Status, res.Raw)
		}
		var resp retrieval.Response
		if err := json.Unmarshal([]byte(res.Raw), &resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, c := range []struct{ query, want string }{
		{"上次我发给你的那张猫的照片给我一下", "IMG_2077.jpg:"},
		{"把那份月度销售报告发我", "report-2026-03.pdf:"},
		{"电费发票在哪", "scan-0412.pdf:"},
	} {
		resp := ctxReq(fmt.Sprintf(`{"user":"ana","query":%q}`, c.query))
		if atts := resp.Blocks.Attachments; len(atts) == 0 || !strings.HasPrefix(atts[0].Content, c.want) {
			t.Errorf("%q: attachments %+v, want %s first", c.query, atts, c.want)
		}
	}
	res := do(t, "GET", "http://"+retriever.HTTPAddr()+"/v1/search?user=ana&q="+url.QueryEscape("橘猫"), "", nil, nil)
	if res.Status != 200 || !strings.Contains(res.Raw, `"kind":"attachment"`) || !strings.Contains(res.Raw, "IMG_2077.jpg") {
		t.Errorf("search 橘猫: %d %s", res.Status, res.Raw)
	}

	resp := ctxReq(`{"user":"ana","query":"how do I deploy","persona":"tech_expert","explain":true,"force":true}`)
	if len(resp.Blocks.Memories) != 3 {
		t.Fatalf("deploy memories: %+v", resp.Blocks.Memories)
	}
	for _, it := range resp.Blocks.Memories {
		want := 1.2
		if strings.HasPrefix(it.Content, "deploy fact") {
			want = 1
		}
		if it.Signals["persona"] != want || it.Signals["boost"] != want {
			t.Errorf("%q: persona %v, boost %v; want %v", it.Content, it.Signals["persona"], it.Signals["boost"], want)
		}
	}
	resp = ctxReq(`{"user":"ana","query":"how do I deploy","preset":"seed002","force":true}`)
	var budget contextblock.Budget
	b, _ := json.Marshal(resp.Budget)
	if err := json.Unmarshal(b, &budget); err != nil || budget != contextblock.Seed002Budget(0) {
		t.Errorf("preset seed002: budget %s, want %+v", b, contextblock.Seed002Budget(0))
	}
	if res := do(t, "POST", "http://"+retriever.HTTPAddr()+"/v1/context", "application/json",
		[]byte(`{"user":"ana","query":"x","preset":"seed003"}`), nil); res.Status != 400 || !strings.Contains(res.Raw, "preset") {
		t.Errorf("preset seed003: %d %s, want 400 naming preset", res.Status, res.Raw)
	}
}

// A rules directory created after engram started is loaded without a
// restart: its rules fire.
func TestRulesDirectoryCreatedAfterStart(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Consolidate.RulesDir = filepath.Join(t.TempDir(), "rules")
	cfg.Consolidate.RulesPoll = 50 * time.Millisecond
	a := startApp(t, cfg, RoleAll)
	if err := os.Mkdir(cfg.Consolidate.RulesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	rule := `rules:
  - name: remember_long_sessions
    on: session.ended
    when: {field: data.message_count, op: gte, value: 3}
    do:
      - publish:
          type: memory.added
          data: {kind: fact, category: event, subject: user, predicate: note, content: "had a long session", importance: 0.3}
`
	if err := os.WriteFile(filepath.Join(cfg.Consolidate.RulesDir, "mine.yaml"), []byte(rule), 0o600); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the new rules in force", func() bool {
		set := a.rules()
		for _, r := range set.Rules {
			if r.Name == "remember_long_sessions" {
				return true
			}
		}
		return false
	})
	mustAccept(t, postBatch(t, a, append(conversation("r1", "ann", "s1"), endEvent("r1-end", "ann", "s1", 4))...))
	waitSettled(t, a)
	info, err := func() (*jetstream.StreamInfo, error) {
		s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
		if err != nil {
			return nil, err
		}
		return s.Info(t.Context(), jetstream.WithSubjectFilter(stream.Subject("default", "ann", events.TypeMemoryAdded)))
	}()
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[stream.Subject("default", "ann", events.TypeMemoryAdded)]; n != 1 {
		t.Fatalf("%d memory.added, want the new rule's 1", n)
	}
}
