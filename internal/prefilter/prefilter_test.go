package prefilter

import (
	"strings"
	"testing"
)

var projects = []string{"engram", "Go", "北极星", "my-app"}

func TestShouldRetrieve(t *testing.T) {
	tests := []struct {
		query  string
		want   bool
		reason string
	}{
		// 1. empty
		{"", false, SkipEmpty},
		{"   \n\t ", false, SkipEmpty},
		{"\u200b\u200d\ufeff", false, SkipEmpty},

		// 2. acknowledgements and continuations
		{"继续", false, SkipAck},
		{"好的", false, SkipAck},
		{"好", false, SkipAck},
		{"嗯", false, SkipAck},
		{"嗯嗯。", false, SkipAck},
		{"好的，继续", false, SkipAck},
		{"确认！", false, SkipAck},
		{"谢谢~", false, SkipAck},
		{"ok", false, SkipAck},
		{"OK!", false, SkipAck},
		{"Okay.", false, SkipAck},
		{"ok thanks", false, SkipAck},
		{"Thank you!", false, SkipAck},
		{"yes", false, SkipAck},
		{"No", false, SkipAck},
		{"go on", false, SkipAck},
		{"👍", false, SkipAck},
		{"👍🏻👍🏻", false, SkipAck},
		{"✅ done", false, SkipAck},
		// not acknowledgements: a word that merely starts like one
		{"now what?", true, RuleQuestion},
		{"no, I meant my other project", true, "pronoun:my"},
		{"好的，那我的配置呢", true, "pronoun:我的"},

		// 3. code
		{"```go\nfunc main() { fmt.Println(\"hi\") }\n```", false, SkipCode},
		{"```\nwhat is this? before\n```", false, SkipCode},
		{"`x := f(y)`", false, SkipCode},
		{"if err != nil { return fmt.Errorf(\"open: %w\", err) }", false, SkipCode},
		{"{\"name\": \"engram\", \"tags\": [1, 2]}", false, SkipCode},
		{"rm -rf /tmp/foo && ls -la ~/bar", false, SkipCode},
		// code with prose around it: the prose decides
		{"为什么这段报错\n```go\nx := nil\n```", true, RuleQuestion},
		{"Why does this panic?\n```go\nvar m map[string]int; m[\"a\"] = 1\n```", true, RuleQuestion},
		{"看一下\n```\nfoo()\n```", false, SkipShort},
		{"what's f(x) = x^2 + 1 at x = 3?", true, RuleQuestion},
		{"`before` is a reserved word", true, RuleDefault},

		// 4. pronouns and recall phrases
		{"我的服务器地址是多少", true, "pronoun:我的"},
		{"你记得我养的猫叫什么吗", true, "pronoun:你记得"},
		{"还记得那个bug吗", true, "pronoun:还记得"},
		{"我们之前说过要用 Postgres", true, "pronoun:之前说过"},
		{"What is my favorite editor", true, "pronoun:my"},
		{"Do you remember the deploy steps", true, "pronoun:remember"},
		{"did I tell you about the trip", true, "pronoun:did i"},
		{"what did we decide about caching", true, "pronoun:what did we"},
		{"Deploy our service now", true, "pronoun:our"},
		{"It takes an hour", true, RuleDefault}, // "our" inside "hour" is not a pronoun

		// time references
		{"上次那个方案不错", true, "time:上次"},
		{"昨天的会议纪要", true, "time:昨天"},
		{"把上周的报告发我", true, "time:上周"},
		{"last time we used sqlite", true, "time:last time"},
		{"Continue from yesterday", true, "time:yesterday"},
		{"Use the approach from earlier", true, "time:earlier"},

		// known projects
		{"engram 的测试跑一下", true, "project:engram"},
		{"Run the ENGRAM tests", true, "project:engram"},
		{"北极星项目进展", true, "project:北极星"},
		{"bump my-app to v2", true, "pronoun:my"},
		{"deploy my-app", true, "pronoun:my"},
		{"rebuild Go toolchain", true, "project:Go"},
		{"I am going home now", true, RuleDefault}, // "go" is not a word here
		{"engram项目", true, "project:engram"},
		{"fix the-engramx thing", true, RuleDefault},

		// preferences
		{"按照习惯来写", true, "preference:习惯"},
		{"帮我改一下配置", true, "preference:配置"},
		{"use the usual prefer tabs style", true, "preference:prefer"},
		{"Write it the way I like", true, "preference:i like"},

		// questions
		{"这是什么", true, RuleQuestion},
		{"怎么部署", true, RuleQuestion},
		{"能跑起来吗", true, RuleQuestion},
		{"这样行吗？", true, RuleQuestion},
		{"How do I rotate keys", true, RuleQuestion},
		{"where's the config file", true, RuleQuestion},
		{"status?", true, RuleQuestion},
		{"see the page at https://example.com/a?b=1", true, RuleDefault},
		{"https://example.com/a?b=1", false, SkipCode},

		// default by length
		{"帮我写个函数", true, RuleDefault},
		{"翻译这段话", true, RuleDefault},
		{"Run the test suite again", true, RuleDefault},
		{"fix it", false, SkipShort},
		{"你好", false, SkipShort},
		{"hi there", false, SkipShort},
		{"\xff\xfe", false, SkipShort},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := ShouldRetrieve(tt.query, projects)
			if got.Retrieve != tt.want || got.Reason != tt.reason {
				t.Fatalf("ShouldRetrieve(%q) = %+v, want {Retrieve:%v Reason:%s}", tt.query, got, tt.want, tt.reason)
			}
		})
	}
}

func TestRuleOrder(t *testing.T) {
	// Each message matches several rules; the earliest in the documented
	// order must win.
	tests := []struct {
		query, reason string
	}{
		{"好的", SkipAck},                                // ack before the default
		{"`我的配置是什么？`", SkipCode},                       // code before every trigger
		{"我的上次的偏好是什么？", "pronoun:我的"},                  // pronoun before time, preference, question
		{"上次 engram 的偏好是什么？", "time:上次"},               // time before project
		{"engram 的偏好是什么？", "project:engram"},           // project before preference
		{"偏好是什么？", "preference:偏好"},                    // preference before question
		{"what's the long-running plan", RuleQuestion}, // question before default
	}
	for _, tt := range tests {
		if got := ShouldRetrieve(tt.query, projects).Reason; got != tt.reason {
			t.Errorf("ShouldRetrieve(%q).Reason = %q, want %q", tt.query, got, tt.reason)
		}
	}
}

func TestProjectsIgnoreBlankNames(t *testing.T) {
	if got, want := ShouldRetrieve("ok then", []string{"", "  "}).Reason, SkipShort; got != want {
		t.Fatalf("Reason = %q, want %q", got, want)
	}
}

func TestForced(t *testing.T) {
	if got := Forced(); !got.Retrieve || got.Reason != RuleForced {
		t.Fatalf("Forced() = %+v", got)
	}
}

func TestStripCode(t *testing.T) {
	tests := []struct {
		in, prose string
		code      bool
	}{
		{"plain", "plain", false},
		{"a ```x``` b", "a   b", true},
		{"a ```never closed", "a  ", true},
		{"use `go test` now", "use   now", true},
		{"a lone ` tick", "a lone ` tick", false},
		{"broken `span\nacross` lines", "broken `span\nacross` lines", false},
	}
	for _, tt := range tests {
		prose, code := stripCode(tt.in)
		if prose != tt.prose || code != tt.code {
			t.Errorf("stripCode(%q) = %q, %v; want %q, %v", tt.in, prose, code, tt.prose, tt.code)
		}
	}
}

var benchMessages = []string{
	"好的",
	"继续",
	"我上次说的那个数据库迁移方案，你还记得具体步骤吗？",
	"帮我写一个函数，把用户列表按注册时间排序，然后导出成 CSV",
	"What did we decide about the caching layer for the engram retriever last week?",
	"Please refactor this handler so it returns errors instead of logging them.",
	"```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```",
	"if err != nil { return fmt.Errorf(\"open %s: %w\", path, err) }",
	"ok thanks",
	strings.Repeat("这是一段比较长的消息，用来测一下长文本的速度。", 20),
}

func BenchmarkShouldRetrieve(b *testing.B) {
	projects := []string{"engram", "myclaw", "北极星", "semibot"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ShouldRetrieve(benchMessages[i%len(benchMessages)], projects)
	}
}
