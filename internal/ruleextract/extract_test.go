package ruleextract

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

// want describes one expected candidate: its predicate and subject, and a
// piece of its content.
type want struct {
	pred, subject, content string
}

func format(cs []memory.Candidate) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "\n\t%s/%s %s %s %.2f %q", c.Kind, c.Category, c.Subject, c.Predicate, c.Confidence, c.Content)
	}
	return b.String()
}

// find returns the candidate matching w, if any.
func find(cs []memory.Candidate, w want) (memory.Candidate, bool) {
	for _, c := range cs {
		if c.Predicate == w.pred && c.Subject == w.subject && strings.Contains(c.Content, w.content) {
			return c, true
		}
	}
	return memory.Candidate{}, false
}

func checkWants(t *testing.T, got []memory.Candidate, wants []want) {
	t.Helper()
	for _, w := range wants {
		if _, ok := find(got, w); !ok {
			t.Errorf("missing %s/%s containing %q; got:%s", w.subject, w.pred, w.content, format(got))
		}
	}
	if len(got) != len(wants) {
		t.Errorf("got %d candidates, want %d:%s", len(got), len(wants), format(got))
	}
}

func TestMustCases(t *testing.T) {
	t.Parallel()
	t.Run("chinese name and preference", func(t *testing.T) {
		got := Extract(Input{Role: "user", Content: "我叫李雷，我喜欢喝美式咖啡"})
		if len(got) != 2 {
			t.Fatalf("got %d candidates, want 2:%s", len(got), format(got))
		}
		name, pref := got[0], got[1]
		if name.Subject != "user" || name.Predicate != PredName || !strings.Contains(name.Content, "李雷") {
			t.Errorf("name = %+v, want user/name mentioning 李雷", name)
		}
		if name.Kind != memory.KindIdentity || name.Category != memory.CategoryIdentity {
			t.Errorf("name kind/category = %s/%s, want identity/identity", name.Kind, name.Category)
		}
		if pref.Subject != "user" || pref.Predicate != PredLikes || !strings.Contains(pref.Content, "美式咖啡") {
			t.Errorf("preference = %+v, want user/likes about 美式咖啡", pref)
		}
		if pref.Kind != memory.KindPreference {
			t.Errorf("preference kind = %s, want preference", pref.Kind)
		}
	})
	t.Run("english name and preference", func(t *testing.T) {
		got := Extract(Input{Role: "user", Content: "My name is Ana and I prefer dark mode"})
		if len(got) != 2 {
			t.Fatalf("got %d candidates, want 2:%s", len(got), format(got))
		}
		if c := got[0]; c.Subject != "user" || c.Predicate != PredName || !strings.Contains(c.Content, "Ana") || strings.Contains(c.Content, "dark") {
			t.Errorf("name = %+v, want user/name = Ana", c)
		}
		if c := got[1]; c.Subject != "user" || c.Predicate != PredPrefers || !strings.Contains(c.Content, "dark mode") {
			t.Errorf("preference = %+v, want user/prefers dark mode", c)
		}
	})
}

func TestPositive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in    string
		wants []want
	}{
		// Identity, Chinese.
		{"我的名字是王小明", []want{{PredName, "user", "用户叫王小明"}}},
		{"对了，其实我叫韩梅梅。", []want{{PredName, "user", "韩梅梅"}}},
		{"我是张伟", []want{{PredName, "user", "张伟"}}},
		{"我的名字是 Tom Lee", []want{{PredName, "user", "Tom Lee"}}},
		{"叫我小李就行", []want{{PredNickname, "user", "小李"}}},
		{"我住在上海浦东", []want{{PredLocation, "user", "上海浦东"}}},
		{"我搬到了深圳", []want{{PredLocation, "user", "深圳"}}},
		{"我来自成都", []want{{PredHometown, "user", "成都"}}},
		{"我是北京人", []want{{PredHometown, "user", "北京人"}}},
		{"我在腾讯工作", []want{{PredEmployer, "user", "腾讯"}}},
		{"我是一名后端工程师", []want{{PredOccupation, "user", "后端工程师"}}},
		{"我今年28岁", []want{{PredAge, "user", "28"}}},
		// Identity, English.
		{"Hi, I'm Ana.", []want{{PredName, "user", "Ana"}}},
		{"My name's Tom", []want{{PredName, "user", "Tom"}}},
		{"Call me Ishmael.", []want{{PredNickname, "user", "Ishmael"}}},
		{"I live in Berlin with my wife.", []want{{PredLocation, "user", "User lives in Berlin"}}},
		{"I moved to Lisbon last year", []want{{PredLocation, "user", "User moved to Lisbon"}}},
		{"I'm from Brazil", []want{{PredHometown, "user", "Brazil"}}},
		{"I work at Google as a software engineer.", []want{{PredEmployer, "user", "Google"}, {PredOccupation, "user", "software engineer"}}},
		{"I'm a backend engineer at Acme", []want{{PredOccupation, "user", "backend engineer"}, {PredEmployer, "user", "Acme"}}},
		{"I'm 30 years old", []want{{PredAge, "user", "30"}}},
		// Preferences.
		{"我不喜欢香菜", []want{{PredDislikes, "user", "用户不喜欢香菜"}}},
		{"我特别喜欢吃川菜", []want{{PredLikes, "user", "川菜"}}},
		{"我最讨厌开会", []want{{PredDislikes, "user", "开会"}}},
		{"我更喜欢用 Vim", []want{{PredPrefers, "user", "Vim"}}},
		{"我偏好简洁的回答", []want{{PredPrefers, "user", "简洁的回答"}}},
		{"我最喜欢的编辑器是 Vim", []want{{PredLikes, "user", "编辑器是Vim"}}},
		{"I hate tabs", []want{{PredDislikes, "user", "User hates tabs"}}},
		{"I don't like meetings before 10am", []want{{PredDislikes, "user", "meetings before 10am"}}},
		{"I love Go", []want{{PredLikes, "user", "User loves Go"}}},
		{"I really enjoy hiking", []want{{PredLikes, "user", "hiking"}}},
		{"Oh, and btw, I prefer tabs over spaces.", []want{{PredPrefers, "user", "tabs over spaces"}}},
		{"I prefer short answers because I read on my phone.", []want{{PredPrefers, "user", "User prefers short answers"}}},
		{"I like my coffee black", []want{{PredLikes, "user", "User likes their coffee black"}}},
		{"I'd rather use vim", []want{{PredPrefers, "user", "would rather use vim"}}},
		{"My favorite editor is Neovim", []want{{PredLikes, "user", "favorite editor is Neovim"}}},
		{"We prefer squash merges.", []want{{PredPrefers, "user", "The team prefers squash merges"}}},
		{"I'm a big fan of Rust", []want{{PredLikes, "user", "fan of Rust"}}},
		// Rules.
		{"以后回答都用中文", []want{{PredRule, "user", "规则：以后回答都用中文"}}},
		{"以后，不要在回答里用表情符号", []want{{PredRule, "user", "不要在回答里用表情符号"}}},
		{"请总是用简体中文回答", []want{{PredRule, "user", "请总是用简体中文回答"}}},
		{"千万不要删除生产数据库", []want{{PredRule, "user", "千万不要删除生产数据库"}}},
		{"不要在周末发通知", []want{{PredRule, "user", "不要在周末发通知"}}},
		{"如果测试失败，不要合并", []want{{PredRule, "user", "如果测试失败，不要合并"}}},
		{"Always run gofmt before committing.", []want{{PredRule, "user", "Rule: Always run gofmt before committing"}}},
		{"Never push directly to main", []want{{PredRule, "user", "Never push directly to main"}}},
		{"From now on, answer in English", []want{{PredRule, "user", "answer in English"}}},
		{"Please always answer in Chinese.", []want{{PredRule, "user", "always answer in Chinese"}}},
		{"Don't forget to update the changelog", []want{{PredRule, "user", "update the changelog"}}},
		{"If tests fail, never merge the PR.", []want{{PredRule, "user", "If tests fail, never merge the PR"}}},
		{"remember to run the tests", []want{{PredRule, "user", "run the tests"}}},
		// Remember.
		{"记住，我的服务器在 /srv/app", []want{{PredNote, "user", "用户要求记住：我的服务器在 /srv/app"}}},
		{"记住我叫韩梅梅", []want{{PredName, "user", "韩梅梅"}}},
		{"Remember that I'm vegetarian", []want{{PredNote, "user", "I'm vegetarian"}}},
		// Tools and versions.
		{"我们的项目是用 Go 1.26 写的", []want{{PredVersion, "go", "Go 1.26"}}},
		{"后端用的是 Go 1.22，前端用的是 React 18", []want{{PredVersion, "go", "Go 1.22"}, {PredVersion, "react", "React 18"}}},
		{"We're using Postgres 16 and Redis 7 in production.", []want{{PredVersion, "postgres", "Postgres 16"}, {PredVersion, "redis", "Redis 7"}}},
		{"We're on Node v20.", []want{{PredVersion, "node", "Node 20"}}},
		{"We bumped Go to 1.26", []want{{PredVersion, "go", "Go 1.26"}}},
		{"Python 升级到了 3.12", []want{{PredVersion, "python", "Python 3.12"}}},
		{"we use PostgreSQL", []want{{PredUses, "postgres", "uses PostgreSQL"}}},
		{"项目基于 Spring Boot 3.2", []want{{PredVersion, "spring-boot", "项目使用 Spring Boot 3.2"}}},
		{"The project is written in Rust 1.80", []want{{PredVersion, "rust", "The project uses Rust 1.80"}}},
		{"We switched to pnpm", []want{{PredUses, "pnpm", "switched to pnpm"}}},
		{"我们从 MySQL 迁移到了 Postgres", []want{{PredUses, "mysql", "不再使用 MySQL"}, {PredUses, "postgres", "使用 Postgres"}}},
		{"We moved from MySQL to Postgres 16", []want{{PredUses, "mysql", "no longer uses MySQL"}, {PredVersion, "postgres", "Postgres 16"}}},
		{"We moved from Python 3.10 to 3.12", []want{{PredVersion, "python", "from 3.10 to 3.12"}}},
		{"We no longer use Redis", []want{{PredUses, "redis", "no longer uses Redis"}}},
		{"我们不再使用 Jenkins 了", []want{{PredUses, "jenkins", "不再使用 Jenkins"}}},
		// Paths.
		{"配置文件在 /etc/engram/config.yaml", []want{{PredPath, "config", "/etc/engram/config.yaml"}}},
		{"The config is at ./config.yaml", []want{{PredPath, "config", "./config.yaml"}}},
		{"我的代码目录在 D:\\code", []want{{PredPath, "code", `用户的代码目录在 D:\code`}}},
		{"I think the config file is at ~/.config/engram/config.toml", []want{{PredPath, "config", "~/.config/engram/config.toml"}}},
		{"The logs are stored in /var/log/engram", []want{{PredPath, "logs", "The logs are at /var/log/engram"}}},
		// Decisions (and the tool they name).
		{"我们决定用 Postgres 作为主库", []want{{PredDecision, "project", "决定：用 Postgres 作为主库"}}},
		{"We decided to use SQLite for the read model.", []want{{PredDecision, "project", "Decision: use SQLite for the read model"}}},
		{"Let's go with option B.", []want{{PredDecision, "project", "go with option B"}}},
		{"那就用方案二吧", []want{{PredDecision, "project", "用方案二"}}},
		// Several facts in one message.
		{"Hi! I'm Ana. I live in Lisbon, and I prefer short answers.", []want{{PredName, "user", "Ana"}, {PredLocation, "user", "Lisbon"}, {PredPrefers, "user", "short answers"}}},
		{"我叫李雷，住在杭州，不喜欢加班。", []want{{PredName, "user", "李雷"}, {PredLocation, "user", "杭州"}, {PredDislikes, "user", "加班"}}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			checkWants(t, Extract(Input{Role: "user", Content: tc.in}), tc.wants)
		})
	}
}

func TestNegative(t *testing.T) {
	t.Parallel()
	cases := []string{
		// Questions.
		"我喜欢什么？",
		"我叫什么名字",
		"do I like coffee?",
		"What's my name?",
		"Is the config at ./config.yaml?",
		"Should we upgrade to Python 3.13?",
		// Negations and hypotheticals.
		"我不叫李雷",
		"如果我叫李雷",
		"我们不用 Redis",
		"We don't use Redis",
		"我们可以用 Redis 做缓存",
		"We might switch to Bun",
		"If we used Python 3.12 we could drop the shim",
		"我们还没决定用哪个数据库",
		"We haven't decided yet",
		// Not a name, not a preference.
		"I'm tired",
		"i'm ana",
		"I'm Going to the store",
		"I'm Python developer",
		"I'm not sure",
		"我叫了外卖",
		"我叫他走",
		"我是说我们可以试试",
		"我爱你",
		"I love it",
		"I like that idea",
		"I'd like a coffee",
		"我妈妈喜欢养花",
		"My friend's name is Bob",
		"We like pizza",
		// Not rules.
		"Don't worry about it",
		"别人说的不算",
		"不要紧",
		"以后再说吧",
		"Never mind",
		"I always forget my keys",
		// Not tools or paths.
		"we use go to build things",
		"这个函数用了 3 个参数",
		"我们用这个方法解决了 Redis 的问题",
		"I tried Python 3.13 yesterday",
		"see https://github.com/engramhq/engram/blob/main/README.md",
		"the answer is in /tmp/x.txt",
		"We use 2 spaces for indentation",
		"Run the tests again",
		"好的，继续",
		"ok",
		"",
	}
	for _, in := range cases {
		t.Run(in, func(t *testing.T) {
			if got := Extract(Input{Role: "user", Content: in}); len(got) != 0 {
				t.Errorf("Extract(%q) = %d candidates, want none:%s", in, len(got), format(got))
			}
		})
	}
}

// TestVersionSupersede checks that a later version statement collides with
// the earlier one on (subject, predicate) and differs in content, in each
// language and across them.
func TestVersionSupersede(t *testing.T) {
	t.Parallel()
	pairs := []struct{ before, after string }{
		{"我们用的是 Python 3.10", "我们升级到 Python 3.12 了"},
		{"We use Python 3.10.", "We upgraded to Python 3.12."},
		{"We're on Go 1.25", "我们升级到了 Go 1.26"},
		{"We run Node v18", "We switched to Node 20"},
		// Habits: the Chinese update chain of issue 24.
		{"我平时用 Python 3.10 写脚本", "我现在改用 Python 3.12 写脚本了"},
		{"我一般用 Go 1.25", "我已经升级到 Go 1.26 了"},
		{"I usually write scripts in Python 3.10", "I upgraded to Python 3.12"},
	}
	for _, p := range pairs {
		t.Run(p.before+" → "+p.after, func(t *testing.T) {
			before := Extract(Input{Role: "user", Content: p.before})
			after := Extract(Input{Role: "user", Content: p.after})
			if len(before) != 1 || len(after) != 1 {
				t.Fatalf("want one candidate each; before:%s\nafter:%s", format(before), format(after))
			}
			b, a := before[0], after[0]
			if a.Subject != b.Subject || a.Predicate != b.Predicate {
				t.Errorf("after is %s/%s, before is %s/%s: they must collide", a.Subject, a.Predicate, b.Subject, b.Predicate)
			}
			if a.Predicate != PredVersion {
				t.Errorf("predicate = %q, want %q", a.Predicate, PredVersion)
			}
			if a.Content == b.Content {
				t.Errorf("content did not change: %q", a.Content)
			}
			if !a.Updates {
				t.Errorf("after.Updates = false, want true for an upgrade")
			}
			if !SingleValued(a.Predicate) {
				t.Errorf("SingleValued(%q) = false, want true", a.Predicate)
			}
		})
	}
}

// TestCrossLanguageCollision checks that the same fact in Chinese and in
// English lands on the same subject and predicate.
func TestCrossLanguageCollision(t *testing.T) {
	t.Parallel()
	pairs := [][2]string{
		{"我住在上海", "I live in Berlin"},
		{"我叫李雷", "My name is Ana"},
		{"配置文件在 /etc/app.yaml", "The config is at ./config.yaml"},
		{"我在腾讯工作", "I work at Google"},
	}
	for _, p := range pairs {
		zh := Extract(Input{Role: "user", Content: p[0]})
		en := Extract(Input{Role: "user", Content: p[1]})
		if len(zh) != 1 || len(en) != 1 {
			t.Fatalf("want one candidate each; zh:%s\nen:%s", format(zh), format(en))
		}
		if zh[0].Subject != en[0].Subject || zh[0].Predicate != en[0].Predicate {
			t.Errorf("%q → %s/%s but %q → %s/%s", p[0], zh[0].Subject, zh[0].Predicate, p[1], en[0].Subject, en[0].Predicate)
		}
	}
}

func TestFullWidth(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in    string
		wants []want
	}{
		{"我叫李雷，我喜欢喝美式咖啡。", []want{{PredName, "user", "李雷"}, {PredLikes, "user", "美式咖啡"}}},
		{"我们用的是Ｐｙｔｈｏｎ３．１２", []want{{PredVersion, "python", "Python 3.12"}}},
		{"我叫李雷！你叫什么？", []want{{PredName, "user", "李雷"}}},
		{"记住：以后不要用分号；我住在北京。", []want{{PredRule, "user", "不要用分号"}, {PredLocation, "user", "北京"}}},
		{"My name is Ana，and I prefer dark mode．", []want{{PredName, "user", "Ana"}, {PredPrefers, "user", "dark mode"}}},
		{"我叫\u3000李雷", []want{{PredName, "user", "李雷"}}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			checkWants(t, Extract(Input{Role: "user", Content: tc.in}), tc.wants)
		})
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	t.Run("assistant yields no identity and is capped", func(t *testing.T) {
		got := Extract(Input{Role: "assistant", Content: "My name is Claude. I've upgraded the project to Go 1.26. I prefer tabs."})
		checkWants(t, got, []want{{PredVersion, "go", "The project upgraded to Go 1.26"}})
		for _, c := range got {
			if c.Confidence > confHint {
				t.Errorf("assistant candidate confidence %.2f > %.2f: %q", c.Confidence, confHint, c.Content)
			}
		}
	})
	t.Run("system and tool content yield nothing", func(t *testing.T) {
		for _, role := range []string{"system", "tool", ""} {
			if got := Extract(Input{Role: role, Content: "My name is Bob. Always answer in English. We use Go 1.26."}); len(got) != 0 {
				t.Errorf("role %q: got %d candidates, want none:%s", role, len(got), format(got))
			}
		}
	})
	t.Run("role is case-insensitive", func(t *testing.T) {
		if got := Extract(Input{Role: " User ", Content: "我叫李雷"}); len(got) != 1 {
			t.Errorf("got %d candidates, want 1:%s", len(got), format(got))
		}
	})
}

func TestProjectScope(t *testing.T) {
	t.Parallel()
	got := Extract(Input{Role: "user", Project: "engram", Content: "我叫李雷。We use Go 1.26. 我们决定用 NATS 做消息总线。The config is at ./engram.yaml"})
	checkWants(t, got, []want{
		{PredName, "user", "李雷"},
		{PredVersion, "go", "Project engram uses Go 1.26"},
		{PredDecision, "engram", "决定：用 NATS 做消息总线"},
		{PredPath, "config", "Project engram's config is at ./engram.yaml"},
	})
	for _, c := range got {
		personal := c.Subject == "user"
		if personal && c.Project != "" {
			t.Errorf("%q carries project %q: the user's own facts are not per project", c.Content, c.Project)
		}
		if !personal && c.Project != "engram" {
			t.Errorf("%q has project %q, want engram", c.Content, c.Project)
		}
	}
}

// TestConfidenceRouting pins which patterns are sure enough to be written
// at once (≥ 0.85) and which go to pending (0.60–0.85).
func TestConfidenceRouting(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		pending bool
	}{
		{"My name is Ana", false},
		{"我叫李雷", false},
		{"From now on, answer in English", false},
		{"We use Go 1.26", false},
		{"I'm Ana", true},
		{"我是张伟", true},
		{"不要用 var 声明变量", true},
		{"Don't use semicolons", true},
		{"Let's go with option B", true},
		{"我在北京工作", true},
		{"We use Foobar 2.1", true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got := Extract(Input{Role: "user", Content: tc.in})
			if len(got) == 0 {
				t.Fatalf("no candidate")
			}
			c := got[0].Confidence
			if c < 0.6 {
				t.Fatalf("confidence %.2f would be dropped", c)
			}
			if gotPending := c < 0.85; gotPending != tc.pending {
				t.Errorf("confidence %.2f: pending = %v, want %v", c, gotPending, tc.pending)
			}
		})
	}
}

func TestCodeAndQuotesIgnored(t *testing.T) {
	t.Parallel()
	in := "Here is the snippet:\n```go\n// never return nil\n// my name is Bob\nalways(x)\n```\n> I prefer spaces\nI prefer tabs."
	checkWants(t, Extract(Input{Role: "user", Content: in}), []want{{PredPrefers, "user", "tabs"}})
}

func TestToolCalls(t *testing.T) {
	t.Parallel()
	got := Extract(Input{
		Role:    "assistant",
		Project: "engram",
		ToolCalls: []ToolCall{
			{Name: "bash", Input: `{"command":"pip install -r requirements.txt fastapi==0.110.0 uvicorn"}`},
			{Name: "bash", Input: `{"command":"nvm use 20 && npm install --save-dev vitest@1.6.0"}`},
			{Name: "bash", Input: `{"command":"ls -la /tmp"}`},
		},
	})
	checkWants(t, got, []want{
		{PredVersion, "fastapi", "Installed fastapi 0.110.0 with pip"},
		{PredUses, "uvicorn", "Installed uvicorn with pip"},
		{PredVersion, "vitest", "Installed vitest 1.6.0 with npm"},
		{PredVersion, "node", "Switched node to 20 with nvm"},
	})
	for _, c := range got {
		if c.Confidence >= 0.85 || c.Confidence < 0.6 {
			t.Errorf("%q confidence %.2f, want pending (0.60–0.85)", c.Content, c.Confidence)
		}
		if c.Project != "engram" {
			t.Errorf("%q project %q, want engram", c.Content, c.Project)
		}
	}
	if got := Extract(Input{Role: "system", ToolCalls: []ToolCall{{Name: "bash", Input: "pip install requests"}}}); len(got) != 0 {
		t.Errorf("system tool calls gave %d candidates, want none", len(got))
	}
}

func TestKindsAndCategories(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		kind memory.Kind
		cat  memory.Category
	}{
		{"我叫李雷", memory.KindIdentity, memory.CategoryIdentity},
		{"I prefer dark mode", memory.KindPreference, memory.CategoryConfig},
		{"Never push to main", memory.KindRule, memory.CategoryConfig},
		{"We use Go 1.26", memory.KindFact, memory.CategoryConfig},
		{"The config is at ./config.yaml", memory.KindFact, memory.CategoryConfig},
		{"We decided to drop the cache", memory.KindContext, memory.CategoryDecision},
	}
	for _, tc := range cases {
		got := Extract(Input{Role: "user", Content: tc.in})
		if len(got) != 1 {
			t.Fatalf("%q: got %d candidates, want 1:%s", tc.in, len(got), format(got))
		}
		if got[0].Kind != tc.kind || got[0].Category != tc.cat {
			t.Errorf("%q: %s/%s, want %s/%s", tc.in, got[0].Kind, got[0].Category, tc.kind, tc.cat)
		}
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("非常", 300)
	got := Extract(Input{Role: "user", Content: "我喜欢" + long})
	for _, c := range got {
		if n := runeLen(c.Content); n > maxContentRunes+1 {
			t.Errorf("content has %d runes, cap is %d", n, maxContentRunes)
		}
	}
	var many strings.Builder
	for i := range 100 {
		fmt.Fprintf(&many, "I use Tool%d %d.0. ", i, i+1)
	}
	if got := Extract(Input{Role: "user", Content: many.String()}); len(got) > maxCandidates {
		t.Errorf("got %d candidates, cap is %d", len(got), maxCandidates)
	}
}

func TestSingleValued(t *testing.T) {
	t.Parallel()
	for pred := range specs {
		multi := pred == PredLikes || pred == PredDislikes || pred == PredPrefers || pred == PredRule ||
			pred == PredNote || pred == PredDecision || pred == PredPlan || pred == PredError
		if got := SingleValued(pred); got == multi {
			t.Errorf("SingleValued(%q) = %v, want %v", pred, got, !multi)
		}
	}
}

const benchMessage = "对了，我叫李雷，现在住在杭州。We're using Postgres 16 and Go 1.26 for the backend, " +
	"and the config is at ./deploy/engram.yaml. 以后回答都用中文，不要用表情符号。I prefer short answers."

func BenchmarkExtract(b *testing.B) {
	in := Input{Role: "user", Content: benchMessage, Project: "engram"}
	b.SetBytes(int64(len(benchMessage)))
	b.ReportAllocs()
	for b.Loop() {
		Extract(in)
	}
}

func TestBenchMessageExtracts(t *testing.T) {
	t.Parallel()
	// The benchmark must exercise real work, not an early exit.
	if got := Extract(Input{Role: "user", Content: benchMessage, Project: "engram"}); len(got) < 6 {
		t.Errorf("benchmark message gave %d candidates, want at least 6:%s", len(got), format(got))
	}
}

// worstCaseInputs are each the largest input Extract reads, built to
// stress one loop. BenchmarkWorstCaseInputs measures them (a quadratic
// path shows as seconds per op instead of milliseconds); the test only
// checks they are handled. Speed is never asserted in a test.
func worstCaseInputs() []string {
	return []string{
		strings.Repeat(",", maxInputBytes), strings.Repeat(" ", maxInputBytes), strings.Repeat("a ", maxInputBytes/2),
		strings.Repeat("我", maxInputBytes/3), strings.Repeat("we use Go 1.2 and ", 2000), strings.Repeat("/a", maxInputBytes/2),
		strings.Repeat("用", maxInputBytes/3), strings.Repeat("on ", maxInputBytes/3), strings.Repeat("I'm ", maxInputBytes/4),
		strings.Repeat("a.", maxInputBytes/2), strings.Repeat("，我", maxInputBytes/6), strings.Repeat(" and I", maxInputBytes/6),
		strings.Repeat("upgraded ", maxInputBytes/9), strings.Repeat("以后", maxInputBytes/6), strings.Repeat(`C:\`, maxInputBytes/3),
		strings.Repeat("“a", maxInputBytes/4), strings.Repeat(`"a b c" `, maxInputBytes/8),
	}
}

func TestWorstCaseInputs(t *testing.T) {
	t.Parallel()
	for _, in := range worstCaseInputs() {
		for _, c := range Extract(Input{Role: "user", Content: in, ToolCalls: []ToolCall{{Input: in}}}) {
			if c.Subject == "" || c.Predicate == "" || c.Content == "" {
				t.Errorf("%q…: empty field in %+v", in[:12], c)
			}
		}
	}
}

func BenchmarkWorstCaseInputs(b *testing.B) {
	for _, in := range worstCaseInputs() {
		b.Run(fmt.Sprintf("%q", in[:12]), func(b *testing.B) {
			for b.Loop() {
				Extract(Input{Role: "user", Content: in, ToolCalls: []ToolCall{{Input: in}}})
			}
		})
	}
}
