package episode

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// Issue 10: the outcome is read from what the user says, in both
// languages, and the goal is the task, not the greeting or introduction.
func TestOutcomeFromTheUsersWords(t *testing.T) {
	t.Parallel()
	bash := ToolCall{ID: "1", Name: "bash", Input: `{"command":"go test ./..."}`}
	bad := ToolResult{ToolCallID: "1", Content: "--- FAIL: TestPay", IsError: true}
	ok := ToolResult{ToolCallID: "1", Content: "ok"}
	for _, tc := range []struct {
		name  string
		turns []Turn
		want  string
	}{
		{"resolved, english", []Turn{user(1, "The payments test is flaky, can you look?"), callTurn(2, "Try adding a mutex around the map.", bash),
			resultTurn(3, ok), assistant(4, "I added a mutex around the shared map."), user(5, "That fixed it, thanks!")}, memory.OutcomeCompleted},
		{"resolved, chinese", []Turn{user(1, "支付测试老是失败，帮我看看"), callTurn(2, "我加了一个锁。", bash), resultTurn(3, ok),
			assistant(4, "我在共享的 map 外面加了锁。"), user(5, "问题解决了，谢谢")}, memory.OutcomeCompleted},
		{"resolved after an error, english", []Turn{user(1, "The payments test is flaky."), callTurn(2, "", bash), resultTurn(3, bad),
			assistant(4, "Try running it with -race and adding the lock I suggested."), user(5, "Works now.")}, memory.OutcomeCompleted},
		{"resolved, then the agent says goodbye", []Turn{user(1, "Fix the flaky test."), callTurn(2, "", bash), resultTurn(3, ok),
			assistant(4, "Added the lock."), user(5, "That worked."), assistant(6, "Glad to help.")}, memory.OutcomeCompleted},
		{"failed, english", []Turn{user(1, "The payments test is flaky, can you look?"), callTurn(2, "", bash), resultTurn(3, ok),
			assistant(4, "I added a mutex, it should pass now."), user(5, "Still broken, same error.")}, memory.OutcomeFailed},
		{"failed, chinese", []Turn{user(1, "支付测试老是失败，帮我看看"), callTurn(2, "", bash), resultTurn(3, ok),
			assistant(4, "我加了锁，现在应该好了。"), user(5, "还是不行，报同样的错。")}, memory.OutcomeFailed},
		{"abandoned, chinese", []Turn{user(1, "帮我把日志接到 Loki"), assistant(2, "需要先装 promtail。"), user(3, "算了不弄了")}, memory.OutcomeAbandoned},
		{"abandoned, english", []Turn{user(1, "Wire the logs into Loki."), assistant(2, "We need promtail first."), user(3, "Forget it, not worth it.")}, memory.OutcomeAbandoned},
		{"ongoing, english", []Turn{user(1, "The payments test is flaky, can you look?"), callTurn(2, "", bash), resultTurn(3, ok),
			assistant(4, "I added a mutex."), user(5, "Can you also check the refund test?")}, memory.OutcomeOngoing},
		{"ongoing, chinese", []Turn{user(1, "支付测试老是失败，帮我看看"), callTurn(2, "", bash), resultTurn(3, ok),
			assistant(4, "我加了锁。"), user(5, "退款的测试也帮我看一下？")}, memory.OutcomeOngoing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Extractive(Input{Turns: tc.turns}).Outcome; got != tc.want {
				t.Fatalf("outcome %q, want %q", got, tc.want)
			}
		})
	}
}

func TestGoalIsTheTaskNotTheIntroduction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		turns []Turn
		want  string
	}{
		{"english intro turn, then the task", []Turn{user(1, "Hi! I'm Ana, a backend developer at Acme."), assistant(2, "Hi Ana, how can I help?"),
			user(3, "The payments-api build fails on CI, can you help me fix it?")}, "The payments-api build fails on CI"},
		{"english intro and task in one turn", []Turn{user(1, "Hello, my name is Tom. I work at Shopify. Please help me speed up our Postgres queries.")},
			"Please help me speed up our Postgres queries."},
		{"chinese intro turn, then the task", []Turn{user(1, "你好，我叫王磊，在字节跳动做后端。"), assistant(2, "你好王磊，有什么可以帮你？"),
			user(3, "帮我排查一下 payments-api 的内存泄漏。")}, "帮我排查一下 payments-api 的内存泄漏"},
		{"chinese greeting, then the task", []Turn{user(1, "你好"), user(2, "我是张伟。帮我把服务迁到 Kubernetes。")}, "帮我把服务迁到 Kubernetes"},
		{"only an introduction", []Turn{user(1, "Hi, I'm Ana.")}, "I'm Ana"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Extractive(Input{Turns: tc.turns}).Goal
			if !strings.Contains(got, tc.want) {
				t.Fatalf("goal %q, want it to hold %q", got, tc.want)
			}
			if tc.name != "only an introduction" && (strings.Contains(got, "Ana") || strings.Contains(got, "王磊") || strings.Contains(got, "Tom")) {
				t.Fatalf("goal %q holds the introduction", got)
			}
		})
	}
}

// The scratchpad is markdown a person can read and edit: a heading per
// section on its own line, one list item per line.
func TestScratchpadIsMarkdown(t *testing.T) {
	t.Parallel()
	in := Input{Turns: []Turn{user(1, "Hi, I'm Ana."), user(2, "Fix the flaky payments-api test."),
		assistant(3, "Added a lock; next I will add a regression test."), user(4, "That fixed it.")}}
	ep := Extractive(in)
	ep.ID, ep.Ended = "e1", time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ep.Entities = append(ep.Entities, "project:payments-api")
	pad := UpdateScratchpad(memory.Scratchpad{}, ep, ep.Ended.Add(time.Hour))
	lines := strings.Split(pad.Content, "\n")
	headings, items := 0, 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "## "):
			headings++
		case strings.HasPrefix(l, "- "):
			items++
		}
		if strings.Contains(l, "## ") && !strings.HasPrefix(l, "## ") {
			t.Fatalf("a heading inside a line %q: the markdown was squashed:\n%s", l, pad.Content)
		}
	}
	if headings < 2 || items < 2 {
		t.Fatalf("%d headings and %d items on their own lines, want ≥ 2 each:\n%s", headings, items, pad.Content)
	}
	if strings.Contains(pad.CurrentFocus, "Ana") || !strings.Contains(pad.Content, "flaky payments-api test") {
		t.Fatalf("focus %q: want the task, not the introduction:\n%s", pad.CurrentFocus, pad.Content)
	}
}
