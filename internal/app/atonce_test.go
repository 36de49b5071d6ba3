package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
)

const (
	coffeeTurn  = "我住在北京市朝阳区，平时喜欢喝美式咖啡。"
	coffeeQuery = "我平时喝什么咖啡？"
)

// contextMemories asks /v1/context and returns the contents of its
// memories block.
func contextMemories(t *testing.T, a *App, user, query string) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"user": user, "query": query, "budget_tokens": 1500})
	r := do(t, "POST", "http://"+a.HTTPAddr()+"/v1/context", "application/json", body, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("context: %d %s", r.Status, r.Raw)
	}
	var out struct {
		Blocks struct {
			Memories []struct{ Content string }
		}
	}
	if err := json.Unmarshal([]byte(r.Raw), &out); err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, m := range out.Blocks.Memories {
		contents = append(contents, m.Content)
	}
	return contents
}

// Without an LLM, what the rules read in a user's turn is in /v1/context
// within a second of the turn's acknowledgement: no quiet gap, no end of
// session. The session's end later extracts the turn again as a batch,
// and that neither copies the memory nor counts the same rules twice as
// more evidence for it.
func TestMemoriesAtOnce(t *testing.T) {
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	mustAccept(t, postEvent(t, a, turnEvent("coffee-0", "lilei", "s-42", 0, "user", coffeeTurn)))
	acked := time.Now()
	deadline := acked.Add(time.Second)
	var got []string
	for {
		got = contextMemories(t, a, "lilei", coffeeQuery)
		if strings.Contains(strings.Join(got, "\n"), "美式咖啡") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("1 s after the ack, /v1/context's memories are %q: the coffee memory is not there", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("the coffee memory was in /v1/context %v after the ack", time.Since(acked).Round(time.Millisecond))

	before := listMemories(t, a, "lilei", "")
	mustAccept(t, postEvent(t, a, endEvent("coffee-end", "lilei", "s-42", 1)))
	waitSettled(t, a)
	if n := countUnextracted(t, a); n != 0 {
		t.Fatalf("%d turns never extracted after the session's end", n)
	}
	after := listMemories(t, a, "lilei", "")
	if len(after) != len(before) {
		t.Fatalf("the session's end changed the memories from %d to %d:\nbefore %+v\nafter %+v", len(before), len(after), before, after)
	}
	for i := range before {
		if before[i].ID != after[i].ID || before[i].Confidence != after[i].Confidence {
			t.Errorf("memory %q: id %s → %s, confidence %.2f → %.2f after the session's batch",
				before[i].Content, before[i].ID, after[i].ID, before[i].Confidence, after[i].Confidence)
		}
	}
	// The turn's reading is one event, whatever read it.
	if n := extractedEvents(t, a, "s-42"); n != 2 {
		t.Errorf("%d memory.extracted events for the session, want 2 (the turn's reading at once, the batch)", n)
	}
}

// extractedEvents counts the memory.extracted events of a session.
func extractedEvents(t *testing.T, a *App, session string) int {
	t.Helper()
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if err != nil {
			break
		}
		if !strings.HasSuffix(m.Subject, "."+events.TypeMemoryExtracted) {
			continue
		}
		var ce struct {
			Data events.MemoryExtracted `json:"data"`
		}
		if err := json.Unmarshal(m.Data, &ce); err != nil {
			t.Fatal(err)
		}
		if ce.Data.SessionID == session {
			n++
		}
	}
	return n
}

// POST /v1/events?wait=memories answers once the rules have read the
// turn, with the memories it produced, as Mem0's add() does; a turn that
// states nothing answers with none, at once.
func TestWaitMemories(t *testing.T) {
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	b, _ := json.Marshal(turnEvent("wait-0", "lilei", "s-1", 0, "user", coffeeTurn))
	r := do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events?wait=memories", "application/cloudevents+json", b, nil)
	if r.Status != http.StatusAccepted {
		t.Fatalf("status %d: %s", r.Status, r.Raw)
	}
	var resp struct {
		Results []struct {
			Extraction string
			Memories   []memory.Memory
		}
	}
	if err := json.Unmarshal([]byte(r.Raw), &resp); err != nil || len(resp.Results) != 1 {
		t.Fatalf("answer %s: %v", r.Raw, err)
	}
	res := resp.Results[0]
	var contents []string
	for _, m := range res.Memories {
		contents = append(contents, m.Content)
	}
	if res.Extraction != "done" || !strings.Contains(strings.Join(contents, "\n"), "美式咖啡") {
		t.Fatalf("extraction %q, memories %q; want done with the coffee memory: %s", res.Extraction, contents, r.Raw)
	}
	for _, m := range res.Memories {
		if m.ID == "" || m.Kind == "" || m.Status == "" {
			t.Errorf("memory without id, kind or status: %+v", m)
		}
	}

	// The answer's memories are readable at once.
	if got := contextMemories(t, a, "lilei", coffeeQuery); !strings.Contains(strings.Join(got, "\n"), "美式咖啡") {
		t.Fatalf("right after wait=memories, /v1/context's memories are %q", got)
	}

	start := time.Now()
	b, _ = json.Marshal([]any{turnEvent("wait-1", "lilei", "s-1", 1, "user", "好的，谢谢"),
		turnEvent("wait-2", "lilei", "s-1", 2, "assistant", "不客气。")})
	r = do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events?wait=memories", "application/cloudevents-batch+json", b, nil)
	if err := json.Unmarshal([]byte(r.Raw), &resp); err != nil || r.Status != http.StatusAccepted || len(resp.Results) != 2 {
		t.Fatalf("a batch with nothing to remember: %d %s", r.Status, r.Raw)
	}
	if got := []string{resp.Results[0].Extraction, resp.Results[1].Extraction}; got[0] != "done" || got[1] != "none" ||
		len(resp.Results[0].Memories) != 0 {
		t.Fatalf("extraction %q, memories %+v; want [done none] and none", got, resp.Results[0].Memories)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a turn with nothing to remember waited %v", d)
	}

	// An unknown wait is an error that says what is accepted.
	r = do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events?wait=forever", "application/cloudevents+json", b, nil)
	if r.Status != http.StatusBadRequest || !strings.Contains(r.Raw, "wait") {
		t.Fatalf("wait=forever: %d %s", r.Status, r.Raw)
	}
}

// With an LLM, the rules' memory is there at once and the batch still
// asks the model, which sees the rules' memory as known: it may restate
// it as an update (superseding it) and add what the rules missed.
func TestMemoriesAtOnceWithLLM(t *testing.T) {
	srv := llmtest.New(t)
	srv.Always(func(w http.ResponseWriter, c *llmtest.Call) {
		if !strings.Contains(c.Chat.Prompt(), "美式咖啡") {
			llmtest.OK(`{"facts":[]}`)(w, c)
			return
		}
		llmtest.OK(`{"facts":[{"subject":"user","predicate":"likes","content":"用户平时喜欢喝美式咖啡（不加糖）","kind":"preference",`+
			`"category":"config","importance":0.7,"confidence":0.95,"updates":true},`+
			`{"subject":"user","predicate":"location","content":"用户住在北京市朝阳区","kind":"identity","category":"identity",`+
			`"importance":0.8,"confidence":0.95,"updates":true}]}`)(w, c)
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	a := startApp(t, cfg, RoleAll)
	b, _ := json.Marshal(turnEvent("llm-0", "lilei", "s-1", 0, "user", coffeeTurn))
	r := do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events?wait=memories", "application/cloudevents+json", b, nil)
	if !strings.Contains(r.Raw, "美式咖啡") {
		t.Fatalf("with an LLM, wait=memories: %d %s", r.Status, r.Raw)
	}
	if n := srv.Calls(); n != 0 {
		t.Fatalf("the model was asked %d times before the session's batch", n)
	}
	mustAccept(t, postEvent(t, a, endEvent("llm-end", "lilei", "s-1", 1)))
	waitSettled(t, a)
	if srv.Calls() != 1 {
		t.Fatalf("the model was asked %d times for the session's batch, want 1", srv.Calls())
	}
	if p := srv.Requests()[0].Prompt(); !strings.Contains(p, "known facts") || !strings.Contains(p, "用户喜欢喝美式咖啡") {
		t.Errorf("the model did not see the rules' memory as known:\n%s", p)
	}
	likes := find(listMemories(t, a, "lilei", ""), "user", "likes")
	if len(likes) != 1 || likes[0].Source != "llm" || !strings.Contains(likes[0].Content, "不加糖") {
		t.Fatalf("after the batch, the active likes: %+v; want the model's, superseding the rules'", likes)
	}
	if n := countUnextracted(t, a); n != 0 {
		t.Fatalf("%d turns never extracted", n)
	}
}
