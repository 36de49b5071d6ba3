package episode

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/memory"
)

func TestExtractiveIsDeterministic(t *testing.T) {
	t.Parallel()
	for _, tc := range goldenSessions {
		t.Run(tc.name, func(t *testing.T) {
			a, b := Extractive(tc.in()), Extractive(tc.in())
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
			}
			// Turns are read in Index order whatever order they come in.
			in := tc.in()
			slices.Reverse(in.Turns)
			if c := Extractive(in); !reflect.DeepEqual(a, c) {
				t.Fatalf("reversed turns give another episode:\n%+v\n%+v", a, c)
			}
		})
	}
}

func user(i int, text string) Turn      { return Turn{Index: i, Role: "user", Content: text} }
func assistant(i int, text string) Turn { return Turn{Index: i, Role: "assistant", Content: text} }

func callTurn(i int, text string, calls ...ToolCall) Turn {
	return Turn{Index: i, Role: "assistant", Content: text, ToolCalls: calls}
}

func resultTurn(i int, results ...ToolResult) Turn {
	return Turn{Index: i, Role: "tool", ToolResults: results}
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	bash := ToolCall{ID: "1", Name: "bash", Input: `{"command":"make"}`}
	ok := ToolResult{ToolCallID: "1", Content: "ok"}
	bad := ToolResult{ToolCallID: "1", Content: "make: *** [all] Error 2", IsError: true}
	for _, tc := range []struct {
		name  string
		turns []Turn
		want  string
	}{
		{"done cue", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "Done, the build is green.")}, memory.OutcomeCompleted},
		{"chinese done cue", []Turn{user(1, "帮我编译一下"), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "已经编译好了。")}, memory.OutcomeCompleted},
		{"thanks after done", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "Fixed and deployed."), user(5, "thanks!")}, memory.OutcomeCompleted},
		{"failure cue blocks done", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "Done building, but the upload failed.")}, memory.OutcomeOngoing},
		{"chinese failure cue blocks done", []Turn{user(1, "帮我编译一下"), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "已经编译，但上传失败。")}, memory.OutcomeOngoing},
		{"partial", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "It is partially done: the server builds, the client does too.")}, memory.OutcomePartial},
		{"last tool failed", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, bad), assistant(4, "Done.")}, memory.OutcomeFailed},
		{"failed then fixed", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, bad),
			callTurn(4, "", ToolCall{ID: "2", Name: "bash"}), resultTurn(5, ToolResult{ToolCallID: "2", Content: "ok"}), assistant(6, "All tests pass now.")}, memory.OutcomeCompleted},
		{"user spoke last", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "Done."), user(5, "Now deploy it to prod as well.")}, memory.OutcomeOngoing},
		{"abandoned", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, bad), user(4, "Never mind, I'll do it later.")}, memory.OutcomeAbandoned},
		{"abandoned beats done", []Turn{user(1, "Build it please."), assistant(2, "Done."), user(3, "forget it"), assistant(4, "OK.")}, memory.OutcomeAbandoned},
		{"abandoned chinese", []Turn{user(1, "帮我编译一下"), assistant(2, "要用哪个分支？"), user(3, "算了")}, memory.OutcomeAbandoned},
		{"bare stop", []Turn{user(1, "Build it please."), callTurn(2, "", bash), user(3, "Stop!")}, memory.OutcomeAbandoned},
		{"stop inside a request is not abandon", []Turn{user(1, "Stop using tabs in the config and build it."), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "Done.")}, memory.OutcomeCompleted},
		{"question answered", []Turn{user(1, "What is NATS?"), assistant(2, "A messaging system written in Go.")}, memory.OutcomeCompleted},
		{"question answered chinese", []Turn{user(1, "NATS 是什么？"), assistant(2, "一个用 Go 写的消息系统。")}, memory.OutcomeCompleted},
		{"assistant asks back", []Turn{user(1, "Set up the database."), assistant(2, "Which engine do you want, SQLite or Postgres?")}, memory.OutcomeOngoing},
		{"question unanswered", []Turn{user(1, "What is NATS?")}, memory.OutcomeOngoing},
		{"tools and no cue", []Turn{user(1, "Build it please."), callTurn(2, "", bash), resultTurn(3, ok), assistant(4, "The build printed three warnings.")}, memory.OutcomeOngoing},
		{"empty", nil, memory.OutcomeOngoing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Extractive(Input{SessionID: "s", Turns: tc.turns}).Outcome; got != tc.want {
				t.Fatalf("Outcome = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestGoal(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 60) // one sentence of 300 runes
	for _, tc := range []struct {
		name  string
		turns []Turn
		want  string
	}{
		{"skips greetings and acknowledgements", []Turn{user(1, "hi"), assistant(2, "Hello!"), user(3, "ok thanks"), user(4, "Please rotate the API keys.")}, "Please rotate the API keys."},
		{"drops a leading greeting", []Turn{user(1, "Hi, can you rotate the API keys?")}, "can you rotate the API keys?"},
		{"drops a leading greeting sentence", []Turn{user(1, "你好！帮我轮换一下 API 密钥。")}, "帮我轮换一下 API 密钥。"},
		{"whole sentences within the limit", []Turn{user(1, "Rotate the keys. "+long)}, "Rotate the keys."},
		{"one long sentence is cut", []Turn{user(1, long)}, strings.TrimSpace(long[:199*1]) + "…"},
		{"no user turn", []Turn{assistant(1, "I rotated the keys.")}, ""},
		{"folds whitespace", []Turn{user(1, "Rotate\n\tthe   keys")}, "Rotate the keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Extractive(Input{Turns: tc.turns}).Goal
			if tc.name == "one long sentence is cut" {
				if n := utf8.RuneCountInString(got); n != MaxGoalRunes || !strings.HasSuffix(got, "…") {
					t.Fatalf("Goal is %d runes %q, want %d ending in …", n, got, MaxGoalRunes)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("Goal = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("agent summary when no user turn", func(t *testing.T) {
		in := Input{Turns: []Turn{assistant(1, "ok")}, Summary: "The user wants faster builds. We tried caching."}
		if got, want := Extractive(in).Goal, "The user wants faster builds. We tried caching."; got != want {
			t.Fatalf("Goal = %q, want %q", got, want)
		}
	})
}

func TestPairing(t *testing.T) {
	t.Parallel()
	type pairing struct {
		tool, result string
		success      bool
	}
	for _, tc := range []struct {
		name  string
		turns []Turn
		want  []pairing
	}{
		{"by id, out of order", []Turn{
			callTurn(1, "", ToolCall{ID: "a", Name: "read"}, ToolCall{ID: "b", Name: "grep"}),
			resultTurn(2, ToolResult{ToolCallID: "b", Content: "grep out"}, ToolResult{ToolCallID: "a", Content: "read out", IsError: true}),
		}, []pairing{{"read", "read out", false}, {"grep", "grep out", true}}},
		{"by position, no ids", []Turn{
			callTurn(1, "", ToolCall{Name: "read"}, ToolCall{Name: "grep"}),
			resultTurn(2, ToolResult{Content: "first"}, ToolResult{Content: "second"}),
		}, []pairing{{"read", "first", true}, {"grep", "second", true}}},
		{"by position across tool turns", []Turn{
			callTurn(1, "", ToolCall{Name: "read"}),
			{Index: 2, Role: "tool", Content: "first"},
			callTurn(3, "", ToolCall{Name: "grep"}),
			{Index: 4, Role: "tool", Content: "Error: no such file"},
		}, []pairing{{"read", "first", true}, {"grep", "Error: no such file", false}}},
		{"same turn, results answer calls in order", []Turn{
			{Index: 1, Role: "assistant", ToolCalls: []ToolCall{{Name: "a"}, {Name: "b"}}, ToolResults: []ToolResult{{Content: "ra"}, {Content: "rb"}}},
		}, []pairing{{"a", "ra", true}, {"b", "rb", true}}},
		{"id match is not stolen by a positional result", []Turn{
			callTurn(1, "", ToolCall{ID: "x", Name: "first"}, ToolCall{Name: "second"}),
			resultTurn(2, ToolResult{Content: "anonymous"}),
			resultTurn(3, ToolResult{ToolCallID: "x", Content: "for x"}),
		}, []pairing{{"first", "for x", true}, {"second", "anonymous", true}}},
		{"unknown id falls back to position", []Turn{
			callTurn(1, "", ToolCall{ID: "x", Name: "read"}),
			resultTurn(2, ToolResult{ToolCallID: "zzz", Content: "out"}),
		}, []pairing{{"read", "out", true}}},
		{"duplicate result dropped", []Turn{
			callTurn(1, "", ToolCall{ID: "x", Name: "read"}, ToolCall{ID: "y", Name: "grep"}),
			resultTurn(2, ToolResult{ToolCallID: "x", Content: "one"}, ToolResult{ToolCallID: "x", Content: "again"}),
		}, []pairing{{"read", "one", true}, {"grep", "", false}}},
		{"a result never answers a later call", []Turn{
			resultTurn(1, ToolResult{Content: "orphan"}),
			callTurn(2, "", ToolCall{Name: "read"}),
		}, []pairing{{"read", "", false}}},
		{"unnamed tool", []Turn{callTurn(1, "", ToolCall{Input: "x"})}, []pairing{{"unknown", "", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := Extractive(Input{Turns: tc.turns})
			var got []pairing
			for _, a := range ep.Actions {
				got = append(got, pairing{a.Tool, a.Result, a.Success})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("actions %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestActionNode(t *testing.T) {
	t.Parallel()
	ep := Extractive(Input{Turns: []Turn{
		callTurn(4, "", ToolCall{ID: "1", Name: "bash", Input: `{"timeout":30,"command":"go test ./...","description":"run tests"}`}),
		resultTurn(5, ToolResult{ToolCallID: "1", IsError: true, Content: "\n\n--- FAIL: TestX\nexpected 1, got 2\nFAIL"}),
	}})
	want := memory.ActionNode{
		Tool: "bash", Params: "command=go test ./...", Result: "--- FAIL: TestX expected 1, got 2 FAIL",
		Success: false, Error: "--- FAIL: TestX", Turn: 4,
	}
	if got := ep.Actions[0]; got != want {
		t.Fatalf("action = %+v, want %+v", got, want)
	}
}

func TestParams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"path":"a.go","content":"package a"}`, "path=a.go"},
		{`{"url":"https://x.org","query":"nats","path":"/p","command":"ls","extra":1}`, "path=/p command=ls query=nats"},
		{`{"Command":"ls -la"}`, "Command=ls -la"},
		{`{"a":1,"b":"two","c":true}`, "a=1 b=two"},
		{`{"a":{"nested":1},"b":[1,2],"c":"x"}`, "c=x"},
		{`{"path":null,"file":"b.go"}`, "file=b.go"},
		{"ls -la /tmp", "ls -la /tmp"},
		{"  multi\nline\tinput ", "multi line input"},
		{`[1,2,3]`, "[1,2,3]"},
		{`{"broken":`, `{"broken":`},
		{"", ""},
	} {
		if got := params(tc.in); got != tc.want {
			t.Errorf("params(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("长文本 with words, ", 100)
	turns := []Turn{user(0, big)}
	for i := range 300 {
		// Long payloads on a few calls; every call counts for the caps.
		text, payload := "", "x"
		if i%50 == 0 {
			text, payload = big, big
		}
		turns = append(turns,
			callTurn(2*i+1, text, ToolCall{ID: fmt.Sprint(i), Name: fmt.Sprintf("tool_%d_%s", i%60, big[:30]), Input: `{"command":"` + payload + `"}`}),
			resultTurn(2*i+2, ToolResult{ToolCallID: fmt.Sprint(i), IsError: i%3 == 0, Content: payload + "\n" + payload}))
	}
	for i := range 40 {
		turns[0].Content += fmt.Sprintf(" FooBar%d /srv/path%d/file.go", i, i)
	}
	ep := Extractive(Input{SessionID: "s", Turns: turns, Memories: slices.Repeat([]string{"m"}, 300)})
	checkLimits(t, ep)
	if got, want := len(ep.Actions), MaxToolActions; got != want {
		t.Fatalf("%d actions, want %d", got, want)
	}
	// The first and the last halves are kept.
	if first, last := ep.Actions[0].Turn, ep.Actions[len(ep.Actions)-1].Turn; first != 1 || last != 599 {
		t.Fatalf("actions run from turn %d to %d, want 1 to 599", first, last)
	}
	if got, want := len(ep.Tools), MaxTools; got != want {
		t.Fatalf("%d tools, want %d", got, want)
	}
	if got, want := len(ep.Entities), MaxEntities; got != want {
		t.Fatalf("%d entities, want %d", got, want)
	}
	if got, want := ep.LinkedMemories, []string{"m"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("linked %v, want %v", got, want)
	}
}

// checkLimits fails when any field of ep is over its limit, is not valid
// UTF-8 or holds a control character.
func checkLimits(t *testing.T, ep memory.Episode) {
	t.Helper()
	texts := map[string]int{"summary": MaxSummaryRunes, "goal": MaxGoalRunes}
	check := func(name, s string, limit int) {
		t.Helper()
		if !utf8.ValidString(s) {
			t.Fatalf("%s is not valid UTF-8: %q", name, s)
		}
		if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
			t.Fatalf("%s holds a control character: %q", name, s)
		}
		if n := utf8.RuneCountInString(s); n > limit {
			t.Fatalf("%s is %d runes, limit %d: %q", name, n, limit, s)
		}
	}
	check("summary", ep.Summary, texts["summary"])
	check("goal", ep.Goal, texts["goal"])
	if ep.Summary == "" {
		t.Fatalf("empty summary")
	}
	if len(ep.Actions) > MaxActions || len(ep.Entities) > MaxEntities || len(ep.Tools) > MaxTools || len(ep.LinkedMemories) > MaxLinked {
		t.Fatalf("too many: %d actions, %d entities, %d tools, %d linked", len(ep.Actions), len(ep.Entities), len(ep.Tools), len(ep.LinkedMemories))
	}
	for _, a := range ep.Actions {
		check("tool", a.Tool, maxToolNameRunes)
		check("params", a.Params, MaxParamsRunes)
		check("result", a.Result, MaxResultRunes)
		check("error", a.Error, MaxErrorRunes)
		check("decision", a.Decision, MaxResultRunes)
		if a.Tool == "" && a.Decision == "" {
			t.Fatalf("action with neither tool nor decision: %+v", a)
		}
	}
	for _, list := range [][]string{ep.Entities, ep.Tools} {
		seen := map[string]bool{}
		for _, e := range list {
			check("entity", e, MaxEntityRunes)
			if e == "" || len(e) > maxEntityBytes || seen[e] {
				t.Fatalf("bad or repeated entry %q in %q", e, list)
			}
			seen[e] = true
		}
	}
	if !(ep.Importance >= 0 && ep.Importance <= 1) {
		t.Fatalf("importance %v", ep.Importance)
	}
	if !slices.IsSorted(ep.Turns) || len(slices.Compact(slices.Clone(ep.Turns))) != len(ep.Turns) {
		t.Fatalf("turns %v not ascending and distinct", ep.Turns)
	}
	switch ep.Outcome {
	case memory.OutcomeCompleted, memory.OutcomePartial, memory.OutcomeFailed, memory.OutcomeAbandoned, memory.OutcomeOngoing:
	default:
		t.Fatalf("outcome %q", ep.Outcome)
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	t.Run("agent's summary wins", func(t *testing.T) {
		ep := Extractive(zhCompression())
		if got, want := ep.Summary, zhCompression().Summary; got != want {
			t.Fatalf("Summary = %q, want %q", got, want)
		}
	})
	t.Run("only sentences from the turns", func(t *testing.T) {
		for _, tc := range goldenSessions {
			in := tc.in()
			if in.Summary != "" {
				continue
			}
			var all strings.Builder
			for _, tr := range in.Turns {
				all.WriteString(clean(tr.Content) + " ")
				for _, r := range tr.ToolResults {
					all.WriteString(clean(r.Content) + " ")
				}
			}
			for _, s := range sentences(Extractive(in).Summary) {
				if !strings.Contains(all.String(), strings.TrimSuffix(s, "…")) {
					t.Errorf("%s: summary sentence %q is not in the turns", tc.name, s)
				}
			}
		}
	})
	t.Run("no text at all", func(t *testing.T) {
		ep := Extractive(Input{Turns: []Turn{callTurn(1, "", ToolCall{Name: "bash"}, ToolCall{Name: "grep"})}})
		if got, want := ep.Summary, "bash, grep"; got != want {
			t.Fatalf("Summary = %q, want %q", got, want)
		}
	})
}

func TestEntities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"paths", "Edit internal/auth/jwt.go and /etc/nginx/nginx.conf, then ~/bin/run and ./cmd. Also README.md but not and/or or TCP/IP or 3/4.",
			[]string{"internal/auth/jwt.go", "/etc/nginx/nginx.conf", "~/bin/run", "./cmd", "README.md", "TCP", "IP"}},
		{"hosts", "See https://github.com/nats-io/nats.go and http://Example.COM:8080/x?y=1.", []string{"github.com", "example.com"}},
		{"versions", "We use Python 3.12, Go 1.26, node 20 and Vue3; Step 2 and in 2024 are not tools.", []string{"Python 3.12", "Go 1.26", "node 20", "Vue3"}},
		{"code spans", "Run `make test` then `go vet ./...`.", []string{"make test", "go vet ./..."}},
		{"chinese quotes", "把「订单服务」和《用户手册》以及“灰度发布”整理一下", []string{"订单服务", "用户手册", "灰度发布"}},
		{"names", "The cache moved to Redis. We use NATS with JetStream and call parseToken. Monday we meet.",
			[]string{"Redis", "NATS", "JetStream", "parseToken"}},
		{"names in chinese text", "我们在用Redis和PostgreSQL做缓存", []string{"Redis", "PostgreSQL"}},
		{"sentence starts and log levels are not names", "Please check. Then ERROR and WARN lines. OK?", nil},
		{"dedupe, case-insensitively", "Redis, redis and REDIS; Redis again.", []string{"REDIS"}},
		{"version keeps its name out", "Python 3.12 is faster than old Python.", []string{"Python 3.12"}},
		{"fenced code is skipped", "Look:\n```go\nfunc FooBar() {}\n```\nthat is all.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Extractive(Input{Turns: []Turn{user(1, tc.text)}}).Entities
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("entities %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("projects first, most recent first; tool inputs give paths", func(t *testing.T) {
		ep := Extractive(Input{Turns: []Turn{
			{Index: 1, Role: "user", Content: "Look at Redis.", Project: "old"},
			{Index: 2, Role: "assistant", Project: "new", ToolCalls: []ToolCall{{Name: "read", Input: `{"path":"src/main.rs","url":"https://docs.rs/x"}`}}},
			{Index: 3, Role: "tool", Content: "NotAnEntity in tool output", Project: "new"},
		}})
		want := []string{"project:new", "project:old", "src/main.rs", "docs.rs", "Redis"}
		if !reflect.DeepEqual(ep.Entities, want) {
			t.Fatalf("entities %q, want %q", ep.Entities, want)
		}
	})
}

func TestProjects(t *testing.T) {
	t.Parallel()
	ep := memory.Episode{
		Goal:     "Ship the Atlas project and clean up the 星河项目.",
		Summary:  "We touched the engram repo and Redis.",
		Entities: []string{"project:engram", "Atlas", "星河", "Redis", "engram", "src/x.go"},
	}
	if got, want := Projects(ep), []string{"engram", "Atlas", "星河"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Projects = %q, want %q", got, want)
	}
}

func TestID(t *testing.T) {
	t.Parallel()
	a := ID("s1", []int{3, 1, 2, 2})
	if b := ID("s1", []int{1, 2, 3}); a != b {
		t.Fatalf("ID depends on order or repeats: %s vs %s", a, b)
	}
	if b := ID("s2", []int{1, 2, 3}); a == b {
		t.Fatalf("two sessions share ID %s", a)
	}
	if b := ID("s1", []int{1, 2}); a == b {
		t.Fatalf("two turn sets share ID %s", a)
	}
	if b := ID("s1", []int{12, 3}); b == ID("s1", []int{1, 23}) {
		t.Fatalf("ambiguous turn encoding")
	}
	if !strings.HasPrefix(a, "ep_") || len(a) != 23 {
		t.Fatalf("ID %q", a)
	}
	if got := Extractive(enQA()).ID; got != ID("sess-en-3", []int{1, 2, 3, 4}) {
		t.Fatalf("episode ID %s is not ID(session, turns)", got)
	}
}

func TestImportance(t *testing.T) {
	t.Parallel()
	fix, qa := Extractive(enFixDeploy()).Importance, Extractive(enQA()).Importance
	if !(fix > qa) {
		t.Fatalf("a working session with a fix (%v) should outrank a short Q&A (%v)", fix, qa)
	}
	if got := Extractive(Input{}).Importance; got != 0.1 {
		t.Fatalf("empty session importance %v, want 0.1", got)
	}
}

func TestSource(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": SourceSessionEnd, "compression": SourceCompression, "sweep": SourceSweep, "bogus": SourceSessionEnd} {
		if got := Extractive(Input{Source: in}).Source; got != want {
			t.Errorf("Source(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkExtractive(b *testing.B) {
	in := enFixDeploy()
	for b.Loop() {
		Extractive(in)
	}
}

func BenchmarkUpdateScratchpad(b *testing.B) {
	ep := Extractive(enFixDeploy())
	prev := UpdateScratchpad(memory.Scratchpad{}, Extractive(zhFixDeploy()), day(0))
	for b.Loop() {
		UpdateScratchpad(prev, ep, day(1))
	}
}
