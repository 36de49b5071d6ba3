package llmextract_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/llmextract"
	"github.com/engramhq/engram/internal/memory"
)

func newExtractor(t *testing.T) (*llmextract.Extractor, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t)
	client, err := llm.New(srv.Config(), srv.HTTPClient())
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return &llmextract.Extractor{Client: client}, srv
}

func lastRequest(t *testing.T, srv *llmtest.Server) llmtest.ChatRequest {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the server received no chat request")
	}
	return reqs[len(reqs)-1]
}

func TestExtract(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	srv.Enqueue(llmtest.OK("<think>the user moved</think>\n```json\n" +
		`{"facts":[{"subject":"User","predicate":"location","content":"User lives in Porto","kind":"identity","category":"identity","importance":0.8,"confidence":0.95,"updates":true},` +
		`{"subject":"user","predicate":"likes","content":"User likes surfing","kind":"preferences","importance":"0.6"},` +
		`{"subject":"user","content":"no predicate"}]}` + "\n```"))
	turns := []llmextract.Turn{
		{Index: 1, Role: "user", Content: "I moved to Porto last week, I love surfing here."},
		{Index: 2, Role: "assistant", Content: "Nice! Porto has great waves."},
	}
	known := []llmextract.Known{{Subject: "user", Predicate: "location", Content: "User lives in Lisbon"}}
	res, err := x.Extract(t.Context(), turns, known, llmextract.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	want := []memory.Candidate{
		{Kind: memory.KindIdentity, Category: memory.CategoryIdentity, Subject: "user", Predicate: "location", Content: "User lives in Porto", Importance: 0.8, Confidence: 0.95, Updates: true},
		{Kind: memory.KindPreference, Category: memory.CategoryConfig, Subject: "user", Predicate: "likes", Content: "User likes surfing", Importance: 0.6, Confidence: 0.7},
	}
	if len(res.Candidates) != len(want) {
		t.Fatalf("got %d candidates %+v, want %d", len(res.Candidates), res.Candidates, len(want))
	}
	for i := range want {
		if res.Candidates[i] != want[i] {
			t.Errorf("candidate %d = %+v, want %+v", i, res.Candidates[i], want[i])
		}
	}
	if len(res.Problems) != 1 || !strings.HasPrefix(res.Problems[0], "item 2: missing predicate") {
		t.Errorf("problems %q", res.Problems)
	}
	if got, want := res.Calls, 1; got != want {
		t.Errorf("Calls = %d, want %d", got, want)
	}
	if got, want := res.Usage, srv.Usage(); got != want || got.PromptTokens == 0 {
		t.Errorf("Usage = %+v, server reported %+v", got, want)
	}
	if got, want := res.Model, llmtest.DefaultModel; got != want {
		t.Errorf("Model = %q, want %q", got, want)
	}
	req := lastRequest(t, srv)
	if !req.JSONMode() {
		t.Errorf("request did not ask for JSON mode: response_format %+v", req.ResponseFormat)
	}
	if got := len(req.Messages); got != 2 || req.Messages[0].Role != llm.RoleSystem || req.Messages[1].Role != llm.RoleUser {
		t.Errorf("request messages: %+v", req.Messages)
	}
	if !strings.Contains(req.LastUser(), "user | location | User lives in Lisbon") {
		t.Errorf("known fact missing from the prompt:\n%s", req.LastUser())
	}
	if !strings.Contains(req.LastUser(), "[1] user: I moved to Porto last week") {
		t.Errorf("turn missing from the prompt:\n%s", req.LastUser())
	}
}

// echoModel answers like a model that copies each user statement "X: Y"
// through as a fact, in whatever language it was said.
func echoModel(req llmtest.ChatRequest) string {
	re := regexp.MustCompile(`(?m)^\[\d+\] user: (.+)$`)
	var facts []map[string]any
	for _, m := range re.FindAllStringSubmatch(req.LastUser(), -1) {
		facts = append(facts, map[string]any{"subject": "user", "predicate": "note", "content": m[1], "kind": "事实", "category": "对话"})
	}
	out, _ := json.Marshal(map[string]any{"facts": facts})
	return string(out)
}

func TestExtractChineseStaysChinese(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	srv.Reply(echoModel)
	turns := []llmextract.Turn{
		{Index: 5, Role: "user", Content: "我叫李雷，住在杭州。"},
		{Index: 6, Role: "assistant", Content: "你好，李雷！"},
		{Index: 7, Role: "user", Content: "以后回答都用中文，  不要用表情符号。"},
	}
	res, err := x.Extract(t.Context(), turns, nil, llmextract.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	want := []string{"我叫李雷，住在杭州。", "以后回答都用中文， 不要用表情符号。"}
	if len(res.Candidates) != len(want) {
		t.Fatalf("got %+v, want %d candidates", res.Candidates, len(want))
	}
	for i, c := range res.Candidates {
		if c.Content != want[i] || c.Kind != memory.KindFact || c.Category != memory.CategoryConversation {
			t.Errorf("candidate %d = %+v, want content %q, fact, conversation", i, c, want[i])
		}
	}
}

func TestExtractSummarisesToolCalls(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	srv.Reply(func(llmtest.ChatRequest) string { return `{"facts":[]}` })
	result := "START " + strings.Repeat("log line with details\n", 480) + "DONE: 3 tests failed"
	if len(result) < 10_000 {
		t.Fatalf("test result is only %d bytes", len(result))
	}
	turns := []llmextract.Turn{{
		Index: 9, Role: "assistant", Content: "Running the suite.",
		ToolCalls:   []llmextract.ToolCall{{Name: "run_tests", Input: `{"command":"pytest -q tests/"}`}},
		ToolResults: []llmextract.ToolResult{{Content: result, IsError: true}},
	}}
	res, err := x.Extract(t.Context(), turns, nil, llmextract.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if len(res.Candidates) != 0 || res.Calls != 1 {
		t.Errorf("got %+v", res)
	}
	prompt := lastRequest(t, srv).LastUser()
	if !strings.Contains(prompt, "call run_tests(pytest -q tests/) -> ERROR: START log line") || !strings.Contains(prompt, "DONE: 3 tests failed") {
		t.Errorf("tool call not summarised:\n%s", prompt)
	}
	if strings.Count(prompt, "log line with details") > 6 || len(prompt) > 1000 {
		t.Errorf("prompt carries the tool result (%d bytes):\n%s", len(prompt), prompt)
	}
}

func TestExtractChecksUpdates(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	srv.Enqueue(llmtest.OK(`{"facts":[` +
		`{"subject":"user","predicate":"location","content":"用户搬到了杭州","updates":true},` +
		`{"subject":"user","predicate":"employer","content":"用户在阿里巴巴工作","updates":true}]}`))
	known := []llmextract.Known{{Subject: "User", Predicate: "Location", Content: "用户住在上海"}}
	turns := []llmextract.Turn{{Index: 1, Role: "user", Content: "我搬到杭州了，现在在阿里巴巴工作。"}}
	res, err := x.Extract(t.Context(), turns, known, llmextract.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if len(res.Candidates) != 2 || !res.Candidates[0].Updates || res.Candidates[1].Updates {
		t.Fatalf("updates flags: %+v", res.Candidates)
	}
	if len(res.Problems) != 1 || !strings.Contains(res.Problems[0], "updates no listed fact") {
		t.Errorf("problems %q", res.Problems)
	}
}

func TestExtractClientErrors(t *testing.T) {
	t.Parallel()
	turns := []llmextract.Turn{{Index: 1, Role: "user", Content: "I use Go."}}
	for _, tc := range []struct {
		name string
		step llmtest.Step
		kind llm.ErrorKind
		temp bool
	}{
		{"server error", llmtest.Status(http.StatusInternalServerError, ""), llm.Server, true},
		{"rate limited", llmtest.RateLimit(0), llm.RateLimited, true},
		{"bad gateway", llmtest.Status(http.StatusBadGateway, ""), llm.Server, true},
		{"auth", llmtest.Status(http.StatusUnauthorized, ""), llm.Auth, false},
		{"body cut short", llmtest.BrokenJSON(), llm.BadResponse, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, srv := newExtractor(t)
			srv.Enqueue(tc.step)
			res, err := x.Extract(t.Context(), turns, nil, llmextract.Options{})
			if res != nil {
				t.Errorf("result %+v returned with an error", res)
			}
			e, ok := err.(*llm.Error) //nolint:errorlint // it must come as the client made it, not wrapped
			if !ok {
				t.Fatalf("error %T %v, want *llm.Error as it came", err, err)
			}
			if e.Kind != tc.kind || e.Temporary() != tc.temp {
				t.Errorf("error kind %v temporary %v, want %v %v", e.Kind, e.Temporary(), tc.kind, tc.temp)
			}
			if errors.Is(err, llmextract.ErrBadOutput) {
				t.Errorf("a client error matches ErrBadOutput")
			}
		})
	}
}

func TestExtractBadOutput(t *testing.T) {
	t.Parallel()
	turns := []llmextract.Turn{{Index: 1, Role: "user", Content: "I use Go."}}
	for _, tc := range []struct {
		name, reply, finish string
		is                  error
	}{
		{"prose", "Sorry, I can't help with that.", "stop", llm.ErrNoJSON},
		{"wrong shape", `{"answer":"Go"}`, "stop", nil},
		{"nothing usable", `{"facts":[{"content":"uses Go"}]}`, "stop", nil},
		{"cut before any item", `{"facts":[{"subject":"go","predicate":"us`, "length", llm.ErrNoJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, srv := newExtractor(t)
			srv.Enqueue(llmtest.Completion(tc.reply, tc.finish))
			_, err := x.Extract(t.Context(), turns, nil, llmextract.Options{})
			if !errors.Is(err, llmextract.ErrBadOutput) {
				t.Fatalf("error %v, want ErrBadOutput", err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			var oe *llmextract.OutputError
			if !errors.As(err, &oe) {
				t.Fatalf("error %T is not an *OutputError", err)
			}
			if oe.Usage != srv.Usage() || oe.Usage.TotalTokens == 0 || oe.FinishReason != tc.finish || oe.Model != llmtest.DefaultModel {
				t.Errorf("OutputError %+v; server usage %+v", oe, srv.Usage())
			}
			if strings.Contains(err.Error(), "uses Go") {
				t.Errorf("error quotes the reply: %v", err)
			}
		})
	}
}

func TestExtractKeepsItemsOfCutReply(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	srv.Enqueue(llmtest.Completion(`{"facts":[{"subject":"go","predicate":"version","content":"Project uses Go 1.26"},{"subject":"user","predicate":"na`, "length"))
	res, err := x.Extract(t.Context(), []llmextract.Turn{{Index: 1, Role: "user", Content: "We're on Go 1.26. My name is Ana."}}, nil, llmextract.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if len(res.Candidates) != 1 || res.Candidates[0].Content != "Project uses Go 1.26" || len(res.Problems) != 1 {
		t.Errorf("got %+v, problems %q", res.Candidates, res.Problems)
	}
}

func TestExtractNothingToSay(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	res, err := x.Extract(t.Context(), []llmextract.Turn{{Index: 1, Role: "assistant", Content: "  "}}, nil, llmextract.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if res.Calls != 0 || len(res.Candidates) != 0 || srv.Calls() != 0 {
		t.Errorf("result %+v after %d server calls, want no call", res, srv.Calls())
	}
	if _, err := (&llmextract.Extractor{}).Extract(t.Context(), []llmextract.Turn{{Role: "user", Content: "hi"}}, nil, llmextract.Options{}); err == nil {
		t.Errorf("Extract without a client returned no error")
	}
}

func TestExtractReportsOmittedTurns(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	srv.Reply(func(llmtest.ChatRequest) string { return `{"facts":[]}` })
	var turns []llmextract.Turn
	for i := range 30 {
		turns = append(turns, llmextract.Turn{Index: i, Role: "user", Content: fmt.Sprintf("turn %d %s", i, strings.Repeat("blah ", 60))})
	}
	res, err := x.Extract(t.Context(), turns, nil, llmextract.Options{MaxInputTokens: 1200})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if len(res.Omitted) == 0 || res.Omitted[0] != 0 {
		t.Fatalf("Omitted = %v, want the oldest turns", res.Omitted)
	}
	prompt := lastRequest(t, srv).LastUser()
	last := res.Omitted[len(res.Omitted)-1]
	if strings.Contains(prompt, fmt.Sprintf("[%d] user", last)) || !strings.Contains(prompt, fmt.Sprintf("[%d] user", last+1)) {
		t.Errorf("omitted up to %d, prompt:\n%s", last, prompt)
	}
}

// TestExtractTypicalBatchUsage reports what the server billed for a
// 20-turn batch. llmtest counts a token per four bytes, which overcounts
// Chinese text (three bytes a character) against real tokenizers.
func TestExtractTypicalBatchUsage(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	srv.Reply(echoModel)
	turns := make([]llmextract.Turn, 20)
	for i := range turns {
		turns[i] = llmextract.Turn{Index: i, Role: []string{"user", "assistant"}[i%2], Content: strings.Repeat("a typical sentence in a chat. ", 5)}
	}
	res, err := x.Extract(t.Context(), turns, nil, llmextract.Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	t.Logf("20 turns of ~38 tokens: server counted %d prompt + %d completion tokens (%.1f per turn)",
		res.Usage.PromptTokens, res.Usage.CompletionTokens, float64(res.Usage.TotalTokens)/20)
	if got := len(res.Candidates); got != 1 { // the echo model's ten identical facts collapse into one
		t.Errorf("got %d candidates, want 1 after dedupe", got)
	}
}

// Each fact is said when the turn the model names was; a fact that names
// no turn sent is said by the newest turn sent.
func TestExtractSaidAtTheTurnNamed(t *testing.T) {
	t.Parallel()
	x, srv := newExtractor(t)
	srv.Enqueue(llmtest.OK(`{"facts":[` +
		`{"subject":"user","predicate":"location","content":"User lives in Lisbon","kind":"identity","turn":3},` +
		`{"subject":"user","predicate":"location","content":"用户搬到了北京","kind":"identity","updates":true,"turn":"[5]"},` +
		`{"subject":"user","predicate":"likes","content":"User likes tea","kind":"preference"},` +
		`{"subject":"user","predicate":"likes","content":"User likes jazz","kind":"preference","turn":9}]}`))
	day := time.Date(2025, 11, 1, 9, 0, 0, 0, time.UTC)
	turns := []llmextract.Turn{
		{Index: 3, Role: "user", Content: "I live in Lisbon.", Time: day},
		{Index: 4, Role: "assistant", Content: "Noted.", Time: day.Add(time.Minute)},
		{Index: 5, Role: "user", Content: "我搬到北京了。", Time: day.Add(24 * time.Hour)},
		{Index: 6, Role: "assistant", Content: "好的。", Time: day.Add(24*time.Hour + time.Minute)},
	}
	known := []llmextract.Known{{Subject: "user", Predicate: "location", Content: "User lives in Lisbon"}}
	res, err := x.Extract(t.Context(), turns, known, llmextract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{day, day.Add(24 * time.Hour), day.Add(24*time.Hour + time.Minute), day.Add(24*time.Hour + time.Minute)}
	if len(res.Candidates) != len(want) {
		t.Fatalf("%d candidates, want %d: %+v", len(res.Candidates), len(want), res.Candidates)
	}
	for i, c := range res.Candidates {
		if !c.SaidAt.Equal(want[i]) {
			t.Errorf("%q said at %v, want %v", c.Content, c.SaidAt, want[i])
		}
	}
	if !slices.ContainsFunc(res.Problems, func(p string) bool { return strings.Contains(p, "turn 9 was not sent") }) {
		t.Errorf("problems %q do not name the turn that was not sent", res.Problems)
	}
}

// The prompt asks for the turn of each fact and for updates in both
// languages, and shows a known fact's topic so an update can copy it.
func TestPromptAsksForTurnsAndUpdates(t *testing.T) {
	t.Parallel()
	msgs := llmextract.Prompt([]llmextract.Turn{{Index: 1, Role: "user", Content: "我现在改喝茶了"}},
		[]llmextract.Known{{Subject: "user", Predicate: "likes", Content: "用户喜欢喝咖啡", Topic: "drinks"}}, llmextract.Options{})
	for _, want := range []string{`"turn"`, "updates", "no longer", "instead", "不再", "换成", "迁移", "升级", "topic"} {
		if !strings.Contains(msgs[0].Content, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if !strings.Contains(msgs[1].Content, "user | likes | 用户喜欢喝咖啡 (topic drinks)\n") {
		t.Errorf("known fact without its topic:\n%s", msgs[1].Content)
	}
}
