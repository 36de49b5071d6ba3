package ruleextract

import (
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
)

// Input is one conversation message.
type Input struct {
	Role      string // user, assistant, system or tool
	Content   string
	ToolCalls []ToolCall
	// ToolResults are what tools returned; a failed one becomes an error
	// memory (seed 003's ERROR kind), named for the program that failed.
	ToolResults []ToolResult
	// Project, when known, scopes tool, path and decision facts and names
	// their subject in content ("Project engram uses Go 1.26").
	Project string
}

// ToolCall is a tool the agent called: its name and its raw input (often
// JSON holding a shell command).
type ToolCall struct {
	ID    string
	Name  string
	Input string
}

// ToolResult is what a tool returned. Call is the call it answers when the
// caller knows it; otherwise the call with ToolCallID in the same Input is
// used.
type ToolResult struct {
	ToolCallID string
	Call       ToolCall
	Content    string
	IsError    bool
}

// Extract returns the facts the rules find in one message, in the order
// they were stated. Only user turns yield identity, preferences, rules and
// notes; assistant turns yield tool, path and decision facts capped at
// confidence 0.7; system and tool turns yield nothing from their content
// (a system prompt is configuration, a tool result is not a statement), but
// tool calls on any non-system turn are read for package installs.
func Extract(in Input) []memory.Candidate {
	role := strings.ToLower(strings.TrimSpace(in.Role))
	x := &extractor{
		user:    role == "user",
		project: collapseSpace(strings.TrimSpace(strings.ToValidUTF8(in.Project, ""))),
	}
	if role == "user" || role == "assistant" {
		x.content(prepare(in.Content))
	}
	if role != "system" {
		for _, tc := range in.ToolCalls {
			x.toolCall(tc)
		}
		for _, r := range in.ToolResults {
			if r.IsError {
				x.toolError(r, in.ToolCalls)
			}
		}
	}
	return x.out
}

// extractor collects candidates for one message.
type extractor struct {
	user       bool
	project    string
	correcting bool // the sentence being read corrects something said before
	out        []memory.Candidate
}

// clause is one statement the patterns run against.
type clause struct {
	text string // stripped of lead-in fillers and trailing punctuation
	low  string // lowerASCII(text): same byte offsets
	zh   bool   // written in Chinese: content templates follow the clause
	cond string // a condition clause just before it ("如果测试失败"), for rules
}

func newClause(text string) *clause {
	text = collapseSpace(trimEdges(stripLead(text)))
	return &clause{text: text, low: lowerASCII(text), zh: chars.HasHan(text)}
}

func (x *extractor) content(text string) {
	for _, s := range splitSentences(text) {
		body, correcting := stripCorrection(s.text)
		x.correcting = correcting
		body = cutQuotedTask(body)
		if notMeant(body) {
			continue
		}
		clauses := splitClauses(body)
		cond := ""
		speaker := false // the previous clause was the user speaking of themselves
		rule := -1       // the candidate index of a rule the previous clause stated
		prefBefore := false
		for i, raw := range clauses {
			if len(x.out) >= maxCandidates {
				return
			}
			if len(raw) > maxClauseBytes {
				cond = ""
				continue
			}
			c := newClause(raw)
			if c.text == "" {
				continue
			}
			// "永远不要直接推送到 main，要先开 PR": the rule goes on.
			if rule >= 0 && continuesRule(c) {
				sep := ", "
				if c.zh {
					sep = "，"
				}
				x.out[rule].Content = capRunes(x.out[rule].Content+sep+c.text, maxContentRunes)
				continue
			}
			rule = -1
			// "我叫李雷，住在杭州，不喜欢加班": Chinese drops the repeated 我.
			if speaker && elidesSpeaker(c.text) {
				c = newClause("我" + c.text)
			}
			// "我女儿今年六岁，喜欢画画": the daughter likes drawing.
			speaker = strings.HasPrefix(c.text, "我") && !strings.HasPrefix(c.text, "我们") && !aboutSomeoneElse(c)
			// "Can you remember that I'm on Windows?" asks to remember.
			if m := reEnAskRemember.FindStringIndex(c.low); m != nil && !c.zh {
				c = newClause("remember " + c.text[m[1]:])
				x.clause(c)
				continue
			}
			if (s.question && i == len(clauses)-1) || looksLikeQuestion(c.text, c.low) {
				cond = ""
				continue
			}
			// "Assuming we used Kafka, would ordering hold?": a condition
			// in a question is part of what is asked.
			if s.question && (isCondition(c) || isSupposition(c)) {
				cond = ""
				continue
			}
			c.cond, cond = cond, ""
			if isCondition(c) {
				cond = c.text
			}
			before := len(x.out)
			x.clause(c)
			// "我喜欢简洁的回答，不要太啰嗦": a bare "don't" after a preference
			// says the preference again; it is not a rule of its own.
			if n := len(x.out); n == before+1 && x.out[before].Predicate == PredRule &&
				x.out[before].Confidence < confStrong && prefBefore {
				x.out = x.out[:before]
			}
			prefBefore = false
			for _, cand := range x.out[before:] {
				prefBefore = prefBefore || cand.Kind == memory.KindPreference
			}
			if n := len(x.out); n == before+1 && x.out[before].Predicate == PredRule {
				rule = before
			}
		}
	}
}

var reEnAskRemember = regexp.MustCompile(`^(?:can|could|would|will) you (?:please )?(?:remember|keep in mind|note)\b\s*`)

// zhSpeakerAdverbs may open a clause whose 我 was left out: "我住在北京，
// 平时喜欢喝咖啡".
var zhSpeakerAdverbs = []string{"平时", "平常", "每天", "现在", "目前", "也", "还", "一直", "周末", "早上", "晚上", "主要", "其实", "比较", "特别", "很", "最", "都", "经常", "通常", "一般"}

// elidesSpeaker reports whether a Chinese clause goes on about the speaker
// of the clause before without repeating 我.
func elidesSpeaker(text string) bool {
	t := text
	for trimmed := true; trimmed; {
		trimmed = false
		for _, a := range zhSpeakerAdverbs {
			if rest, ok := strings.CutPrefix(t, a); ok && rest != "" {
				t, trimmed = rest, true
				break
			}
		}
	}
	if hasPrefixAny(t, zhElidedVerbs) {
		return true
	}
	// "在阿里巴巴上班", "在字节跳动做后端开发".
	return strings.HasPrefix(t, "在") && containsAny(t, "工作", "上班", "任职", "实习", "做", "当", "读")
}

// continuesRule reports whether a clause carries on the rule before it
// rather than saying something new: "要先开 PR", "而是开一个 PR", "open a
// pull request instead".
func continuesRule(c *clause) bool {
	if c.zh {
		return hasPrefixAny(c.text, []string{"要先", "先", "而是", "应该", "改为", "改用", "请", "然后", "再", "最好", "必须", "要", "不要", "别", "不用", "而不是", "不是",
			"都要", "都得", "都必须", "都需要", "就要", "就得"})
	}
	if hasPrefixAny(c.low, []string{"not ", "no "}) {
		return true // "always use f-strings, not % formatting"
	}
	if rest, ok := strings.CutPrefix(c.low, "never "); ok && len(strings.Fields(rest)) <= 3 {
		return true // "always use f-strings, never % formatting"
	}
	return hasPrefixAny(c.low, []string{"open ", "use ", "instead", "then ", "and ", "run ", "create ", "ask ", "make ", "send ", "put ", "go through ", "rather "})
}

// Corrections: "Correction: my name is Anna, not Ana.", "纠正一下，我叫张伟".
// What follows is stated as replacing what was said before.
var (
	enCorrections = []string{"correction", "small correction", "quick correction", "one correction", "minor correction", "to correct myself", "sorry, i misspoke", "i misspoke", "scratch that", "oops", "i meant", "my mistake", "my bad"}
	zhCorrections = []string{"不好意思说错了", "不好意思，说错了", "之前说错了", "刚才说错了", "我说错了", "说错了", "纠正一下", "更正一下", "纠正", "更正", "不对"}
)

func stripCorrection(s string) (string, bool) {
	// "Oops, I meant …": markers may come in a row.
	t, ok := stripCorrectionOnce(s)
	for ok {
		next, more := stripCorrectionOnce(t)
		if !more || next == t {
			break
		}
		t = next
	}
	return t, ok
}

func stripCorrectionOnce(s string) (string, bool) {
	t := strings.TrimSpace(s)
	// "Wait, I meant …": a filler may come first.
	if lead := stripLead(t); lead != t && !strings.HasPrefix(lowerASCII(t), "sorry") {
		t = lead
	}
	low := lowerASCII(t)
	for _, w := range enCorrections {
		if hasWordPrefix(low, w) {
			return strings.TrimLeft(t[len(w):], " ,:;-—"), true
		}
	}
	for _, w := range zhCorrections {
		if rest, ok := strings.CutPrefix(t, w); ok {
			return strings.TrimLeft(rest, " ,，:：;；-—"), true
		}
	}
	return s, false
}

// clause runs every family over one clause. Identity and preference
// patterns are anchored at the clause start and exclude each other; a
// clause that stated something about the user ("I love Python") is not also
// read as a tool fact.
func (x *extractor) clause(c *clause) {
	if aboutSomeoneElse(c) {
		return // "我同事用 Vim", "my wife likes sushi": not the user's facts
	}
	if x.user {
		if x.remember(c) {
			return
		}
		if x.personal(c) {
			return
		}
		if x.plan(c) {
			return
		}
		if x.rule(c) {
			return // "always use pnpm" is the rule, not a tool fact as well
		}
	}
	// A decision to use a tool is not yet the tool in use: "we decided to
	// move logging to Loki next quarter" is taken before the move, so the
	// decision is the one memory and the tool pass does not run.
	if x.decision(c) {
		return
	}
	// "If we had more budget, we'd use Datadog": what follows a condition
	// holds only if it does.
	if !isHypothetical(c) && !isImperative(c) && c.cond == "" {
		x.tools(c)
		x.paths(c)
	}
}

// Imperatives ask for something to be done ("Use Python 3.12 for this
// script", "run it on Node 20"); they state nothing about the setup, and a
// standing one was read as a rule before this.
var enImperatives = setOf("use", "run", "try", "install", "switch", "add", "upgrade", "downgrade", "set",
	"put", "move", "change", "replace", "pin", "bump", "update", "deploy", "build", "test", "make", "create",
	"write", "open", "check", "rewrite", "port", "migrate", "compile", "call", "import", "remove", "delete")

func isImperative(c *clause) bool {
	if c.zh {
		return false
	}
	low := strings.TrimPrefix(strings.TrimPrefix(c.low, "please "), "pls ")
	first, _, _ := strings.Cut(low, " ")
	return enImperatives[first]
}

// Third parties: a clause about someone else is not about the user.
var (
	reZhOther = regexp.MustCompile(`^我(?:的)?(?:同事|朋友|老婆|妻子|老公|丈夫|妈妈|妈|爸爸|爸|母亲|父亲|老板|领导|女儿|儿子|哥哥|姐姐|弟弟|妹妹|家人|同学|室友|女朋友|男朋友|孩子|上司|客户)`)
	reEnOther = regexp.MustCompile(`^(?:my|our) (?:wife|husband|colleague|colleagues|friend|friends|boss|brother|sister|mom|mother|dad|father|son|daughter|partner|girlfriend|boyfriend|coworker|coworkers|co-worker|cofounder|co-founder|teammate|teammates|manager|kid|kids|roommate|parents|cousin|neighbor|neighbour|client|clients|customer|customers|cto|ceo|lead|tech lead|pm|intern|interns|mentor|teacher|professor|landlord|students|pupils|users|readers|family|relatives|reports|direct reports)\b|^(?:he|she|they|his|her|their|someone|somebody|everyone|everybody|nobody|people)\b|^(?:many|most|some|a lot of|lots of|plenty of|other|few|a few|all) (?:people|teams|companies|developers|devs|engineers|users|folks|orgs|organizations|shops|startups)\b`)
	// A person named as the subject: "Sarah on the data team uses DuckDB",
	// "Ravi said he prefers tabs".
	reEnNamedOther = regexp.MustCompile(`^[A-Z][a-z]+(?: [A-Z][a-z]+)? (?:(?:on|from|in|at) (?:the|our|my) |(?:said|says|told|tells|thinks|thought|mentioned|mentions|asked|wants|wanted|reckons|claims)\b)`)
)

var reEnWithMe = regexp.MustCompile(`^my [a-z]+ and (?:i|me)\b`)

func aboutSomeoneElse(c *clause) bool {
	if reEnOthersCallMe.MatchString(c.low) || reEnWithMe.MatchString(c.low) {
		return false // "everyone calls me DJ", "my wife and I moved": the user too
	}
	return reZhOther.MatchString(c.text) || reEnOther.MatchString(c.low) || reEnNamedOther.MatchString(c.text)
}

// zhElidedVerbs open a clause whose subject 我 was left out because the
// clause before had it.
var zhElidedVerbs = []string{
	"住在", "来自", "今年", "喜欢", "不喜欢", "讨厌", "偏好", "更喜欢", "特别喜欢", "很喜欢", "最喜欢", "也喜欢",
	"不太喜欢", "爱吃", "爱喝", "在北京", "在上海", "是一名", "是个", "就职于", "老家", "用 ", "用的是", "从来不", "从不",
	"改喝", "改吃", "换成喝", "换成吃", "不再喝", "不再吃",
}

// personalOpeners are how every identity and preference pattern begins;
// checking them first spares most clauses a dozen regular expressions.
var personalOpeners = []string{
	"我", "你", "叫", "大家", "您", "称呼", "咱们", "i ", "i'", "my ", "call ", "please call", "pls call",
	"you can call", "just call", "feel free", "we ", "our team ", "the team ", "everyone ", "everybody ",
	"people ", "friends ", "most people ", "me and ",
}

// personal runs the user-only families that describe the speaker.
func (x *extractor) personal(c *clause) bool {
	if !hasPrefixAny(c.low, personalOpeners) {
		return !c.zh && x.nameHere(c)
	}
	return x.identity(c) || x.location(c) || x.work(c) || x.age(c) || x.preference(c)
}

// fact is one candidate before it is checked and stored.
type fact struct {
	pred, subject, content string
	topic                  string // what a preference is of (topicOf): a change replaces its topic
	conf                   float64
	updates                bool
	scoped                 bool // carries the project
	observed               bool // seen, not said: an assistant turn's cap does not apply
}

// add checks a fact and appends it. Every candidate leaves here, so this
// is where the package's promises to callers are kept: valid kind and
// category, non-empty fields, valid UTF-8, bounded length, confidence in
// [0, 1], no exact duplicates.
func (x *extractor) add(f fact) {
	sp, ok := specs[f.pred]
	if !ok || len(x.out) >= maxCandidates {
		return
	}
	subject := capRunes(strings.TrimSpace(strings.ToValidUTF8(f.subject, "")), 64)
	content := capRunes(collapseSpace(strings.TrimSpace(strings.ToValidUTF8(f.content, ""))), maxContentRunes)
	if subject == "" || content == "" || !utf8.ValidString(content) {
		return
	}
	conf := f.conf
	if !x.user && !f.observed {
		conf = math.Min(conf, confHint)
	}
	conf = math.Max(0, math.Min(conf, 1))
	for _, c := range x.out {
		if c.Subject == subject && c.Predicate == f.pred && c.Content == content {
			return
		}
	}
	if x.correcting && x.user && SingleValued(f.pred) {
		f.updates = true
	}
	cand := memory.Candidate{
		Kind:       sp.kind,
		Category:   sp.category,
		Subject:    subject,
		Predicate:  f.pred,
		Content:    content,
		Importance: sp.importance,
		Confidence: conf,
		Updates:    f.updates,
	}
	if f.scoped {
		cand.Project = x.project
	}
	cand.Topic = f.topic
	x.out = append(x.out, cand)
}

// Conditions and hypotheticals. A condition clause ("if tests fail") is
// kept for the rule after it; a hypothetical clause yields no tool or path
// facts ("如果我们用 Python 3.12", "we could switch to Redis").
var (
	enConditionStarts = []string{"if", "when", "whenever", "every time", "each time", "any time", "anytime", "unless", "before", "after", "once", "while"}
	zhConditionStarts = []string{"如果", "假如", "要是", "假设", "万一", "当", "每当", "除非", "在"}

	enHypothetical = []string{
		"if", "whether", "should", "could", "would", "might", "may", "maybe", "perhaps", "consider",
		"considering", "suggest", "suggests", "recommend", "plan", "planning", "thinking", "want",
		"wants", "wanna", "try", "trying", "suppose", "e.g", "example", "instance", "will", "gonna",
		"wish", "hope", "unless", "imagine", "pretend", "hypothetically", "going",
	}
	zhHypothetical = []string{
		"如果", "假如", "要是", "假设", "的话", "万一", "是否", "应该", "可以", "可能", "也许", "或许",
		"打算", "计划", "考虑", "建议", "想用", "想要", "准备", "要不要", "比如", "例如", "假装", "希望",
		"能否", "将来", "未来", "会用",
	}
)

func isCondition(c *clause) bool {
	for _, w := range enConditionStarts {
		if hasWordPrefix(c.low, w) {
			return true
		}
	}
	for _, w := range zhConditionStarts {
		if strings.HasPrefix(c.text, w) {
			// "在" opens a condition only as "在…时/前/后" ("在提交前").
			if w == "在" && !strings.HasSuffix(c.text, "时") && !strings.HasSuffix(c.text, "前") &&
				!strings.HasSuffix(c.text, "后") && !strings.HasSuffix(c.text, "的时候") {
				continue
			}
			return true
		}
	}
	return false
}

func isHypothetical(c *clause) bool {
	if containsAny(c.low, "'d ", "'ll ") {
		return true // "we'd use Datadog", "I'll use pnpm": would, will
	}
	for _, w := range zhHypothetical {
		if strings.Contains(c.text, w) {
			return true
		}
	}
	return containsWord(c.low, enHypothetical...)
}

// containsWord reports whether low contains any of words as a whole word.
func containsWord(low string, words ...string) bool {
	for _, w := range words {
		for i := 0; ; {
			j := strings.Index(low[i:], w)
			if j < 0 {
				break
			}
			j += i
			end := j + len(w)
			if (j == 0 || !isWordByte(low[j-1])) && (end == len(low) || !isWordByte(low[end])) {
				return true
			}
			i = j + 1
		}
	}
	return false
}

func isWordByte(c byte) bool { return isASCIIAlnum(c) || c == '\'' || c == '_' }

// who names the party a tool fact is about, in content: the named
// project, else the project the clause speaks of ("the project is written
// in Rust"), else the user.
func (x *extractor) who(c *clause, zh bool) string {
	aboutProject := !x.user || hasPrefixAny(c.low, projectSubjects)
	switch {
	case x.project != "" && zh:
		return "项目 " + x.project + " "
	case x.project != "":
		return "Project " + x.project
	case aboutProject && zh:
		return "项目"
	case aboutProject:
		return "The project"
	case zh:
		return "用户"
	}
	return "The user"
}

var projectSubjects = []string{
	"the project", "this project", "our project", "the repo", "this repo", "our repo", "the codebase",
	"our codebase", "the backend", "our backend", "the frontend", "our frontend", "the service", "our service",
	"the app", "our app", "项目", "这个项目", "我们的项目", "本项目", "后端", "前端", "服务", "仓库", "代码",
}

// decisionSubject is what a decision is about: the project.
func (x *extractor) decisionSubject() string {
	if x.project != "" {
		return x.project
	}
	return "project"
}

// Sentences that state nothing the speaker stands behind: hedged ("I
// think we're on Node 18, but I'm not sure") or sarcastic ("Oh sure, I
// just love debugging YAML at 2am").
var (
	enHedges = []string{"not sure", "not certain", "not 100% sure", "i guess", "i'm guessing", "iirc",
		"if i recall", "if i remember", "probably", "i doubt", "don't quote me", "looks like", "seems like", "it seems",
		"seems to", "appears to", "apparently", "i assume", "i suspect", "presumably"}
	zhHedges    = []string{"不确定", "不太确定", "记不清", "不记得", "说不准", "拿不准", "看起来", "看样子", "似乎", "貌似", "好像"}
	enSarcasm   = []string{"oh sure", "oh great", "oh yeah", "yeah right", "oh joy", "oh wonderful", "oh perfect", "sure, because"}
	zhSarcasm   = []string{"呵呵", "真是太好了呢", "可真行"}
	enSuppose   = []string{"assuming", "assume", "supposing", "suppose", "say", "let's say", "imagine", "hypothetically", "in theory", "theoretically", "in a world where"}
	zhSuppose   = []string{"假设", "假定", "设想", "理论上"}
	enTextTasks = []string{"translate", "rephrase", "rewrite", "reword", "paraphrase", "summarize", "summarise", "proofread", "draft", "write", "example", "examples", "sample", "template", "e.g", "for instance", "test message", "prompt", "input", "output", "fixture", "bio", "caption", "tweet", "email", "reply",
		// Reported speech: what follows is the other person's words.
		"says", "said", "say", "wrote", "writes", "replied", "replies", "asked", "asks", "forwarding", "forwarded", "quote", "quoting"}
	zhTextTasks = []string{"翻译", "改写", "润色", "总结", "例如", "比如", "示例", "例子", "样例", "模板", "帮我写", "写一段", "写一封", "回复",
		"写道", "转发", "原话"}
	enNotTaskTop = []string{"rule", "remember", "note", "correction", "decision", "final decision", "update"}
)

// notMeant reports whether a sentence is hedged or sarcastic, so that no
// clause of it is a fact.
func notMeant(s string) bool {
	low := lowerASCII(strings.TrimSpace(s))
	if containsAny(low, enHedges...) && containsWord(low, enHedges...) || containsAny(s, zhHedges...) {
		return true
	}
	return hasPrefixAny(low, enSarcasm) || strings.HasSuffix(low, " /s") || hasPrefixAny(s, zhSarcasm)
}

// isSupposition reports whether a clause sets up a case rather than states
// one: "assuming we used Kafka", "say I'm a new hire", "假设我们用 Kafka".
func isSupposition(c *clause) bool {
	for _, w := range enSuppose {
		if hasWordPrefix(c.low, w) {
			return true
		}
	}
	return hasPrefixAny(c.text, zhSuppose)
}

// cutQuotedTask keeps only the request of "Translate to German: I like
// cheese" or "Example message: my name is Bob": what follows the colon is
// text to work on, someone else's words, not the speaker's.
func cutQuotedTask(s string) string {
	i := strings.IndexAny(s, ":：")
	if i <= 0 {
		return s
	}
	head := s[:i]
	low := lowerASCII(head)
	if runeLen(head) > 60 || hasPrefixAny(strings.TrimSpace(low), enNotTaskTop) {
		return s
	}
	if containsWord(low, enTextTasks...) || containsAny(head, zhTextTasks...) {
		return head
	}
	// "客户说：我们用 Oracle": someone else's words, unless the speaker's.
	if t := strings.TrimSpace(head); strings.HasSuffix(t, "说") && !hasPrefixAny(t, []string{"我说", "我想说", "我要说", "我再说"}) {
		return head
	}
	return s
}
