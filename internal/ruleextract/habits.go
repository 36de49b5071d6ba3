package ruleextract

import (
	"regexp"
	"strings"

	"github.com/engramhq/engram/internal/chars"
)

// Habits and their changes. Likes, dislikes and prefers hold many values,
// so a change cannot replace them all: "I switched to tea" must retire
// "likes coffee", not "likes jazz". A habit therefore carries a topic —
// what it is a habit of (drinks, food, smoking) — and the projector keeps
// one slot per topic of a user's preferences (memory.Slot): a change
// (Updates) replaces the values of its topic and leaves the others.

// habitVerbs name the topic of a habit by its verb, in either language.
var habitVerbs = map[string]string{
	"喝": "drinks", "drink": "drinks", "drinks": "drinks", "drinking": "drinks",
	"吃": "food", "eat": "food", "eats": "food", "eating": "food",
	"抽": "smoking", "smoke": "smoking", "smokes": "smoking", "smoking": "smoking",
}

// Things whose name says the topic, for a preference said without a
// habit verb: "I really like coffee", "我换成燕麦奶了".
var (
	enDrinks = setOf("coffee", "coffees", "tea", "teas", "latte", "lattes", "espresso", "espressos", "cappuccino",
		"cappuccinos", "americano", "americanos", "flat white", "mocha", "matcha", "chai", "milk", "oat milk",
		"soy milk", "juice", "beer", "beers", "wine", "wines", "soda", "sodas", "cola", "coke", "kombucha",
		"whisky", "whiskey", "sake", "decaf", "green tea", "black tea", "herbal tea", "cold brew", "hot chocolate",
		"smoothies", "smoothie", "sparkling water")
	zhDrinks = []string{"咖啡", "茶", "奶茶", "拿铁", "美式", "摩卡", "抹茶", "牛奶", "燕麦奶", "豆奶", "果汁", "啤酒",
		"红酒", "白酒", "葡萄酒", "可乐", "豆浆", "酸奶", "气泡水", "白开水", "热水", "冰水", "酒"}
	enFood = setOf("meat", "vegetarian", "vegan", "plant-based", "keto", "gluten-free", "salad", "salads", "oatmeal",
		"porridge", "sugar", "sweets", "fast food", "junk food")
	zhFood = []string{"素", "素食", "肉", "荤", "轻食", "沙拉", "燕麦", "甜食", "外卖", "快餐", "夜宵", "早餐", "午餐", "晚餐", "零食"}
)

// topicOf is the topic of a habit or preference: its verb's, else that of
// the thing it names; "" when neither says (jazz, hiking: such likes are
// many, and no change replaces them).
func topicOf(verb, object string) string {
	if t, ok := habitVerbs[strings.ToLower(strings.TrimSpace(verb))]; ok {
		return t
	}
	o := strings.TrimSpace(object)
	for v, t := range habitVerbs {
		if chars.HasHan(v) && strings.HasPrefix(o, v) {
			return t // "喝咖啡", "吃素"
		}
	}
	if chars.HasHan(o) {
		for _, w := range zhDrinks {
			if strings.HasPrefix(o, w) || strings.HasSuffix(o, w) {
				return "drinks"
			}
		}
		for _, w := range zhFood {
			if strings.HasPrefix(o, w) || strings.HasSuffix(o, w) {
				return "food"
			}
		}
		return ""
	}
	low := strings.Trim(lowerASCII(o), " .!")
	for _, drop := range []string{"a ", "an ", "the ", "some ", "iced ", "hot ", "black ", "strong ", "decaf ", "my "} {
		low = strings.TrimPrefix(low, drop)
	}
	words := strings.Fields(low)
	for n := min(3, len(words)); n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			phrase := strings.Join(words[i:i+n], " ")
			switch {
			case enDrinks[phrase]:
				return "drinks"
			case enFood[phrase]:
				return "food"
			}
		}
	}
	return ""
}

var (
	// "我现在改喝茶了", "我已经换成喝茶了", "改吃素了", "我换成燕麦奶了".
	reZhHabitChange = regexp.MustCompile(`^我?((?:现在|最近|已经|目前|后来|早就|都|也|开始|慢慢)*)(?:改|换)(?:成|为)?(喝|吃|抽)?了?(.+)$`)
	// "我不再喝咖啡了", "我现在不喝咖啡了", "我已经不抽烟了": a habit stopped.
	reZhHabitStop = regexp.MustCompile(`^我?((?:现在|最近|已经|早就|也)*)(不再|不|没再)(喝|吃|抽)(.+?)了?$`)

	// "I switched to tea now", "I've switched from coffee to green tea".
	reEnHabitChange = regexp.MustCompile(`^i(?:'ve| have)? (?:(?:just|recently|now|finally|already|since) )*(?:switched|changed|moved|gone|went|swapped)(?: over| back)? (?:from (.+?) )?to\s+(.+)$`)
	// "I drink tea instead of coffee now".
	reEnInstead = regexp.MustCompile(`^i (?:(?:now|mostly|usually|only|just) )*(drink|eat|have) (.+?)(?: now)? instead(?: of (.+))?$`)
	// What a change may end with that is not its object.
	reEnNowTail = regexp.MustCompile(`(?:,? (?:now|these days|nowadays|instead|lately|anymore|any more|for good))+$`)
)

// habitChange reads a changed habit: the new value of its topic, said to
// replace what was known of it. It reports whether the clause was one.
func (x *extractor) habitChange(c *clause) bool {
	if c.zh {
		if m := reZhHabitChange.FindStringSubmatch(c.text); m != nil {
			obj := zhObject(m[3])
			topic := topicOf(m[2], obj)
			if obj == "" || topic == "" {
				return false // "我改用 Cursor 了": a tool, for the tool pass
			}
			x.add(fact{pred: PredLikes, subject: "user", content: "用户" + m[1] + "改" + m[2] + obj, topic: topic,
				conf: confClear, updates: true})
			return true
		}
		m := reZhHabitStop.FindStringSubmatch(c.text)
		if m == nil || m[2] == "不" && m[1] == "" {
			return false // "我不喝咖啡" says no more than a dislike
		}
		obj := zhObject(m[4])
		if obj == "" {
			return false
		}
		x.add(fact{pred: PredDislikes, subject: "user", content: "用户不再" + m[3] + obj, topic: topicOf(m[3], obj),
			conf: confClear, updates: true})
		return true
	}
	low := reEnNowTail.ReplaceAllString(c.low, "")
	text := c.text[:len(low)]
	if m := reEnHabitChange.FindStringSubmatchIndex(low); m != nil {
		to := enObject(text[m[4]:m[5]])
		topic := topicOf("", to)
		from := ""
		if m[2] >= 0 {
			from = enObject(text[m[2]:m[3]])
			if topic == "" {
				topic = topicOf("", from)
			}
		}
		if to == "" || topic == "" {
			return false // "I switched to Emacs": a tool, for the tool pass
		}
		content := "User switched to " + to
		if from != "" {
			content = "User switched from " + from + " to " + to
		}
		x.add(fact{pred: PredLikes, subject: "user", content: content, topic: topic, conf: confClear, updates: true})
		return true
	}
	if m := reEnInstead.FindStringSubmatchIndex(low); m != nil {
		verb, obj := low[m[2]:m[3]], enObject(text[m[4]:m[5]])
		if verb == "have" {
			verb = ""
		}
		topic := topicOf(verb, obj)
		if obj == "" || topic == "" {
			return false
		}
		third := map[string]string{"drink": "drinks", "eat": "eats", "": "has"}[verb]
		content := "User " + third + " " + obj + " instead"
		if m[6] >= 0 {
			if was := enObject(text[m[6]:m[7]]); was != "" {
				content += " of " + was
			}
		}
		x.add(fact{pred: PredLikes, subject: "user", content: content, topic: topic, conf: confClear, updates: true})
		return true
	}
	return false
}

// stopsHabit reports whether an abstention ("I no longer drink coffee",
// "I stopped eating meat", "I don't drink beer anymore") ends a habit
// rather than states a standing dislike.
func stopsHabit(low string) bool {
	return containsAny(low, "no longer", "stopped", "quit", "gave up", "given up") ||
		containsWord(low, "anymore", "any more")
}
