package ruleextract

import (
	"regexp"
	"strings"

	"github.com/engramhq/engram/internal/chars"
)

// Rules, remember-notes and decisions. Rules and notes keep the speaker's
// clause behind a label: an instruction is best remembered in the words it
// was given.
var (
	reZhRule = regexp.MustCompile(`^(?:请你|请|麻烦你|你)?(以后|今后|从现在开始|从现在起|从今以后|从今天起|往后|接下来)?[，,：:]?\s*(?:请|你)?(?:都|也)?(总是|始终|永远不要|永远别|永远|每次都|每次|一律|务必|一定要|必须|千万不要|千万别|千万|绝对不要|绝对不能|绝不|不要再|不要|别再|别|不许|不准|禁止|切勿|不得|不能|尽量|统一|记得)?(.+)$`)
	reEnRule = regexp.MustCompile(`^(?:(?:please|pls|kindly) )?(?:(from now on|going forward|moving forward|in the future|in future|from here on(?: out)?|henceforth|for future reference)\s*,?\s*)?(?:(?:please|pls) )?(?:(always|never|don't ever|do not ever|don't forget to|do not forget to|remember to|make sure to|make sure you|make sure that|be sure to|(?:you (?:must|should|need to|have to)|i (?:want|need) you to|i'd like you to) (?:always|never)|don't|do not|stop|avoid) )?(.+)$`)

	reZhRemember = regexp.MustCompile(`^(?:请你|请|你|麻烦你?)?(?:一定要|务必|要)?(?:帮我)?(记住|记下来|记下|记好|记一下|记着)[了：:，,]?\s*(.+)$`)
	reEnRemember = regexp.MustCompile(`^(?:(?:please|pls|also) )?(remember|keep in mind|don't forget|do not forget|note down|make a note)\b( that|:|,|)\s*(.+)$`)

	reZhDecision = regexp.MustCompile(`^(我们|咱们|团队|大家|我)?(?:最终|最后|已经|刚刚|刚|一致|还是)*(?:决定|敲定|商定|拍板|定下来)(?:了|好了)?[：:，,]?\s*(.+)$`)
	reZhGoWith   = regexp.MustCompile(`^(?:那|那么)?(?:就|还是)(?:用|选|采用)(.+?)吧?$`)
	reEnDecided  = regexp.MustCompile(`^(we|i|the team|our team)(?: have|'ve)?(?: (?:finally|just|already|all))? (?:decided|agreed|settled|chose|picked)(?: to| that| on)?\s+(.+)$`)
	reEnGoWith   = regexp.MustCompile(`^(?:(?:let's|let us|we'll|we will|we're going to|we are going to|we're gonna) go|we(?:'re| are) going|we went) with\s+(.+)$`)
	reEnLetsUse  = regexp.MustCompile(`^let's (use|switch to|move to|adopt|stick with)\s+(.+)$`)
	reEnDecision = regexp.MustCompile(`^(?:(?:the )?final decision(?: is|\s*[:：])|decision\s*[:：])\s*(.+)$`)
)

// remember handles an explicit request to remember. What follows is read
// as its own statement first ("记住，我叫李雷" is the user's name, stated with
// extra certainty); failing that it is a rule ("remember to run the tests")
// or a note kept as said.
func (x *extractor) remember(c *clause) bool {
	if !strings.Contains(c.text, "记") && !containsAny(c.low, "remember", "keep in mind", "forget", "note down", "make a note") {
		return false
	}
	var rest, restLow string
	var toDo bool
	conf := confStrong
	if m := reZhRemember.FindStringSubmatchIndex(c.text); m != nil {
		rest, restLow = c.text[m[4]:], c.low[m[4]:]
		toDo = hasPrefixAny(rest, zhRuleOpeners)
	} else if m := reEnRemember.FindStringSubmatchIndex(c.low); m != nil {
		rest, restLow = c.text[m[6]:], c.low[m[6]:]
		toDo = strings.HasPrefix(restLow, "to ")
		// "remember that …" or "remember: …" asks to keep something;
		// "remember, …" is as often a figure of speech.
		if conn := c.low[m[4]:m[5]]; toDo {
			conf = confWeak // "remember to …" is as often a one-off as a rule
		} else if conn == "" || conn == "," {
			conf = confGuess
		}
	} else {
		return false
	}
	rest = trimEdges(rest)
	if rest == "" || looksLikeQuestion(rest, restLow) {
		return false
	}
	if toDo && oneOff(c) {
		return true // "don't forget to close the connection in that function": for now
	}
	inner := newClause(rest)
	before := len(x.out)
	if !toDo && x.personal(inner) {
		for i := before; i < len(x.out); i++ {
			x.out[i].Confidence = min(x.out[i].Confidence+confBoost, confMax)
		}
		return true
	}
	// "Remember the bug from yesterday?" calls something up; only "remember
	// that …" or "remember: …" asks to keep a note.
	if !toDo && !c.zh && conf == confGuess && !startsStatement(restLow) {
		return false
	}
	pred, label := PredNote, "用户要求记住："
	if !c.zh {
		label = "User asked to remember: "
	}
	if toDo {
		pred, label = PredRule, "规则："
		if !c.zh {
			label = "Rule: "
		}
	}
	said := rest
	if toDo {
		said = c.text
	}
	x.add(fact{pred: pred, subject: "user", content: label + said, conf: conf})
	return true
}

var zhRuleOpeners = []string{"要", "不要", "别", "每次", "总是", "以后", "一定", "务必", "永远", "千万", "始终", "必须", "先"}

// rule reads an instruction for the agent. A bare "不要…" or "don't …" is
// often a one-off ("不要删除这个文件"), so it goes to pending; with a time
// marker ("以后", "from now on") or a standing modal ("总是", "never") it is a
// rule.
func (x *extractor) rule(c *clause) bool {
	// "Whenever you touch SQL, add a migration": an instruction for every
	// time something happens is standing.
	if c.cond != "" && habitual(c.cond) && isImperative(c) {
		sep, label := ", ", "Rule: "
		if c.zh {
			sep, label = "，", "规则："
		}
		x.add(fact{pred: PredRule, subject: "user", content: label + c.cond + sep + c.text, conf: confClear})
		return true
	}
	if !(c.zh && containsAny(c.text, zhRuleKeywords...)) && !containsAny(c.low, enRuleKeywords...) &&
		!containsAny(c.low, "rule", "规则", "规定") && !strings.HasPrefix(c.text, "请") {
		return false
	}
	if containsAny(c.text, "决定", "商定", "敲定") || containsAny(c.low, "decided", "decision", "agreed") {
		return false // a decision, which may well say "统一" or "always"
	}
	var conf float64
	text := c.text
	low := c.low
	// "Please respond in bullet points from now on": the marker at the end.
	for _, tail := range []string{" from now on", " going forward", " in the future", " from here on"} {
		if strings.HasSuffix(low, tail) && len(low) > len(tail)+3 {
			low = tail[1:] + ", " + strings.TrimSuffix(low[:len(low)-len(tail)], ",")
			break
		}
	}
	if rest, ok := cutLabel(c); ok {
		// "Rule: never push directly to main" / "规则：…": said as a rule.
		text, conf = rest, confStrong
	} else if m := reZhRule.FindStringSubmatch(c.text); m != nil && chars.HasHan(c.text) {
		conf = zhRuleConfidence(m[1] != "", m[2], m[3])
		if conf == 0 && containsAny(c.text, zhStandingModals...) {
			conf = confClear // "代码注释统一用英文写", "写 Python 的时候一律用 type hints"
		}
		if conf == 0 && strings.HasPrefix(c.text, "请") && containsAny(c.text, "回答", "回复", "答复") {
			conf = confClear // "请用简体中文回答我": how to answer is a standing request
		}
	} else if m := reEnRule.FindStringSubmatch(low); m != nil {
		conf = enRuleConfidence(m[1] != "", m[2], m[3])
	}
	if conf == 0 || conf < confStrong && oneOff(c) {
		return false
	}
	if c.cond != "" {
		sep := ", "
		if c.zh {
			sep = "，"
		}
		text = c.cond + sep + text
	}
	label := "规则："
	if !c.zh {
		label = "Rule: "
	}
	x.add(fact{pred: PredRule, subject: "user", content: label + text, conf: conf})
	return true
}

// One-off instructions: a bare "don't" or "别" about this very thing or this
// very moment is a request for now, not a standing rule ("Don't run the
// migration yet", "close the DB connection in that function", "别删这个文件").
var (
	reEnOneOff = regexp.MustCompile(`\b(?:(?:this|that|these|those) (?:one|file|files|function|line|lines|test|tests|step|change|changes|command|commit|pr|branch|table|query|script|bug|error|part|bit|method|class|folder|page)\b|it\b|else\b|(?:this|that|these|those)$|yet\b|for now\b|right now\b|this time\b|today\b|tonight\b|just now\b|at the moment\b|for the moment\b|until\b|again\b)`)
	zhOneOff   = []string{"这个", "那个", "这些", "那些", "这次", "这回", "这里", "那里", "先别", "先不要", "暂时", "今天", "现在", "马上", "还要用", "了吧"}
)

func oneOff(c *clause) bool {
	if c.zh {
		return containsAny(c.text, zhOneOff...)
	}
	return reEnOneOff.MatchString(c.low)
}

// zhStandingModals make a clause a rule wherever they sit in it.
var zhStandingModals = []string{"一律", "统一", "必须", "务必", "始终", "总是", "禁止", "永远不要", "千万不要", "千万别"}

// cutLabel removes a "Rule:" or "规则：" label from a clause.
func cutLabel(c *clause) (string, bool) {
	for _, l := range []string{"rule:", "rule -", "规则：", "规则:", "规定：", "规定:", "我们规定：", "我们规定:"} {
		if hasPrefixFold(c.text, l) || strings.HasPrefix(c.text, l) {
			if rest := strings.TrimSpace(c.text[len(l):]); runeLen(rest) >= 3 {
				return rest, true
			}
		}
	}
	return "", false
}

func zhRuleConfidence(timeMarker bool, modal, rest string) float64 {
	if runeLen(rest) < 2 {
		return 0
	}
	switch modal {
	case "":
		if !timeMarker || hasPrefixAny(rest, []string{"再", "有空", "有时间", "见", "聊", "的", "我", "咱们", "会", "就知道", "你就"}) {
			return 0
		}
		return confStrong
	case "不要", "别", "别再", "不要再", "不能":
		if hasPrefixAny(rest, zhNotRules) {
			return 0
		}
	}
	if timeMarker {
		return confStrong
	}
	switch modal {
	case "总是", "始终", "永远不要", "永远别", "永远", "每次都", "每次", "一律", "务必", "必须", "千万不要",
		"千万别", "千万", "绝对不要", "绝对不能", "绝不", "不许", "不准", "禁止", "切勿", "不得":
		return confStrong
	case "一定要", "记得", "不要再", "别再":
		return confClear
	}
	return confWeak
}

// zhNotRules follow 别/不要 in set phrases that are not instructions: 别人,
// 别的, 不要紧, 别担心, 不要客气 …
var zhNotRules = []string{
	"人", "的", "处", "急", "担心", "客气", "介意", "着急", "管", "怕", "紧", "谢", "说了", "提了", "闹", "逗",
	"开玩笑", "这样说", "误会", "生气", "难过", "害怕", "在意", "忘",
}

func enRuleConfidence(timeMarker bool, modal, rest string) float64 {
	if len(rest) < 3 {
		return 0
	}
	next, _, _ := strings.Cut(rest, " ")
	next = strings.TrimRight(next, ",.!?;:")
	if strings.HasPrefix(rest, "give up") {
		return 0 // "never give up", "don't give up": encouragement
	}
	switch modal {
	case "":
		// "In the future, I'm aiming to …" talks about the speaker.
		if !timeMarker || enSubjects[next] {
			return 0
		}
		return confStrong
	case "don't", "do not", "stop", "avoid":
		if enNotRuleAfterDont[next] {
			return 0
		}
	case "always", "never":
		// An instruction goes on with a bare verb ("always run gofmt");
		// "always here to help", "never saw it coming" and "always
		// bringing a smile" describe instead.
		if enNotRuleAfterAlways[next] || enNotRuleAfterNever[next] || notBareVerb(next) {
			return 0
		}
	}
	if timeMarker {
		return confStrong
	}
	switch {
	case modal == "always" || modal == "never" || strings.HasSuffix(modal, "always") || strings.HasSuffix(modal, "never") ||
		strings.Contains(modal, "ever") || modal == "remember to":
		return confStrong
	}
	// "don't forget to …", "make sure …", "don't …": as often one-off advice
	// as a standing rule.
	return confWeak
}

// notBareVerb reports whether w cannot be the bare verb of an instruction:
// a participle, a past tense, an adverb of place or an adjective.
func notBareVerb(w string) bool {
	if len(w) > 4 && (strings.HasSuffix(w, "ing") || strings.HasSuffix(w, "ed")) && w != "need" && w != "feed" && w != "embed" {
		return true
	}
	return enNotBareVerbs[w]
}

var enSubjects = setOf("i", "i'm", "i'll", "i've", "i'd", "we", "we're", "we'll", "we've", "my", "our", "it", "it's", "this", "that", "there", "he", "she", "they")

var enNotBareVerbs = setOf(
	"here", "there", "good", "great", "happy", "glad", "up", "so", "calm", "fun", "nice", "ready", "welcome",
	"busy", "open", "free", "available", "true", "right", "my", "your", "his", "her", "our", "their", "with",
	"on", "in", "at", "for", "about", "around", "together", "saw", "went", "got", "thought", "knew", "said",
	"felt", "made", "came", "took", "gave", "found", "loved", "liked", "wanted", "tried", "fails", "works",
	"amazing", "awesome", "wonderful", "lovely", "interesting", "exciting", "hard", "easy", "fine", "worth",
	"better", "best", "more", "too", "such", "an", "say", "by", "done", "been", "seen", "had", "gone", "heard",
	"known", "taken", "given", "gotten", "become", "eaten", "love", "hear", "like", "enjoy", "appreciate",
	"believe", "remember", "wonder", "wish",
)

var (
	enNotRuleAfterDont = map[string]bool{
		"worry": true, "know": true, "care": true, "mind": true, "think": true, "understand": true, "get": true,
		"see": true, "have": true, "need": true, "want": true, "feel": true, "be": true, "bother": true,
		"hesitate": true, "apologize": true, "apologise": true, "panic": true, "mean": true, "like": true,
		"really": true, "even": true, "just": true, "remember": true, "it": true, "that": true, "this": true,
		"me": true, "there": true, "here": true, "now": true, "yet": true, "sure": true, "believe": true,
		"recall": true, "agree": true, "quite": true, "give": true, "quit": true, "let": true, "miss": true,
		"stress": true, "lose": true, "doubt": true, "cry": true, "sweat": true, "beat": true, "look": true,
		"blame": true, "underestimate": true, "overthink": true, "forget": true, "fear": true, "rush": true,
	}
	enNotRuleAfterAlways = map[string]bool{
		"been": true, "was": true, "were": true, "had": true, "did": true, "thought": true, "wanted": true,
		"liked": true, "loved": true, "knew": true, "said": true, "the": true, "a": true, "so": true,
	}
	enNotRuleAfterNever = map[string]bool{
		"mind": true, "been": true, "heard": true, "seen": true, "used": true, "had": true, "did": true,
		"tried": true, "thought": true, "knew": true, "got": true, "was": true, "were": true, "worked": true,
		"said": true, "really": true, "ever": true, "again": true, "the": true, "a": true,
	}
)

// decision reads a decision taken. It is stored for the project, not the
// user: "we decided to use Postgres" is about the work.
func (x *extractor) decision(c *clause) bool {
	var rest string
	var conf float64
	zh := c.zh
	switch {
	case strings.Contains(c.text, "决定") || strings.Contains(c.text, "敲定") || strings.Contains(c.text, "商定") ||
		strings.Contains(c.text, "拍板") || strings.Contains(c.text, "定下来"):
		m := reZhDecision.FindStringSubmatch(c.text)
		if m == nil {
			return false
		}
		rest, conf = m[2], confClear
		if m[1] == "我" {
			conf = confWeak
		}
		if hasPrefixAny(rest, []string{"不了", "好", "了吗", "吧", "不下"}) {
			return false
		}
	case strings.HasPrefix(c.text, "就") || strings.HasPrefix(c.text, "那") || strings.HasPrefix(c.text, "还是"):
		m := reZhGoWith.FindStringSubmatch(c.text)
		if m == nil {
			return false
		}
		rest, conf = "用"+m[1], confWeak
	case !containsAny(c.low, "decid", "agreed", "go with", "going with", "went with", "let's", "decision", "settled on", "chose", "picked"):
		return false
	default:
		if m := reEnDecided.FindStringSubmatchIndex(c.low); m != nil {
			rest, conf = c.text[m[4]:m[5]], confClear
			if c.low[m[2]:m[3]] == "i" {
				conf = confWeak
			}
			rest = strings.TrimPrefix(rest, "to ")
		} else if m := reEnGoWith.FindStringSubmatchIndex(c.low); m != nil {
			rest, conf = "go with "+c.text[m[2]:m[3]], confWeak
		} else if m := reEnLetsUse.FindStringSubmatchIndex(c.low); m != nil {
			rest, conf = c.text[m[2]:m[3]]+" "+c.text[m[4]:m[5]], confWeak
		} else if m := reEnDecision.FindStringSubmatchIndex(c.low); m != nil {
			rest, conf = c.text[m[2]:m[3]], confClear
		} else {
			return false
		}
	}
	rest = trimParticles(rest)
	if runeLen(rest) < 2 {
		return false
	}
	label := "决定："
	if !zh {
		label = "Decision: "
	}
	x.add(fact{pred: PredDecision, subject: x.decisionSubject(), content: label + rest, conf: conf, scoped: true})
	return true
}

// ruleKeywords gate the rule patterns: a clause holding none of them cannot
// be a rule, and most clauses hold none.
var zhRuleKeywords = []string{
	"以后", "今后", "从现在", "从今", "往后", "接下来", "总是", "始终", "永远", "每次", "一律", "务必", "一定", "必须",
	"千万", "绝对", "绝不", "不要", "别", "不许", "不准", "禁止", "切勿", "不得", "不能", "尽量", "统一", "记得",
}

var enRuleKeywords = []string{
	"always", "never", "don't", "do not", "forget", "remember to", "make sure", "be sure", "you must",
	"stop", "avoid", "from now on", "going forward", "moving forward", "in the future", "in future",
	"from here on", "henceforth", "for future reference",
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// startsStatement reports whether English text opens with a subject and a
// verb rather than a noun phrase: "the staging server is …", "our fiscal
// year starts …", not "the bug from yesterday".
func startsStatement(low string) bool {
	return reEnStatement.MatchString(low)
}

var reEnStatement = regexp.MustCompile(`^(?:(?:the|our|my|this|that|we|i|you) )?(?:[a-z0-9.\-_/']+ ){0,3}(?:is|are|was|were|has|have|must|should|will|can|runs|starts|ends|lives|uses|needs|takes|use|need|run)\b`)

// habitual reports whether a condition recurs: "whenever …", "every time
// …", "when I say …", "每次…", "每当…".
func habitual(cond string) bool {
	low := lowerASCII(cond)
	return hasPrefixAny(low, []string{"whenever", "every time", "each time", "any time", "anytime", "when i say", "if i say"}) ||
		hasPrefixAny(cond, []string{"每次", "每当", "只要"})
}
