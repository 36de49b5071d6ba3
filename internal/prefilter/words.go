package prefilter

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// The word lists. Chinese phrases are matched as substrings of the message;
// English phrases as whole words (see englishWords). Both are indexed once
// (see triggers) so a message is read once, not once per phrase.

var pronounsZH = list(
	"我的", "我们的", "咱们的", "你记得", "还记得", "记不记得", "记得吗",
	"之前说过", "我说过", "我提过", "我告诉过你", "我之前", "你知道我",
)

var pronounsEN = list(
	"my", "mine", "our", "ours", "remember", "remembered", "recall",
	"did i", "did we", "what did we", "what did i", "i told you",
	"i mentioned", "we discussed", "we talked about",
)

var timeZH = list(
	"上次", "上回", "昨天", "前天", "上周", "上星期", "上个月", "去年",
	"之前", "以前", "先前", "刚才", "前几天", "那天", "最近",
)

var timeEN = list(
	"last time", "yesterday", "last week", "last month", "last year",
	"earlier", "before", "previously", "the other day", "ago",
)

var preferenceZH = list(
	"喜欢", "偏好", "习惯", "爱好", "讨厌", "常用", "设置", "配置", "密码", "平时", "平常", "通常",
)

var preferenceEN = list(
	"prefer", "prefers", "preferred", "preference", "preferences",
	"favorite", "favourite", "favorites", "favourites", "usually",
	"i like", "i love", "i hate", "i always", "i never", "i tend to",
)

var questionZH = list("什么", "怎么", "为什么", "为何", "如何", "哪", "谁", "多少", "是否")

var questionEndZH = []string{"吗", "呢", "么", "嘛"}

// whWords open a question; padded on both sides and matched at the start
// of englishWords' output.
var whWords = padded(
	"what", "what's", "whats", "why", "how", "how's", "when", "where",
	"where's", "who", "who's", "whom", "whose", "which",
)

// acks are lowercased acknowledgements and continuations (seed 001 §5.2's
// skip list and the issue's).
var acks = longestFirst(
	"继续", "好的", "好", "嗯", "嗯嗯", "哦", "噢", "喔", "行", "可以", "对",
	"是的", "是", "确认", "收到", "明白", "明白了", "知道了", "谢谢", "多谢",
	"感谢", "没问题", "好滴", "哈哈", "哈",
	"ok", "okay", "k", "kk", "okey", "thanks", "thank you", "thx", "ty",
	"yes", "yep", "yeah", "yup", "no", "nope", "sure", "go on", "continue",
	"got it", "cool", "great", "nice", "done", "lgtm", "lol", "haha",
	"👍", "👌", "🙏", "✅", "🆗", "🙂", "😊",
)

func longestFirst(list ...string) []string {
	return slices.SortedStableFunc(slices.Values(list), func(a, b string) int {
		return cmp.Compare(len(b), len(a))
	})
}

func list(l ...string) []string { return l }

func padded(list ...string) []string {
	out := longestFirst(list...)
	for i, p := range out {
		out[i] = " " + p + " "
	}
	return out
}

// Trigger rules in the order they win: a message matching several is
// given the first.
const (
	trigPronoun = iota
	trigTime
	trigPreference
	trigQuestion
	numTriggers
)

var triggerNames = [numTriggers]string{RulePronoun, RuleTime, RulePreference, RuleQuestion}

type phrase struct {
	text string // Chinese as written; English as words, each followed by a space
	rule int
}

// triggers indexes every trigger phrase by its first rune (Chinese) or its
// first word (English), longest phrase first.
var triggers = func() (t struct {
	zh     map[rune][]phrase
	zhHint [1 << 16 / 64]uint64 // first runes of zh, for a cheap reject
	en     map[string][]phrase
}) {
	t.zh = map[rune][]phrase{}
	t.en = map[string][]phrase{}
	add := func(rule int, zh, en []string) {
		for _, p := range zh {
			r, _ := utf8.DecodeRuneInString(p)
			t.zh[r] = append(t.zh[r], phrase{p, rule})
			t.zhHint[r/64] |= 1 << (r % 64)
		}
		for _, p := range en {
			first, _, _ := strings.Cut(p, " ")
			t.en[first] = append(t.en[first], phrase{p + " ", rule})
		}
	}
	add(trigPronoun, pronounsZH, pronounsEN)
	add(trigTime, timeZH, timeEN)
	add(trigPreference, preferenceZH, preferenceEN)
	add(trigQuestion, questionZH, nil)
	for r, ps := range t.zh {
		t.zh[r] = longestPhrasesFirst(ps)
	}
	for w, ps := range t.en {
		t.en[w] = longestPhrasesFirst(ps)
	}
	return t
}()

func longestPhrasesFirst(ps []phrase) []phrase {
	slices.SortStableFunc(ps, func(a, b phrase) int { return cmp.Compare(len(b.text), len(a.text)) })
	return ps
}

// findTriggers returns, for each trigger rule, the phrase that matched
// first in text (lowercased) or words (englishWords of it); Chinese
// matches are preferred to English ones for the same rule.
func findTriggers(text, words string) (found [numTriggers]string) {
	for i, r := range text {
		if r < 0x3000 || r >= 1<<16 || triggers.zhHint[r/64]&(1<<(r%64)) == 0 {
			continue
		}
		for _, p := range triggers.zh[r] {
			if found[p.rule] == "" && strings.HasPrefix(text[i:], p.text) {
				found[p.rule] = p.text
			}
		}
		if found[trigPronoun] != "" {
			return found
		}
	}
	for i := 1; i < len(words); {
		end := strings.IndexByte(words[i:], ' ')
		for _, p := range triggers.en[words[i:i+end]] {
			if found[p.rule] == "" && strings.HasPrefix(words[i:], p.text) {
				found[p.rule] = strings.TrimSpace(p.text)
			}
		}
		if found[trigPronoun] != "" {
			return found
		}
		i += end + 1
	}
	return found
}
