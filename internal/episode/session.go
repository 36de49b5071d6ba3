package episode

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
)

// session is what Extractive reads out of an Input, computed once.
type session struct {
	turns      []Turn // in Index order
	indices    []int  // distinct turn indices, ascending
	calls      []call
	started    time.Time
	ended      time.Time
	busyTurns  int // turns with text or tool activity
	errors     int // results that were errors
	fixed      bool
	lastResult int // index in calls of the last call with a result, or -1
	decisions  int

	goal      span
	outcome   string
	closing   span // the sentence that says how it ended
	lastAsst  int  // position of the final assistant turn with text, or -1
	lastUser  int  // position of the user's last substantive turn, or -1
	decisionS []span
}

// span is a sentence of a turn, placed so sentences can be put back in
// conversation order.
type span struct {
	text string
	pos  int // the turn's position
	seq  int // the sentence's place in its turn
}

func analyse(in Input) *session {
	s := &session{turns: slices.Clone(in.Turns), lastResult: -1, lastAsst: -1, lastUser: -1}
	slices.SortStableFunc(s.turns, func(a, b Turn) int { return cmp.Compare(a.Index, b.Index) })
	s.indices = []int{}
	for pos, t := range s.turns {
		s.indices = append(s.indices, t.Index)
		if !t.Time.IsZero() {
			if s.started.IsZero() || t.Time.Before(s.started) {
				s.started = t.Time
			}
			if t.Time.After(s.ended) {
				s.ended = t.Time
			}
		}
		text := strings.TrimSpace(t.Content) != ""
		if text || len(t.ToolCalls) > 0 || len(t.ToolResults) > 0 {
			s.busyTurns++
		}
		switch normRole(t.Role) {
		case roleAssistant:
			if text {
				s.lastAsst = pos
			}
		case roleUser:
			if text && !isFiller(t.Content) {
				s.lastUser = pos
			}
		}
	}
	s.indices = slices.Compact(slices.Sorted(slices.Values(s.indices)))

	s.calls = pair(s.turns)
	sawError := false
	for i, c := range s.calls {
		if c.res == nil {
			continue
		}
		if c.res.IsError {
			s.errors++
			sawError = true
		} else if sawError {
			s.fixed = true
		}
		s.lastResult = i
	}
	s.goal = s.findGoal(in.Summary)
	s.decisionS = s.findDecisions()
	s.decisions = len(s.decisionS)
	s.outcome, s.closing = s.findOutcome()
	return s
}

func (s *session) text(pos int) string { return s.turns[pos].Content }

// Cues are matched on lower-cased text: English phrases as whole words,
// Chinese anywhere. Each list trades recall for precision; a phrase that
// often means something else ("leave it as is", "drop it from the list")
// is left out.

// fillers are whole messages that carry no request: greetings and
// acknowledgements, in English and Chinese.
var fillers = map[string]bool{
	"hi": true, "hello": true, "hey": true, "hi there": true, "hello there": true, "yo": true,
	"good morning": true, "good afternoon": true, "good evening": true,
	"ok": true, "okay": true, "k": true, "kk": true, "sure": true, "yes": true, "yep": true, "yeah": true,
	"no": true, "nope": true, "thanks": true, "thank you": true, "thx": true, "ty": true, "thanks a lot": true,
	"cool": true, "great": true, "nice": true, "good": true, "perfect": true, "awesome": true, "got it": true,
	"continue": true, "go on": true, "go ahead": true, "proceed": true, "lgtm": true,
	"你好": true, "您好": true, "嗨": true, "哈喽": true, "在吗": true, "在不在": true, "早": true, "早上好": true,
	"好": true, "好的": true, "好吧": true, "嗯": true, "嗯嗯": true, "对": true, "是": true, "是的": true,
	"行": true, "可以": true, "谢谢": true, "多谢": true, "谢啦": true, "感谢": true, "继续": true,
	"收到": true, "明白": true, "了解": true, "没问题": true, "太好了": true, "不错": true,
}

func isFiller(text string) bool {
	k := strings.ToLower(strings.TrimFunc(clean(text), func(r rune) bool {
		return unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r)
	}))
	k = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) {
			return ' '
		}
		return r
	}, k)), " ")
	if k == "" {
		return true
	}
	if fillers[k] {
		return true
	}
	// "ok thanks", "好的，谢谢": every word an acknowledgement.
	words := strings.Fields(k)
	if len(words) < 2 {
		return false
	}
	for _, w := range words {
		if !fillers[w] {
			return false
		}
	}
	return true
}

var greeting = regexp.MustCompile(`(?i)^(hi|hello|hey)( there)?\s*[,，!！.。]\s*|^(你好|您好|嗨)[,，!！.。\s]*`)

// findGoal is the first substantive user request, without leading
// greetings, cut to whole sentences within MaxGoalRunes. With no user
// turn it falls back to the agent's summary.
func (s *session) findGoal(agentSummary string) span {
	intro := span{pos: -1}
	for pos, t := range s.turns {
		if normRole(t.Role) != roleUser || isFiller(t.Content) {
			continue
		}
		text := strings.TrimSpace(strings.ToValidUTF8(t.Content, ""))
		if m := greeting.FindStringIndex(chars.CutBytes(text, 32)); m != nil {
			text = text[m[1]:]
		}
		ss := sentences(text)
		for len(ss) > 0 && (isFiller(ss[0]) || isIntroduction(ss[0]) || isAboutSelf(ss[0])) {
			ss = ss[1:]
		}
		if len(ss) == 0 {
			// Only a greeting or who the user is: the task comes later.
			if intro.pos < 0 {
				intro = span{text: fitSentences(text, MaxGoalRunes), pos: pos}
			}
			continue
		}
		return span{text: fitSentences(strings.Join(ss, "\n"), MaxGoalRunes), pos: pos}
	}
	if g := fitSentences(agentSummary, MaxGoalRunes); g != "" {
		return span{text: g, pos: -1}
	}
	return intro
}

// Introductions say who the user is, not what they came for: "Hi, I'm
// Ana, a backend developer at Acme.", "你好，我叫王磊，在字节做后端。" A
// sentence that also asks for something is not one.
var (
	introEN = regexp.MustCompile(`(?i)^(?:(?:hi|hello|hey)\b[\s,!.]*)?(?:my name is|my name's|call me|i work (?:at|for|as|on the)|i live in|i'?m (?:from|based)|i am (?:from|based)|this is [A-Z]|i'?m [A-Z][a-z]+\b|i am [A-Z][a-z]+\b|i'?m (?:an? |the )(?:[\w-]+ ){0,3}(?:engineer|developer|dev|designer|student|manager|scientist|analyst|lead|founder|consultant|researcher|architect|admin|writer|teacher|sre|intern|pm)\b)`)
	introZH = regexp.MustCompile(`^(?:(?:你好|您好|嗨|哈喽|大家好)[，,！!。\s]*)?(?:我叫|我是|我的名字|我姓|我在.{1,30}(?:工作|上班|做|实习)|我住在|我来自)`)
	askCues = cues{
		"?", "？", "help", "can you", "could you", "please", "need", "want", "how do", "how to", "why",
		"帮", "请", "想", "怎么", "如何", "吗", "能不能", "可以吗", "为什么", "问一下",
	}
)

// What users say of their own habits and tastes on the way to a task is
// a fact about them (the extractor's), not what the session is for: "I
// switched to green tea", "我现在改喝绿茶了", "I usually work from home". A
// sentence that also asks for something is not one.
var (
	selfEN = regexp.MustCompile(`(?i)^(?:(?:by the way|btw|oh|also|fyi)[,\s]+)?(?:i|i'm|i am|i've|i have|my)\s+(?:(?:now|usually|always|often|never|really|just|recently|mostly|no longer|also)\s+)*(?:like|love|prefer|hate|dislike|enjoy|switched|started|stopped|quit|drink|eat|live|moved|work from|am a|'m a|favou?rite|usually|go to|play|have a|got a|own)\b`)
	selfZH = regexp.MustCompile(`^(?:(?:对了|顺便说一下|另外)[，,\s]*)?我(?:现在|平时|一般|最近|已经|也|都|还|不再|从来不)*(?:改喝|改吃|喜欢|爱|讨厌|不喜欢|习惯|喝|吃|住在|搬到|戒|养了|有一只|有两只)`)
)

func isAboutSelf(sentence string) bool {
	s := strings.TrimSpace(sentence)
	if !selfEN.MatchString(s) && !selfZH.MatchString(s) {
		return false
	}
	return !askCues.in(s)
}

func isIntroduction(sentence string) bool {
	s := strings.TrimSpace(sentence)
	if !introEN.MatchString(s) && !introZH.MatchString(s) {
		return false
	}
	return !askCues.in(s)
}

var (
	abandonCues = cues{
		"never mind", "nevermind", "forget it", "forget about it", "stop here", "let's stop", "lets stop",
		"stop it", "please stop", "give up", "cancel that", "not worth it",
		"don't bother", "no longer needed", "let it go",
		"算了", "不用了", "不弄了", "别弄了", "不做了", "别做了", "放弃", "停下", "停止吧", "到此为止", "先不弄了", "取消吧",
	}
	doneCues = cues{
		"done", "fixed", "deployed", "completed", "complete", "finished", "resolved", "solved",
		"succeeded", "successful", "successfully", "merged", "shipped", "released", "published",
		"works now", "working now", "now works", "all set", "all good", "tests pass", "all tests pass",
		"passes", "passing", "passed", "is live", "up and running",
		"完成", "搞定", "已经", "好了", "修好", "修复了", "已修复", "解决了", "已解决", "部署好", "已部署",
		"成功", "通过了", "可以了", "没问题了", "上线了", "已合并",
	}
	failCues = cues{
		"not done", "not fixed", "not yet", "not working", "doesn't work", "didn't work", "still fail",
		"still failing", "still broken", "still not", "unable to", "couldn't", "could not", "can't", "cannot",
		"failed", "失败", "未能", "没能", "无法", "还没", "未完成", "没完成", "没有成功", "不成功", "还是报错", "仍然报错", "还是不行",
	}
	partialCues = cues{"partially", "partly", "mostly done", "mostly working", "部分完成", "完成了一部分", "完成一部分", "基本完成"}
	nextCues    = cues{
		"next", "will", "i'll", "we'll", "todo", "to do", "going to", "plan to", "remaining",
		"下一步", "接下来", "稍后", "待办", "我会", "我将", "将会", "准备",
	}
	decisionCues = cues{
		"decided", "decide to", "decision", "let's go with", "we'll go with", "go with", "let's use",
		"we'll use", "switch to", "switched to", "instead of", "chose", "opted", "settled on",
		"决定", "改用", "换成", "就用", "选用", "采用", "改为", "不再用", "定了",
	}
)

// What users say when the work is done, or is still not: the cues a user
// reports a result with, read only on the last thing the user said.
var (
	userDoneCues = cues{
		"that fixed it", "fixed it", "that worked", "that works", "it works", "it worked", "works now",
		"working now", "works perfectly", "that did it", "did the trick", "problem solved", "solved it",
		"all good now", "resolved", "build is green", "tests pass now", "perfect, thanks",
		"问题解决了", "解决了", "搞定了", "好了", "可以了", "没问题了", "成功了", "修好了", "跑通了", "能用了", "正常了", "通过了",
	}
	userFailCues = cues{
		"still broken", "still failing", "still fails", "still doesn't work", "still does not work",
		"still not working", "not resolved", "not fixed", "still getting", "still the same", "same error", "didn't work", "did not work",
		"doesn't work", "does not work", "not working", "no luck", "still crashes", "still crashing",
		"还是不行", "还是报错", "仍然报错", "还是一样", "没解决", "还是失败", "没有解决", "不能用", "不管用", "没用", "依然报错", "还是没", "还有问题",
	}
)

func userResolved(text string) bool { return userDoneCues.in(text) && !userFailCues.in(text) }

func userFailed(text string) bool { return userFailCues.in(text) }

// callsAfter reports whether a tool was called after the turn at pos.
func (s *session) callsAfter(pos int) bool {
	for p := pos + 1; p < len(s.turns); p++ {
		if len(s.turns[p].ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// isAbandon reports whether a user's words call the work off.
func isAbandon(text string) bool {
	if abandonCues.in(text) {
		return true
	}
	k := strings.ToLower(strings.TrimFunc(clean(text), func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }))
	return k == "stop" || k == "停" || k == "cancel" || k == "abort" || k == "取消"
}

// readsDone reports whether an assistant's text says the work is done,
// and whether only partly.
func readsDone(text string) (done, partial bool) {
	if failCues.in(text) {
		return false, false
	}
	if partialCues.in(text) {
		return true, true
	}
	return doneCues.in(text), false
}

// findOutcome applies the rules listed at Extractive and picks the
// sentence that says how the episode ended.
func (s *session) findOutcome() (string, span) {
	pending := s.lastUser >= 0 && s.lastUser > s.lastAsst // the user spoke last
	if s.lastUser >= 0 {
		t := s.text(s.lastUser)
		if isAbandon(t) {
			return memory.OutcomeAbandoned, firstMatching(t, s.lastUser, isAbandon)
		}
		// The user's own word on the result beats the agent's: "That fixed
		// it", "问题解决了", unless the agent ran something after it.
		if userResolved(t) && !s.callsAfter(s.lastUser) {
			return memory.OutcomeCompleted, firstMatching(t, s.lastUser, userResolved)
		}
		if pending && userFailed(t) {
			return memory.OutcomeFailed, firstMatching(t, s.lastUser, userFailed)
		}
	}
	if s.lastResult >= 0 && s.calls[s.lastResult].res.IsError {
		c := s.calls[s.lastResult]
		if s.lastAsst > c.resPos && !pending {
			return memory.OutcomeFailed, firstSentence(s.text(s.lastAsst), s.lastAsst)
		}
		closing := span{text: chars.ClipHead(errorLine(c.res.Content), maxPartRunes), pos: c.resPos, seq: 1 << 20}
		if pending {
			closing = s.pendingSpan()
		}
		return memory.OutcomeFailed, closing
	}
	if pending {
		return memory.OutcomeOngoing, s.pendingSpan()
	}
	if s.lastAsst < 0 {
		return memory.OutcomeOngoing, span{pos: -1}
	}
	final := s.text(s.lastAsst)
	if done, partial := readsDone(final); done {
		out := memory.OutcomeCompleted
		if partial {
			out = memory.OutcomePartial
		}
		return out, firstMatching(final, s.lastAsst, func(x string) bool { return doneCues.in(x) || partialCues.in(x) })
	}
	closing := firstSentence(final, s.lastAsst)
	if len(s.calls) == 0 && s.lastUser >= 0 && !endsAsking(final) {
		return memory.OutcomeCompleted, closing
	}
	return memory.OutcomeOngoing, closing
}

// endsAsking reports whether a text's last sentence is a question.
func endsAsking(text string) bool {
	ss := sentences(text)
	return len(ss) > 0 && isQuestion(ss[len(ss)-1])
}

// pendingSpan is the unanswered user turn's question, or its first
// sentence.
func (s *session) pendingSpan() span {
	t := s.text(s.lastUser)
	if sp := lastMatching(t, s.lastUser, isQuestion); sp.text != "" {
		return sp
	}
	return firstSentence(t, s.lastUser)
}

func firstSentence(text string, pos int) span {
	return firstMatching(text, pos, func(string) bool { return true })
}

func firstMatching(text string, pos int, ok func(string) bool) span {
	ss := sentences(text)
	for i, x := range ss {
		if ok(x) {
			return span{text: chars.ClipHead(x, maxPartRunes), pos: pos, seq: i}
		}
	}
	if len(ss) > 0 {
		return span{text: chars.ClipHead(ss[0], maxPartRunes), pos: pos}
	}
	return span{pos: pos}
}

func lastMatching(text string, pos int, ok func(string) bool) span {
	ss := sentences(text)
	for i := len(ss) - 1; i >= 0; i-- {
		if ok(ss[i]) {
			return span{text: chars.ClipHead(ss[i], maxPartRunes), pos: pos, seq: i}
		}
	}
	return span{pos: pos}
}

// findDecisions are the sentences of user and assistant turns that settle
// a choice.
func (s *session) findDecisions() []span {
	var out []span
	seen := map[string]bool{}
	for pos, t := range s.turns {
		if r := normRole(t.Role); r != roleUser && r != roleAssistant {
			continue
		}
		for i, x := range sentences(t.Content) {
			if decisionCues.in(x) && !seen[x] {
				seen[x] = true
				out = append(out, span{text: chars.ClipHead(x, maxPartRunes), pos: pos, seq: i})
			}
		}
	}
	return out
}

// summary follows the rules documented at Extractive.
func (s *session) summary(agentSummary string) string {
	if sum := fitSentences(agentSummary, MaxSummaryRunes); sum != "" {
		return sum
	}
	candidates := []span{s.goal, s.closing}
	if s.lastAsst >= 0 {
		if next := lastMatching(s.text(s.lastAsst), s.lastAsst, nextCues.in); next.text != "" {
			candidates = append(candidates, next)
		}
	}
	if fix := s.fixSentence(); fix.text != "" {
		candidates = append(candidates, fix)
	}
	candidates = append(candidates, s.decisionS[:min(2, len(s.decisionS))]...)
	// Then what the user asked for after the goal, so a session of
	// several requests is told by more than its first and last turns.
	candidates = append(candidates, s.laterRequests(maxLaterRequests)...)

	var kept []span
	seen := map[string]bool{}
	total := 0
	for _, c := range candidates {
		if c.text == "" || seen[c.text] {
			continue
		}
		n := runes(c.text) + 2 // and a joiner
		if total+n > MaxSummaryRunes+2 {
			continue
		}
		seen[c.text] = true
		kept = append(kept, c)
		total += n
	}
	slices.SortStableFunc(kept, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.seq, b.seq))
	})
	parts := make([]string, len(kept))
	for i, k := range kept {
		parts[i] = k.text
	}
	if sum := joinSentences(parts); sum != "" {
		return chars.ClipHead(sum, MaxSummaryRunes)
	}
	if tools := s.tools(); len(tools) > 0 {
		return chars.ClipHead(strings.Join(tools, ", "), MaxSummaryRunes)
	}
	return fmt.Sprintf("%d turns", len(s.turns))
}

// maxLaterRequests bounds the later requests a summary tells.
const maxLaterRequests = 3

// requestStart are the first words of an instruction: "add …", "now
// write …", "再给…加上", "最后写…".
var (
	requestEN = regexp.MustCompile(`(?i)^(?:(?:please|also|now|then|next|and|finally|ok|okay)[,\s]+)*(?:add|write|fix|make|create|update|remove|delete|change|run|deploy|check|show|refactor|implement|build|test|rename|move|set|use|explain|review|draft|translate|summari[sz]e|plan|find|look)\b`)
	requestZH = regexp.MustCompile(`^(?:(?:好的|那|那就|然后|接着|最后|再|还有|另外|顺便)[，,\s]*)*(?:再|帮|请|给|把|写|加|改|删|查|看|跑|部署|重构|实现|测试|检查|整理|翻译|总结|规划)`)
)

// laterRequests are the first request sentence of each user turn after
// the goal's, at most n, in order.
func (s *session) laterRequests(n int) []span {
	var out []span
	for pos := s.goal.pos + 1; pos < len(s.turns) && len(out) < n && s.goal.pos >= 0; pos++ {
		t := s.turns[pos]
		if normRole(t.Role) != roleUser || isFiller(t.Content) {
			continue
		}
		for i, x := range sentences(t.Content) {
			if askCues.in(x) || requestEN.MatchString(x) || requestZH.MatchString(x) {
				out = append(out, span{text: chars.ClipHead(x, maxPartRunes), pos: pos, seq: i})
				break
			}
		}
	}
	return out
}

// fixSentence is the assistant's first sentence after the first failed
// tool call.
func (s *session) fixSentence() span {
	for _, c := range s.calls {
		if c.res == nil || !c.res.IsError {
			continue
		}
		for pos := c.resPos + 1; pos < len(s.turns); pos++ {
			if normRole(s.turns[pos].Role) == roleAssistant && strings.TrimSpace(s.text(pos)) != "" {
				return firstSentence(s.text(pos), pos)
			}
		}
		break
	}
	return span{}
}

// actionNodes are the calls' nodes, the first and last halves of
// MaxToolActions when there are more.
func (s *session) actionNodes() []memory.ActionNode {
	out := []memory.ActionNode{}
	n := len(s.calls)
	for i := range s.calls {
		if n > MaxToolActions && i >= MaxToolActions/2 && i < n-(MaxToolActions-MaxToolActions/2) {
			continue
		}
		out = append(out, s.calls[i].node())
	}
	return out
}

// tools are the distinct tool names, in the order first called.
func (s *session) tools() []string {
	out := []string{}
	seen := map[string]bool{}
	for _, c := range s.calls {
		name := toolName(c.c.Name)
		if seen[name] || len(name) > maxEntityBytes {
			continue
		}
		seen[name] = true
		out = append(out, name)
		if len(out) == MaxTools {
			break
		}
	}
	return out
}
