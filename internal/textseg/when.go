package textseg

import (
	"regexp"
	"strings"
	"unicode"
)

// asksWhen finds a question about when something happened or how long it
// took: "When did …", "How long has …", "what year …", "什么时候", "哪天",
// "多久". Its answer is usually in a turn that says when ("yesterday",
// "last week", "two years ago", "上周"), not in the one that shares the
// most words with it.
var asksWhen = regexp.MustCompile(`(?i)(?:^|[.?!]\s+)when\b|\bwhen (?:did|do|does|was|were|is|are|will|has|have|had|would|could)\b|\bhow long\b|\bwhat (?:year|month|day|date|time)\b|\bhow many (?:days|weeks|months|years)\b|什么时候|啥时候|啥时|几时|什么时间|哪个月|哪天|哪一天|几号|几月|哪年|哪一年|多久|多长时间|何时`)

// AsksWhen reports whether an utterance asks when something happened or
// how long it took.
func AsksWhen(utterance string) bool { return asksWhen.MatchString(utterance) || asksClock(utterance) }

// notClock are what 几点 counts when it is not the hour ("有几点建议",
// "总结的几点原因").
var notClock = []string{"建议", "意见", "看法", "想法", "要求", "原因", "问题", "注意", "内容", "理由", "好处", "区别", "体会", "原则"}

// asksClock reports whether utterance asks the hour with 几点 ("几点走的",
// "是几点的车"), as "what time" does in English.
func asksClock(utterance string) bool {
	for rest := utterance; ; {
		i := strings.Index(rest, "几点")
		if i < 0 {
			return false
		}
		rest = rest[i+len("几点"):]
		if prefixIn(rest, notClock) == "" {
			return true
		}
	}
}

// timeWords are English words that place what a turn says in time.
// Words that are mostly something else (may, fall, spring, day in "a great
// day") are left out.
var timeWords = wordSet(`
	yesterday today tonight tomorrow ago recently lately earlier
	week weeks weekend weekends month months year years
	morning afternoon evening night
	monday tuesday wednesday thursday friday saturday sunday
	january february march april june july august september october november december
	summer winter autumn`)

// cjkTimeWords are their Chinese counterparts, found inside a run.
var cjkTimeWords = []string{"昨天", "今天", "明天", "前天", "后天", "昨晚", "今晚", "上周", "下周", "本周", "这周",
	"上个月", "下个月", "这个月", "去年", "今年", "明年", "前年", "周末", "星期", "礼拜", "刚才", "最近", "年前", "月前", "天前",
	"月份", "早上", "上午", "下午", "晚上", "年底", "年初", "月底", "月初", "春节", "过年", "国庆", "五一", "元旦", "中秋",
	"端午", "寒假", "暑假"}

// cjkDate finds a date written in Chinese: 5 月 20 日, 11月28号, 十月,
// 周三; and cjkHour an hour (8 点, 9点半), unless a notClock word follows.
var (
	cjkDate = regexp.MustCompile(`\d\s*[月日号]|[一二三四五六七八九十]月|周[一二三四五六日天]`)
	cjkHour = regexp.MustCompile(`\d\s*点`)
)

// MentionsTime reports whether text says when: a time word, a weekday or
// month, a year (four digits from 1900 to 2099), a date or an hour.
func MentionsTime(text string) bool {
	for _, w := range cjkTimeWords {
		if strings.Contains(text, w) {
			return true
		}
	}
	if cjkDate.MatchString(text) {
		return true
	}
	for _, at := range cjkHour.FindAllStringIndex(text, -1) {
		if prefixIn(text[at[1]:], notClock) == "" {
			return true
		}
	}
	start := -1
	for i, r := range text + " " {
		if unicode.IsLetter(r) && r < unicode.MaxASCII || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			w := text[start:i]
			if timeWords[strings.ToLower(w)] || isYear(w) {
				return true
			}
			start = -1
		}
	}
	return false
}

func isYear(w string) bool {
	if len(w) != 4 || (w[:2] != "19" && w[:2] != "20") {
		return false
	}
	return w[2] >= '0' && w[2] <= '9' && w[3] >= '0' && w[3] <= '9'
}
