package ruleextract

import (
	"regexp"
	"strings"
)

// Preferences: what the user likes, dislikes and prefers. Like identity,
// anchored at the clause start on the speaker ("我妈妈喜欢…" is not the
// user's preference). "我们/we" counts only for "prefer": a team convention
// ("we prefer tabs") is worth keeping, "we like pizza" is not the user.
var (
	reZhFavorite = regexp.MustCompile(`^我最(?:喜欢|爱)的(.{1,20}?)是(.+)$`)
	reZhPref     = regexp.MustCompile(`^(我们团队|我们|咱们|我)((?:也|还|很|真的|真|特别|非常|最|比较|一直|超级|超|更加|更|挺|蛮|确实|其实|本人|都|一向|向来|通常|平时|一般|个人)*)(不太喜欢|不怎么喜欢|不喜欢|不爱|不再喜欢|讨厌|厌恶|受不了|反感|更喜欢|更偏好|更倾向于|偏好|偏爱|倾向于|习惯于|习惯用|习惯|喜欢|热爱|喜爱|钟爱|爱)(.+)$`)

	// Habits: "我每天早上喝一杯拿铁", "I drink oat milk lattes every morning".
	// What someone has every day is what they like.
	reZhHabit = regexp.MustCompile(`^我((?:每天|天天|平时|平常|经常|常常|一般|通常|每周|周末|早上|晚上|中午|下午|总是|都|会)+)(喝|吃|听|看|玩|读|练|打)((?:一杯|一碗|一份|一点|一会儿|一会|点)?)(.+)$`)
	// Abstaining: "我从来不喝咖啡", "I don't eat meat", "I no longer drink coffee".
	reZhAbstain = regexp.MustCompile(`^我(?:从来|从|一向|一直|平时)*(?:不|不再)(喝|吃|抽)(.+)$`)
	reEnAbstain = regexp.MustCompile(`^i (?:don't|do not|never|no longer|stopped|quit|gave up|(?:have|'ve) given up) (drink|eat|drinking|eating|smoke|smoking)\s+(.+)$`)
	reEnHabit   = regexp.MustCompile(`^i (?:(usually|always|often|normally|regularly|mostly) )?(drink|eat|listen to|read|play|watch|have)\s+(.+?)(?:\s+(every (?:morning|day|night|evening|week|weekend)|daily|each (?:morning|day)|at night|in the morning))?$`)

	reEnFavorite = regexp.MustCompile(`^my (?:all-time |absolute |personal )?favou?rite (.{1,40}?) (?:is|are) (.+)$`)
	reEnPref     = regexp.MustCompile(`^(i|we|our team|the team)((?: (?:really|also|still|just|generally|usually|always|definitely|totally|absolutely|strongly|actually|personally|truly|do|much|very much|kind of|kinda|sort of|mostly|normally|typically|tend to))*) (likes|loves|prefers|enjoys|hates|dislikes|like|love|prefer|enjoy|adore|hate|dislike|detest|despise|loathe|can't stand|cannot stand|can not stand|don't like|do not like|don't really like|don't enjoy|do not enjoy|don't love|no longer like|don't care for)\s+(.+)$`)
	reEnRather   = regexp.MustCompile(`^(i|we)(?:'d| would) (?:(?:much|really|rather|definitely) )?(prefer|rather|like)\s+(.+)$`)
	reEnFan      = regexp.MustCompile(`^i(?:'m| am) (a (?:big |huge |great )?fan of|(?:really |very )?into|not a (?:big )?fan of|not (?:really )?into|fond of|not fond of)\s+(.+)$`)
)

// prefVerb is how a matched verb reads in content and which predicate it
// is.
type prefVerb struct {
	pred    string
	en      string // third person, for "User …"
	updates bool
}

var enPrefVerbs = map[string]prefVerb{
	"like":              {PredLikes, "likes", false},
	"likes":             {PredLikes, "likes", false},
	"loves":             {PredLikes, "loves", false},
	"enjoys":            {PredLikes, "enjoys", false},
	"prefers":           {PredPrefers, "prefers", false},
	"hates":             {PredDislikes, "hates", false},
	"dislikes":          {PredDislikes, "dislikes", false},
	"love":              {PredLikes, "loves", false},
	"enjoy":             {PredLikes, "enjoys", false},
	"adore":             {PredLikes, "adores", false},
	"prefer":            {PredPrefers, "prefers", false},
	"hate":              {PredDislikes, "hates", false},
	"dislike":           {PredDislikes, "dislikes", false},
	"detest":            {PredDislikes, "detests", false},
	"despise":           {PredDislikes, "despises", false},
	"loathe":            {PredDislikes, "loathes", false},
	"can't stand":       {PredDislikes, "can't stand", false},
	"cannot stand":      {PredDislikes, "can't stand", false},
	"can not stand":     {PredDislikes, "can't stand", false},
	"don't like":        {PredDislikes, "doesn't like", false},
	"do not like":       {PredDislikes, "doesn't like", false},
	"don't really like": {PredDislikes, "doesn't really like", false},
	"don't enjoy":       {PredDislikes, "doesn't enjoy", false},
	"do not enjoy":      {PredDislikes, "doesn't enjoy", false},
	"don't love":        {PredDislikes, "doesn't love", false},
	"don't care for":    {PredDislikes, "doesn't care for", false},
	"no longer like":    {PredDislikes, "no longer likes", true},
}

var zhPrefPreds = map[string]string{
	"不太喜欢": PredDislikes, "不怎么喜欢": PredDislikes, "不喜欢": PredDislikes, "不爱": PredDislikes,
	"不再喜欢": PredDislikes, "讨厌": PredDislikes, "厌恶": PredDislikes, "受不了": PredDislikes, "反感": PredDislikes,
	"更喜欢": PredPrefers, "更偏好": PredPrefers, "更倾向于": PredPrefers, "偏好": PredPrefers, "偏爱": PredPrefers,
	"倾向于": PredPrefers, "习惯于": PredPrefers, "习惯用": PredPrefers, "习惯": PredPrefers,
	"喜欢": PredLikes, "热爱": PredLikes, "喜爱": PredLikes, "钟爱": PredLikes, "爱": PredLikes,
}

func (x *extractor) preference(c *clause) bool {
	if x.habitChange(c) {
		return true
	}
	if strings.HasPrefix(c.text, "我") || strings.HasPrefix(c.text, "咱们") {
		if m := reZhAbstain.FindStringSubmatch(c.text); m != nil {
			if obj := zhObject(m[2]); obj != "" {
				x.add(fact{pred: PredDislikes, subject: "user", content: "用户不" + m[1] + obj, topic: topicOf(m[1], obj), conf: confWeak})
				return true
			}
		}
		if m := reZhHabit.FindStringSubmatch(c.text); m != nil {
			if obj := zhObject(m[4]); obj != "" {
				x.add(fact{pred: PredLikes, subject: "user", content: "用户" + m[1] + m[2] + m[3] + obj, topic: topicOf(m[2], obj), conf: confWeak})
				return true
			}
		}
		return x.zhPreference(c)
	}
	if m := reEnAbstain.FindStringSubmatchIndex(c.low); m != nil {
		verb, raw := c.low[m[2]:m[3]], c.text[m[4]:m[5]]
		stop := stopsHabit(c.low)
		if stop {
			// "I don't drink beer anymore": the tail is not the object.
			raw = raw[:len(reEnNowTail.ReplaceAllString(lowerASCII(raw), ""))]
		}
		if obj := enObject(raw); obj != "" {
			f := fact{pred: PredDislikes, subject: "user", content: "User doesn't " + enBase[verb] + " " + obj, topic: topicOf(verb, obj), conf: confWeak}
			if stop {
				// A habit given up replaces what its topic held.
				f.content, f.conf, f.updates = "User no longer "+enBase[verb]+"s "+obj, confClear, true
			}
			x.add(f)
			return true
		}
	}
	// A habit needs its frequency: "I drink coffee" alone says little.
	if m := reEnHabit.FindStringSubmatchIndex(c.low); m != nil && (m[2] >= 0 || m[8] >= 0) {
		if obj := enObject(c.text[m[6]:m[7]]); obj != "" {
			verb := c.low[m[4]:m[5]]
			verb = map[string]string{"drink": "drinks", "eat": "eats", "listen to": "listens to", "read": "reads",
				"play": "plays", "watch": "watches", "have": "has"}[verb]
			when := ""
			if m[8] >= 0 {
				when = " " + c.text[m[8]:m[9]]
			}
			if m[2] >= 0 {
				verb = c.low[m[2]:m[3]] + " " + verb
			}
			x.add(fact{pred: PredLikes, subject: "user", content: "User " + verb + " " + obj + when, topic: topicOf(c.low[m[4]:m[5]], obj), conf: confWeak})
			return true
		}
	}
	if m := reEnFavorite.FindStringSubmatchIndex(c.low); m != nil {
		what, obj := trimEdges(c.text[m[2]:m[3]]), enObject(c.text[m[4]:m[5]])
		if what != "" && obj != "" {
			x.add(fact{pred: PredLikes, subject: "user", content: "User's favorite " + what + " is " + obj, topic: topicOf(what, obj), conf: confStrong})
			return true
		}
		return false
	}
	if m := reEnFan.FindStringSubmatchIndex(c.low); m != nil {
		phrase := c.low[m[2]:m[3]]
		obj := enObject(c.text[m[4]:m[5]])
		if obj == "" {
			return false
		}
		pred := PredLikes
		if strings.HasPrefix(phrase, "not") {
			pred = PredDislikes
		}
		x.add(fact{pred: pred, subject: "user", content: "User is " + phrase + " " + obj, topic: topicOf("", obj), conf: confClear})
		return true
	}
	if m := reEnRather.FindStringSubmatchIndex(c.low); m != nil {
		obj := enObject(c.text[m[6]:m[7]])
		if obj == "" {
			return false
		}
		verb := "would prefer"
		switch c.low[m[4]:m[5]] {
		case "rather":
			verb = "would rather"
		case "like":
			// "I'd like answers in TypeScript" is a standing wish; "I'd
			// like you to fix this" and "I'd like to know" are requests.
			if lo := lowerASCII(obj); hasPrefixAny(lo, []string{"to ", "you", "a ", "an ", "some", "it", "this", "that", "help"}) {
				return false
			}
			verb = "would like"
		}
		x.add(fact{pred: PredPrefers, subject: "user", content: enWho(c.low[m[2]:m[3]]) + " " + verb + " " + obj, topic: topicOf("", obj), conf: confWeak})
		return true
	}
	m := reEnPref.FindStringSubmatchIndex(c.low)
	if m == nil {
		return false
	}
	who, verb := c.low[m[2]:m[3]], c.low[m[6]:m[7]]
	pv := enPrefVerbs[verb]
	if who != "i" {
		who = "we"
	}
	if who == "we" && pv.pred != PredPrefers {
		return false
	}
	obj := enObject(c.text[m[8]:m[9]])
	if obj == "" || pv.pred == "" {
		return false
	}
	conf := confStrong
	if who == "we" {
		conf = confWeak
	}
	// "I no longer like X" replaces a topic's values ("no longer like
	// coffee"); with no topic it would replace every dislike there is.
	topic := topicOf("", obj)
	x.add(fact{pred: pv.pred, subject: "user", content: enWho(who) + " " + pv.en + " " + obj, topic: topic, conf: conf, updates: pv.updates && topic != ""})
	return true
}

// enBase is the base form of an abstention's verb.
var enBase = map[string]string{"drink": "drink", "drinking": "drink", "eat": "eat", "eating": "eat", "smoke": "smoke", "smoking": "smoke"}

func enWho(pronoun string) string {
	if pronoun == "we" {
		return "The team"
	}
	return "User"
}

func (x *extractor) zhPreference(c *clause) bool {
	if m := reZhFavorite.FindStringSubmatch(c.text); m != nil {
		what, obj := trimEdges(m[1]), zhObject(m[2])
		if what != "" && obj != "" {
			x.add(fact{pred: PredLikes, subject: "user", content: "用户最喜欢的" + what + "是" + obj, topic: topicOf(what, obj), conf: confStrong})
			return true
		}
		return false
	}
	m := reZhPref.FindStringSubmatch(c.text)
	if m == nil {
		return false
	}
	who, adverbs, verb := m[1], m[2], m[3]
	pred := zhPrefPreds[verb]
	if strings.Contains(adverbs, "更") && pred == PredLikes {
		pred, verb = PredPrefers, "更"+verb
	}
	if who == "我们团队" {
		who = "我们"
	}
	if who != "我" && pred != PredPrefers {
		return false
	}
	obj := zhObject(m[4])
	if obj == "" || pred == "" {
		return false
	}
	subj, conf := "用户", confStrong
	if who != "我" {
		subj, conf = "团队", confWeak
	}
	topic := topicOf("", obj)
	x.add(fact{pred: pred, subject: "user", content: subj + verb + obj, topic: topic, conf: conf, updates: verb == "不再喜欢" && topic != ""})
	return true
}

// zhObject cleans the object of a Chinese preference and rejects the ones
// that are not a standing preference: a person ("我爱你"), "this" ("我喜欢这个"),
// or the tail of another verb ("我爱上了…", "我习惯了").
func zhObject(raw string) string {
	o := trimParticles(raw)
	o = strings.TrimPrefix(o, "的是")
	for _, stop := range []string{"因为", "但是", "不过", "所以"} {
		if i := strings.Index(o, stop); i > 0 {
			o = o[:i]
		}
	}
	o = trimParticles(o)
	if o == "" || strings.ContainsAny(firstRune(o), "你您他她它这那上过着了死") {
		return ""
	}
	return capRunes(o, maxObjectRunes)
}

// enObject cleans the object of an English preference: cut at a reason,
// speaker words turned to third person, and rejected when it is about the
// conversation rather than the user ("I like it", "I love your idea",
// "I hate to say …").
func enObject(raw string) string {
	low := lowerASCII(raw)
	o := trimEdges(cutAtAny(raw, low, enObjectEnds))
	low = lowerASCII(o)
	if o == "" || low == "to" || strings.HasSuffix(low, " to") {
		return ""
	}
	for _, w := range enBadObjects {
		if hasWordPrefix(low, w) {
			return ""
		}
	}
	if reEnPickedObject.MatchString(low) || reEnForNow.MatchString(low) {
		return "" // "I like the second option better": a pick in this conversation
	}
	words := strings.Fields(o)
	for i, w := range words {
		switch strings.ToLower(w) {
		case "my":
			words[i] = "their"
		case "me":
			words[i] = "them"
		case "myself":
			words[i] = "themselves"
		case "i":
			words[i] = "they"
		}
	}
	return capRunes(strings.Join(words, " "), maxObjectRunes)
}

// enObjectEnds end the object of a preference: a reason, or a new clause
// after a comma or dash ("I love the leaves, it looks so cozy").
var enObjectEnds = []string{
	" because ", " since ", " but ", " so that ", " as long as ", " unless ", " though", " btw", " lol",
	", it", ", that", ", they", ", which", ", so ", ", and it", ", and they", ", but", ", especially",
	" - ", " – ", " — ", "; ",
}

// reEnForNow ends an object scoped to the matter at hand: "I'd rather not
// use Java for this".
var reEnForNow = regexp.MustCompile(`\b(?:for (?:this|that|now|today|this one|that one|this project|the moment)|here|this time|in this case|right now)$`)

// reEnPickedObject is one of the things on the table in a conversation,
// named with a definite article: an option, an approach, a draft.
var reEnPickedObject = regexp.MustCompile(`^the (?:(?:first|second|third|fourth|last|other|latter|former|new|old|previous|original|current|updated|revised|shorter|longer|simpler|latest) )*(?:one|ones|option|options|approach|idea|suggestion|version|answer|solution|proposal|design|draft|snippet|fix|change|changes|wording|layout|example|variant|alternative|plan)\b`)

var enBadObjects = []string{
	"it", "that", "this", "these", "those", "you", "your", "him", "her", "them", "how", "what", "when",
	"the way", "the idea", "to say", "to think", "to admit", "to bother", "to ask", "to interrupt",
	"here", "there", "so", "very", "too", "a lot", "such", "doing this", "doing that",
}
