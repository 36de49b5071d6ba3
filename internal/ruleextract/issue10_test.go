package ruleextract

import (
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

// The defects issue 10 lists, one subtest each; each failed before the fix.
func TestIssue10Defects(t *testing.T) {
	t.Parallel()
	has := func(t *testing.T, got []memory.Candidate, kind memory.Kind, subject, pred, content string) memory.Candidate {
		t.Helper()
		for _, c := range got {
			if c.Kind == kind && c.Subject == subject && c.Predicate == pred && strings.Contains(c.Content, content) {
				return c
			}
		}
		t.Fatalf("no %s %s/%s containing %q; got:%s", kind, subject, pred, content, format(got))
		return memory.Candidate{}
	}
	none := func(t *testing.T, got []memory.Candidate, pred string) {
		t.Helper()
		for _, c := range got {
			if c.Predicate == pred {
				t.Fatalf("got a %s candidate %q, want none; all:%s", pred, c.Content, format(got))
			}
		}
	}
	user := func(s string) []memory.Candidate { return Extract(Input{Role: "user", Content: s}) }

	t.Run("README's coffee example keeps both facts", func(t *testing.T) {
		got := user("我住在北京市朝阳区，平时喜欢喝美式咖啡。")
		has(t, got, memory.KindIdentity, "user", PredLocation, "北京市朝阳区")
		has(t, got, memory.KindPreference, "user", PredLikes, "喜欢喝美式咖啡")
	})
	t.Run("a correction names the right value and updates", func(t *testing.T) {
		got := user("Correction: my name is Anna, not Ana.")
		c := has(t, got, memory.KindIdentity, "user", PredName, "Anna")
		if !c.Updates || c.Confidence < 0.85 || len(got) != 1 {
			t.Fatalf("got:%s, want one name=Anna that updates, written at once", format(got))
		}
	})
	t.Run("a project's version said in Chinese, then superseded", func(t *testing.T) {
		old := has(t, user("我们的项目 myclaw 用 Python 3.10"), memory.KindFact, "python", PredVersion, "Python 3.10")
		now := has(t, user("myclaw 已经升级到 Python 3.12 了"), memory.KindFact, "python", PredVersion, "3.12")
		if old.Subject != now.Subject || old.Predicate != now.Predicate || !SingleValued(now.Predicate) {
			t.Fatalf("3.10 (%s/%s) and 3.12 (%s/%s) must share a single-valued key", old.Subject, old.Predicate, now.Subject, now.Predicate)
		}
	})
	t.Run("employer with a city before it", func(t *testing.T) {
		has(t, user("我在杭州的阿里巴巴上班"), memory.KindIdentity, "user", PredEmployer, "阿里巴巴")
		got := user("我叫王磊，在杭州的阿里巴巴上班。")
		has(t, got, memory.KindIdentity, "user", PredName, "王磊")
		has(t, got, memory.KindIdentity, "user", PredEmployer, "阿里巴巴")
	})
	t.Run("a daily habit is a preference", func(t *testing.T) {
		has(t, user("我每天早上喝一杯拿铁"), memory.KindPreference, "user", PredLikes, "拿铁")
	})
	t.Run("a plan is not stored as done", func(t *testing.T) {
		got := user("星河商城下周要升级到 Next.js 15")
		none(t, got, PredVersion)
		none(t, got, PredUses)
		c := has(t, got, memory.KindContext, "project", PredPlan, "下周要升级到 Next.js 15")
		for _, s := range []string{"我们打算升级到 Go 1.27", "We're upgrading the storefront to Next.js 15 next week."} {
			got := user(s)
			none(t, got, PredVersion)
			has(t, got, memory.KindContext, "project", PredPlan, "")
		}
		if c.Importance >= memory.ImportantAt {
			t.Fatalf("plan importance %.2f: a plan must not reach the core profile", c.Importance)
		}
	})
	t.Run("a rule is kept whole", func(t *testing.T) {
		for _, s := range []string{"Rule: never push directly to main; open a pull request.", "Never push directly to main; open a pull request."} {
			has(t, user(s), memory.KindRule, "user", PredRule, "open a pull request")
		}
	})
	t.Run("VS Code is one tool", func(t *testing.T) {
		has(t, user("我用 VS Code 写代码。"), memory.KindFact, "vscode", PredUses, "VS Code")
		has(t, user("I use VS Code with the Vim extension."), memory.KindFact, "vscode", PredUses, "VS Code")
	})
	t.Run("a failed tool call is an error memory", func(t *testing.T) {
		got := Extract(Input{Role: "assistant", Content: "Installing dependencies.",
			ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Input: `{"command":"npm install"}`}},
			ToolResults: []ToolResult{{ToolCallID: "c1", IsError: true,
				Content: "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"}}})
		c := has(t, got, memory.KindError, "npm", PredError, "ERESOLVE unable to resolve dependency tree")
		if !strings.Contains(c.Content, "npm install") {
			t.Fatalf("error memory %q does not say what ran", c.Content)
		}
		ok := Extract(Input{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Input: `{"command":"npm install"}`}},
			ToolResults: []ToolResult{{ToolCallID: "c1", Content: "added 12 packages"}}})
		none(t, ok, PredError)
	})
}

// Phrasings the benchmark covers, as unit tests: what they yield, and what
// must yield nothing.
func TestIssue10Phrasings(t *testing.T) {
	t.Parallel()
	user := func(s string) []memory.Candidate { return Extract(Input{Role: "user", Content: s}) }
	for _, tc := range []struct {
		in   string
		want []want
	}{
		{"Hi! I'm Priya, a product designer based in Bangalore.", []want{{PredName, "user", "Priya"},
			{PredOccupation, "user", "product designer"}, {PredLocation, "user", "Bangalore"}}},
		{"我叫王磊，在字节跳动做后端开发。", []want{{PredName, "user", "王磊"}, {PredEmployer, "user", "字节跳动"}, {PredOccupation, "user", "后端开发"}}},
		{"前端 Next.js 14，后端 FastAPI，向量库用 Qdrant。", []want{{PredVersion, "next.js", "Next.js 14"}, {PredUses, "fastapi", "FastAPI"}, {PredUses, "qdrant", "Qdrant"}}},
		{"我在 Ubuntu 22.04 上开发。", []want{{PredVersion, "ubuntu", "Ubuntu 22.04"}}},
		{"I love hiking and I drink oat milk lattes every morning.", []want{{PredLikes, "user", "hiking"}, {PredLikes, "user", "oat milk lattes every morning"}}},
		{"我从来不喝咖啡。", []want{{PredDislikes, "user", "喝咖啡"}}},
		{"I no longer drink coffee.", []want{{PredDislikes, "user", "coffee"}}},
		{"Our team prefers squash merges.", []want{{PredPrefers, "user", "squash merges"}}},
		{"Sorry, I misspoke: I'm 29, not 28.", []want{{PredAge, "user", "29"}}},
		{"代码注释统一用英文写。", []want{{PredRule, "user", "代码注释统一用英文写"}}},
		{"Please respond in bullet points from now on.", []want{{PredRule, "user", "respond in bullet points"}}},
		{"以后给我的代码示例都用 TypeScript，不要用 JavaScript。", []want{{PredRule, "user", "都用 TypeScript，不要用 JavaScript"}}},
		{"最终决定：接口统一返回 JSON。", []want{{PredDecision, "project", "接口统一返回 JSON"}}},
		{"I plan to start learning Rust next month.", []want{{PredPlan, "user", "learning Rust"}}},
		{"我同事小张用的是 Vim。", nil},
		{"My colleague uses Emacs.", nil},
		{"My wife likes sushi.", nil},
		{"I'd like you to fix this.", nil},
		{"I'm going to the dentist tomorrow.", nil},
		{"Maybe we should try Bun.", nil},
		{"I hope we can switch to Go someday.", nil},
		{"先别升级 Node，等下周再说。", nil},
		{"我将来可能会去读博。", nil},
		{"Is Python 3.12 faster than 3.11?", nil},
	} {
		t.Run(tc.in, func(t *testing.T) { checkWants(t, user(tc.in), tc.want) })
	}
}
