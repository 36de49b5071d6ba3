package ruleextract

import (
	"regexp"
	"sort"
	"strings"
)

// Tool triggers are found by plain string search rather than one large
// regular expression: the alternation of every verb in two languages made
// the tool pass the costliest thing in the package.

// toolTrigger is a verb phrase that relates the speaker to a tool.
type toolTrigger struct {
	phrase string
	class  int
	to     bool // the phrase takes "to" within two words: "upgraded the backend to"
	onlyOn bool // "on" counts only after a form of "be": "we're on Go 1.22"
	// perfect: "used" counts only as a present perfect ("we've used Go for
	// years"); the simple past ("the old service used MySQL 5.7") is a
	// past state.
	perfect bool
}

var toolTriggers = []toolTrigger{
	{phrase: "no longer use", class: stopTool}, {phrase: "no longer using", class: stopTool},
	{phrase: "no longer uses", class: stopTool}, {phrase: "stopped using", class: stopTool},
	{phrase: "不再使用", class: stopTool}, {phrase: "不再用", class: stopTool}, {phrase: "弃用了", class: stopTool},
	{phrase: "停用了", class: stopTool}, {phrase: "switched off", class: stopTool}, {phrase: "moved off", class: stopTool},
	{phrase: "migrated off", class: stopTool}, {phrase: "moved away from", class: stopTool}, {phrase: "got rid of", class: stopTool},
	{phrase: "ditched", class: stopTool}, {phrase: "retired", class: stopTool}, {phrase: "decommissioned", class: stopTool},
	{phrase: "shut down", class: stopTool}, {phrase: "sunset", class: stopTool}, {phrase: "sunsetted", class: stopTool},

	{phrase: "upgraded", class: upgradeTool, to: true}, {phrase: "upgrading", class: upgradeTool, to: true},
	{phrase: "updated", class: upgradeTool, to: true}, {phrase: "bumped", class: upgradeTool, to: true},
	{phrase: "升级到", class: upgradeTool}, {phrase: "升级为", class: upgradeTool}, {phrase: "升级成", class: upgradeTool},
	{phrase: "升到", class: upgradeTool}, {phrase: "更新到", class: upgradeTool},

	{phrase: "downgraded", class: downgradeTool, to: true}, {phrase: "rolled back to", class: downgradeTool},
	{phrase: "降级到", class: downgradeTool}, {phrase: "降到", class: downgradeTool}, {phrase: "回退到", class: downgradeTool},

	{phrase: "switched", class: switchTool, to: true}, {phrase: "switching", class: switchTool, to: true},
	{phrase: "moved", class: switchTool, to: true}, {phrase: "migrated", class: switchTool, to: true},
	{phrase: "migrating", class: switchTool, to: true}, {phrase: "moving", class: switchTool, to: true},
	{phrase: "changed to", class: switchTool}, {phrase: "went back to", class: switchTool}, {phrase: "改用", class: switchTool}, {phrase: "换用", class: switchTool},
	{phrase: "换成", class: switchTool}, {phrase: "换到", class: switchTool}, {phrase: "切换到", class: switchTool},
	{phrase: "切到", class: switchTool}, {phrase: "迁移到", class: switchTool}, {phrase: "迁到", class: switchTool},

	{phrase: "use", class: useTool}, {phrase: "uses", class: useTool}, {phrase: "using", class: useTool},
	{phrase: "used", class: useTool, perfect: true}, {phrase: "run", class: useTool}, {phrase: "runs", class: useTool},
	{phrase: "running", class: useTool}, {phrase: "runs on", class: useTool},
	{phrase: "run on", class: useTool}, {phrase: "running on", class: useTool}, {phrase: "requires", class: useTool}, {phrase: "pins", class: useTool}, {phrase: "pinned to", class: useTool}, {phrase: "adopted", class: useTool},
	{phrase: "installed", class: useTool}, {phrase: "built with", class: useTool}, {phrase: "built on", class: useTool},
	{phrase: "written in", class: useTool}, {phrase: "based on", class: useTool}, {phrase: "powered by", class: useTool},
	{phrase: "write scripts in", class: useTool}, {phrase: "write my scripts in", class: useTool}, {phrase: "write code in", class: useTool},
	{phrase: "code in", class: useTool}, {phrase: "program in", class: useTool},
	{phrase: "depend on", class: useTool}, {phrase: "depends on", class: useTool}, {phrase: "on", class: useTool, onlyOn: true},
	{phrase: "使用", class: useTool}, {phrase: "用的是", class: useTool}, {phrase: "用了", class: useTool},
	{phrase: "采用", class: useTool}, {phrase: "基于", class: useTool}, {phrase: "是用", class: useTool},
	{phrase: "在用", class: useTool}, {phrase: "跑在", class: useTool}, {phrase: "装了", class: useTool},
	{phrase: "安装了", class: useTool}, {phrase: "develop on", class: useTool}, {phrase: "develop in", class: useTool},
	{phrase: "deploy with", class: useTool}, {phrase: "deploy on", class: useTool}, {phrase: "deploy to", class: useTool},
	{phrase: "host on", class: useTool}, {phrase: "hosted on", class: useTool}, {phrase: "host our code on", class: useTool},
	{phrase: "frontend is", class: useTool}, {phrase: "backend is", class: useTool}, {phrase: "database is", class: useTool},
	{phrase: "前端是", class: useTool}, {phrase: "后端是", class: useTool}, {phrase: "数据库是", class: useTool},
}

var (
	beForOn = []string{"'re", " are", " is", "'m", " am", " still", " now", "'s"}
	// A bare 用 is a trigger only after one of these subjects, optionally
	// with adverbs between: "我们现在都用 Go", "后端用 Rust".
	zhUseSubjects = []string{"我们", "咱们", "项目", "团队", "公司", "后端", "前端", "服务端", "服务", "仓库", "代码", "我", "缓存", "数据库", "向量库", "主站", "CI", "ci"}
	// Habitual ones too: "我平时用 Python 3.10 写脚本", "我们一般用 Go".
	zhUseAdverbs = []string{"现在", "目前", "一直", "都", "主要", "还", "也", "正在", "在", "已经", "全", "统一", "决定", "开始", "改",
		"平时", "平常", "通常", "一般", "经常", "日常", "习惯"}
)

type triggerMatch struct {
	start, end, class int
	knownOnly         bool // only a known tool may follow
}

// findTriggers returns up to four non-overlapping triggers in c, in order.
func findTriggers(c *clause) []triggerMatch {
	var found []triggerMatch
	for _, t := range toolTriggers {
		for i := 0; i < len(c.low); {
			j := strings.Index(c.low[i:], t.phrase)
			if j < 0 {
				break
			}
			start := i + j
			end := start + len(t.phrase)
			i = end
			if isASCIIAlnum(t.phrase[0]) && !wordAt(c.low, start, end) {
				continue
			}
			if t.perfect && !presentPerfect(c.low[:start]) {
				continue
			}
			if t.onlyOn && !hasSuffixAny(c.low[:start], beForOn) && !hasSuffixAny(strings.TrimRight(c.low[:start], " "), beForOn) {
				continue
			}
			if t.to {
				e, ok := toWithin(c.low, end)
				if !ok {
					continue
				}
				end = e
			}
			if strings.HasPrefix(c.low[end:], "了") {
				end += len("了")
			}
			found = append(found, triggerMatch{start: start, end: end, class: t.class})
		}
	}
	found = append(found, zhBareUse(c)...)
	found = append(found, roleNouns(c)...)
	if len(found) == 0 {
		return nil
	}
	sort.Slice(found, func(a, b int) bool {
		if found[a].start != found[b].start {
			return found[a].start < found[b].start
		}
		return found[a].end > found[b].end
	})
	out := found[:0]
	lastEnd := -1
	for _, m := range found {
		if m.start < lastEnd {
			continue
		}
		out = append(out, m)
		lastEnd = m.end
		if len(out) == 4 {
			break
		}
	}
	return out
}

// wordAt reports whether low[start:end] is a whole word.
func wordAt(low string, start, end int) bool {
	return (start == 0 || !isWordByte(low[start-1])) && (end == len(low) || !isWordByte(low[end]))
}

// toWithin finds " to " within two words after i and returns the offset
// after it: "upgraded to", "upgraded the backend to".
func toWithin(low string, i int) (int, bool) {
	rest := low[i:]
	for words := 0; words < 3; words++ {
		rest = strings.TrimLeft(rest, " ")
		if strings.HasPrefix(rest, "to ") || rest == "to" {
			return len(low) - len(rest) + 2, true
		}
		sp := strings.IndexByte(rest, ' ')
		if sp < 0 {
			return 0, false
		}
		rest = rest[sp:]
	}
	return 0, false
}

// Where a tool is named by the part of the stack it is, with no verb:
// "前端 Next.js 14，后端 FastAPI", "backend FastAPI, vectors in Qdrant", "我在
// Ubuntu 22.04 上开发". Only a known tool counts after these (see
// knownOnly), so "the backend Team" is not a tool.
var reRoleNoun = regexp.MustCompile(`(?:^|[,，、;；]\s*)(?:the |our )?(?:frontend|front-end|backend|back-end|database|db|cache|queue|vectors? in|search|ci|前端|后端|数据库|缓存|向量库|消息队列|主站|搜索)(?:\s*(?:is|:|：|用的是|是))?\s*|在\s*(?:[a-z][a-z0-9.+#-]*(?:\s*\d+(?:\.\d+)*)?)\s*上(?:开发|跑|运行|部署|写)`)

func roleNouns(c *clause) []triggerMatch {
	var out []triggerMatch
	for _, m := range reRoleNoun.FindAllStringIndex(c.low, 4) {
		end := m[1]
		if strings.HasPrefix(c.low[m[0]:], "在") {
			end = m[0] + len("在") // the tool follows 在
		}
		out = append(out, triggerMatch{m[0], end, useTool, true})
	}
	return out
}

// zhBareUse finds "<subject><adverbs>用" in Chinese text.
func zhBareUse(c *clause) []triggerMatch {
	var out []triggerMatch
	for i := 0; i < len(c.text); {
		j := strings.Index(c.text[i:], "用")
		if j < 0 {
			break
		}
		at := i + j
		end := at + len("用")
		i = end
		if strings.HasPrefix(c.text[end:], "户") {
			continue
		}
		head := strings.TrimRight(c.text[:at], " ")
		// "我们的项目 myclaw 用 …": a project's name between subject and verb.
		if k := strings.LastIndexByte(head, ' '); k > 0 && isProjectName(head[k+1:]) && strings.HasSuffix(strings.TrimRight(head[:k], " "), "项目") {
			head = strings.TrimRight(head[:k], " ")
		} else if k := strings.LastIndex(head, "项目"); k >= 0 && isProjectName(head[k+len("项目"):]) {
			head = head[:k+len("项目")]
		}
		// "我现在改用 …" is a switch: 改 right before 用 says so.
		class := useTool
		if strings.HasSuffix(head, "改") {
			class = switchTool
		}
		for trimmed := true; trimmed; {
			trimmed = false
			for _, a := range zhUseAdverbs {
				if strings.HasSuffix(head, a) {
					head, trimmed = head[:len(head)-len(a)], true
					break
				}
			}
		}
		for _, s := range zhUseSubjects {
			if strings.HasSuffix(head, s) {
				out = append(out, triggerMatch{start: len(head) - len(s), end: end, class: class})
				break
			}
		}
	}
	return out
}

// isProjectName reports whether s looks like a project's name written in
// Latin letters: "myclaw", "payments-api".
func isProjectName(s string) bool {
	if s == "" || len(s) > 40 || !('a' <= s[0]|0x20 && s[0]|0x20 <= 'z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isASCIIAlnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.' {
			return false
		}
	}
	return true
}

// presentPerfect reports whether the words before a participle make it a
// present perfect: "we've used", "I have always used".
func presentPerfect(before string) bool {
	words := strings.Fields(before)
	for i := len(words) - 1; i >= 0 && i >= len(words)-3; i-- {
		w := words[i]
		switch {
		case w == "have" || w == "has" || strings.HasSuffix(w, "'ve"):
			return true
		case w == "always" || w == "long" || w == "mostly" || w == "only" || w == "also" || w == "just":
			continue
		}
		return false
	}
	return false
}
