package textseg

import "strings"

// englishStopwords are words too common to tell what a query is looking
// for. The list is short on purpose: a word listed here can only be searched
// for on its own. It includes the pieces contractions split into (don't →
// don, t).
var englishStopwords = wordSet(`
	a about after again all am an and any are as at
	be because been before being both but by
	can could d did do does doing don during each for from
	had has have having he her here hers him his how
	i if in into is it its just ll m me my no not now
	of on or our ours re s she should so some such
	t than that the their theirs them then there these they this those to too
	very ve was we were what when where which while who whom why will with would
	you your yours`)

func isStopword(lower string) bool { return englishStopwords[lower] }

// IsStopword reports whether a lowercased English word is one of the
// stopwords queries drop: too common to tell texts apart.
func IsStopword(lower string) bool { return englishStopwords[lower] }

func wordSet(words string) map[string]bool {
	set := make(map[string]bool)
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}

// cjkStop are Chinese function words a run is cut at and that are dropped
// from queries: question words, pronouns and particles that would otherwise
// glue onto the content words beside them (北京的天气怎么样 → 北京, 天气).
// Longer words come first because the first match wins.
var cjkStop = []string{
	"怎么样", "为什么", "是不是", "有没有", "还记得",
	"上次", "那次", "这次", "之前", "以前", "刚才", "来着", "记得", "给我",
	"什么", "怎么", "哪里", "哪些", "哪个", "我们", "你们", "他们", "她们", "咱们",
	"请问", "一下", "一个", "这个", "那个", "这些", "那些", "为了", "除了",
	"的", "了", "吗", "呢", "吧", "啊", "呀", "嘛", "我", "你",
}

// cjkKeep are common words that start with a function word's character;
// they are read whole so that 了解 is not cut into 了 and 解.
var cjkKeep = []string{"了解", "目的", "的确", "自我"}

// queryFraming are words that frame a question to a memory rather than
// say what it is about ("do you remember what I told you last time");
// Understand drops them as it drops stopwords. Stored text keeps them.
var queryFraming = wordSet(`
	remember recall remind last ago again anyway mentioned told tell said say
	know think please thanks thank ok okay yeah yes hey hi hmm um oh well
	one thing things something stuff`)
