package ruleextract

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// Limits that keep one pathological message from costing much or producing
// junk: a pasted log is not where durable facts live.
const (
	maxInputBytes   = 32 << 10
	maxClauseBytes  = 1 << 10
	maxObjectRunes  = 80
	maxContentRunes = 200
	maxCandidates   = 32
)

// prepare turns raw message text into what the patterns read: valid UTF-8,
// bounded, full-width letters and digits folded to ASCII, code blocks and
// quoted lines blanked out. Code and quotes are someone else's words: a
// "// never return nil" inside a snippet is not the user's rule.
func prepare(s string) string {
	if len(s) > maxInputBytes {
		s = s[:maxInputBytes]
	}
	s = strings.ToValidUTF8(s, " ")
	var b strings.Builder
	b.Grow(len(s))
	inFence := false
	for line := range strings.Lines(s) {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			inFence = !inFence
			b.WriteByte('\n')
			continue
		}
		if inFence || strings.HasPrefix(trimmed, ">") {
			b.WriteByte('\n')
			continue
		}
		b.WriteString(blankQuotes(line))
	}
	return b.String()
}

// quotePairs open and close a quotation inside a line.
var quotePairs = map[rune]rune{'"': '"', '“': '”', '「': '」', '『': '』'}

// blankQuotes folds a line and blanks what it quotes: "The customer says:
// \"We use Oracle 19c\"" is the customer's words, not the speaker's. A
// quotation of one or two words ("call it \"prod\"") is a name and stays.
func blankQuotes(line string) string {
	var b strings.Builder
	rs := []rune(line)
	unclosed := map[rune]bool{} // closers not found again: keeps this linear
	for i := 0; i < len(rs); i++ {
		closer, ok := quotePairs[rs[i]]
		if !ok || unclosed[closer] {
			b.WriteRune(fold(rs[i]))
			continue
		}
		j := i + 1
		for j < len(rs) && rs[j] != closer {
			j++
		}
		if j == len(rs) {
			unclosed[closer] = true
		}
		inner := string(rs[i+1 : min(j, len(rs))])
		if j == len(rs) || len(strings.Fields(inner)) < 3 && runeLen(inner) < 6 {
			b.WriteRune(fold(rs[i]))
			continue
		}
		b.WriteByte(' ')
		i = j
	}
	return b.String()
}

// fold maps full-width forms to ASCII so "Ｐｙｔｈｏｎ ３．１２" reads as
// "Python 3.12". The common Chinese punctuation (，！？；：（）) is kept:
// the splitter and the patterns know it, and Chinese content keeps it.
func fold(r rune) rune {
	switch {
	case r == '\n' || r == '\t':
		return r
	case r < 0x20 || r == 0x7f || r == 0xfeff || r == utf8.RuneError:
		return ' '
	case r == 0x3000 || r == 0x00a0:
		return ' '
	case r == '’' || r == '‘':
		return '\''
	case r == '`':
		return ' '
	case r >= 0xff01 && r <= 0xff5e:
		switch r {
		case '，', '！', '？', '；', '：', '（', '）':
			return r
		}
		return r - 0xff01 + '!'
	}
	return r
}

// lowerASCII lowercases ASCII letters only, so byte offsets in the result
// are offsets in s: patterns match on the lowered text and content is cut
// from the original.
func lowerASCII(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// sentence is one sentence of a message and whether it was asked.
type sentence struct {
	text     string
	question bool
}

// splitSentences cuts at Chinese terminators, newlines, and ASCII . ! ? ;
// when they end a word rather than sit inside one ("3.12", "./config",
// "node.js", "x?a=1" stay whole).
func splitSentences(s string) []sentence {
	var out []sentence
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isTerminator(s, i, r, size) {
			i += size
			continue
		}
		text := s[start:i]
		question := false
		for i < len(s) {
			r, size = utf8.DecodeRuneInString(s[i:])
			if !isTerminator(s, i, r, size) {
				break
			}
			if r == '?' || r == '？' {
				question = true
			}
			i += size
		}
		if t := strings.TrimSpace(text); t != "" {
			out = append(out, sentence{text: t, question: question})
		}
		start = i
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, sentence{text: t})
	}
	return out
}

func isTerminator(s string, i int, r rune, size int) bool {
	switch r {
	case '\n', '。', '！', '？', '…':
		return true
	case '.', '!', '?':
		if i+size >= len(s) {
			return true
		}
		next := s[i+size]
		if isASCIIAlnum(next) || strings.IndexByte("./\\_-~=", next) >= 0 {
			return false
		}
		// A dot after a single capital is an initial ("J. Smith"), and
		// "e.g." / "i.e." are not ends of sentences either.
		if r == '.' && i >= 1 && next == ' ' {
			if i == 1 || !isASCIIAlnum(s[i-2]) {
				if c := s[i-1]; 'A' <= c && c <= 'Z' {
					return false
				}
			}
			low := lowerASCII(s[max(0, i-3):i])
			if strings.HasSuffix(low, "e.g") || strings.HasSuffix(low, "i.e") {
				return false
			}
		}
		return true
	}
	return false
}

// splitClauses cuts a sentence into clauses that can each hold one fact:
// always at a Chinese comma, and at an ASCII comma or at and/but/so only
// when what follows starts a new statement ("…, I prefer …", "… and I live
// in …"). That keeps "I like coffee, tea and cake" whole. A clause that is
// only a lead-in ("以后", "from now on", "记住") is joined to the next.
func splitClauses(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		cut, skip := false, size
		switch r {
		case '，':
			cut = true
		case '；', ';':
			// "never push to main; open a pull request" is one instruction;
			// "I live in Berlin; I work at SAP" is two statements.
			after := s[i+size : min(len(s), i+size+64)]
			cut = startsClause(after) || r == '；' && !hasPrefixAny(strings.TrimSpace(after), []string{"要", "先", "而是", "然后", "再"})
		case ',':
			// Look only a little way ahead: a run of thousands of commas
			// must not make this quadratic.
			ahead := s[i+1 : min(len(s), i+1+64)]
			prev, _ := utf8.DecodeLastRuneInString(s[:i])
			next, _ := utf8.DecodeRuneInString(strings.TrimLeft(ahead, " "))
			// "Whenever you touch SQL, add a migration": a condition
			// ends at its comma.
			cut = chars.IsHan(prev) || chars.IsHan(next) || startsClause(ahead) || opensCondition(s[start:min(i, start+32)])
		case ' ':
			// "Me and my wife moved …", "My wife and I moved …": one subject.
			if head := lowerASCII(strings.TrimSpace(s[start:i])); head == "me" || reEnPossessed.MatchString(head) {
				break
			}
			for _, conj := range enConjunctions {
				if hasPrefixFold(s[i:], conj) && startsPronoun(s[i+len(conj):min(len(s), i+len(conj)+32)]) {
					cut, skip = true, len(conj)
					break
				}
			}
		case '而', '并', '但', '不', '然', '所', '同', '另':
			for _, conj := range zhConjunctions {
				if strings.HasPrefix(s[i:], conj) && i > start && startsPronoun(s[i+len(conj):min(len(s), i+len(conj)+32)]) {
					cut, skip = true, len(conj)
					break
				}
			}
		}
		if cut {
			parts = append(parts, s[start:i])
			start = i + skip
		}
		i += skip
	}
	parts = append(parts, s[start:])

	out := parts[:0]
	carry := ""
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if carry != "" {
			sep := ", "
			if chars.HasHan(carry) || chars.HasHan(p) {
				sep = "，"
			}
			p = carry + sep + p
			carry = ""
		}
		if isLeadIn(p) {
			carry = p
			continue
		}
		if p != "" {
			out = append(out, p)
		}
	}
	if carry != "" {
		out = append(out, carry)
	}
	return out
}

var reEnPossessed = regexp.MustCompile(`^my [a-z]+$`)

var (
	enConjunctions = []string{" and ", " but ", " so ", " then ", " plus "}
	zhConjunctions = []string{"而且", "并且", "但是", "不过", "然后", "所以", "同时", "另外"}

	// enStarters begin a new statement after an ASCII comma. Question words
	// are here so "My name is Ana, what's yours?" splits and only the
	// question part is dropped.
	enStarters = []string{
		"i", "i'm", "i've", "i'd", "i'll", "my", "we", "we're", "we've", "we'll", "our", "you", "your",
		"please", "always", "never", "don't", "do not", "let's", "remember", "from now on", "going forward",
		"call me", "what", "what's", "who", "where", "when", "why", "how", "which", "do", "does", "did",
		"is", "are", "can", "could", "should", "would", "will", "if", "the project", "the config", "not",
		"he", "she", "they", "his", "her", "their",
	}
	enPronouns = []string{"i", "i'm", "i've", "i'd", "my", "we", "we're", "we've", "our", "you", "please", "call me", "let's", "he", "she", "they", "his", "her", "their"}
	zhStarters = []string{
		"我", "你", "您", "他", "她", "咱", "请", "以后", "今后", "从现在", "不要", "别", "千万", "记住", "记得",
		"总是", "永远", "每次", "务必", "一定", "必须", "决定", "就用", "那就", "什么", "为什么", "怎么",
		"哪", "谁", "如果", "假如", "要是",
	}
	zhPronouns = []string{"我", "你", "您", "咱们", "以后", "请"}
)

// startsClause reports whether s (text after a comma) opens a new statement.
func startsClause(s string) bool {
	s = stripLead(s)
	if s == "" {
		return false
	}
	low := lowerASCII(s[:min(len(s), 16)])
	for _, w := range enStarters {
		if hasWordPrefix(low, w) {
			return true
		}
	}
	for _, w := range zhStarters {
		if strings.HasPrefix(s, w) {
			return true
		}
	}
	return false
}

func startsPronoun(s string) bool {
	s = strings.TrimLeft(s, " ")
	low := lowerASCII(s[:min(len(s), 12)])
	for _, w := range enPronouns {
		if hasWordPrefix(low, w) {
			return true
		}
	}
	for _, w := range zhPronouns {
		if strings.HasPrefix(s, w) {
			return true
		}
	}
	return false
}

// hasWordPrefix reports whether low starts with the word or phrase w
// followed by something that is not a letter.
func hasWordPrefix(low, w string) bool {
	if !strings.HasPrefix(low, w) {
		return false
	}
	if len(low) == len(w) {
		return true
	}
	c := low[len(w)]
	if w[len(w)-1] == '\'' {
		return true
	}
	return !('a' <= c && c <= 'z') && c != '\''
}

// leadIns are clause openers that carry no fact of their own and belong to
// the clause after them.
var leadIns = map[string]bool{
	"以后": true, "今后": true, "从现在开始": true, "从现在起": true, "从今以后": true, "往后": true,
	"接下来": true, "记住": true, "请记住": true, "记得": true, "请注意": true, "注意": true,
	"from now on": true, "going forward": true, "moving forward": true, "in the future": true,
	"remember": true, "please remember": true, "also": true, "btw": true, "note": true,
}

func isLeadIn(p string) bool {
	t := strings.TrimSpace(strings.TrimRight(p, ",，:： "))
	if t == "" {
		return false
	}
	return leadIns[lowerASCII(t)] || stripLead(t) == ""
}

// Fillers are dropped from the start of a clause so anchored patterns see
// the statement itself: "Oh, and btw my name is Ana", "对了，其实我叫李雷".
var (
	enFillers = []string{
		"just so you know", "for the record", "for context", "by the way", "oh and", "and also",
		"quick background", "some background", "background", "quick context", "some context", "context",
		"hi there", "hello there", "hey there", "also", "btw", "fyi", "actually", "anyway", "anyways",
		"honestly", "basically", "alright", "okay", "ok", "oh", "well", "and", "but", "so", "then",
		"hi", "hello", "hey", "ps", "p.s.", "yes", "yeah", "yep", "no", "nope", "sure", "right",
		"thanks", "thank you", "great", "cool", "nice", "perfect", "got it", "understood", "sorry", "wait",
		"hmm", "um", "uh", "lol", "haha",
	}
	// enFillersNeedPunct are fillers only when punctuation follows: "no,"
	// is a filler, "no longer use" is not.
	enFillersNeedPunct = map[string]bool{
		"no": true, "yes": true, "sure": true, "right": true, "great": true, "cool": true, "nice": true,
		"perfect": true, "thanks": true, "thank you": true, "sorry": true, "then": true, "wait": true,
		"quick background": true, "some background": true, "background": true, "quick context": true,
		"some context": true, "context": true,
	}
	zhFillers = []string{
		"顺便说一下", "顺便提一下", "顺便说下", "顺便一提", "补充一下", "说句实话", "老实说", "说实话", "说真的",
		"跟你说", "告诉你", "说一下", "另外还有", "请注意", "对了", "另外", "还有", "其实", "顺便", "话说", "首先",
		"然后", "而且", "并且", "但是", "不过", "所以", "但", "好的", "好吧", "你好", "您好", "哈喽", "是的", "对的",
		"那么", "总之", "此外", "同时", "因为", "注意", "嗯嗯", "嗯", "哦", "噢", "啊", "呃", "嗨", "对", "好",
	}
)

// The filler lists indexed by how they start, because stripLead runs at
// every comma and on every clause.
var (
	enFillersByLetter = map[byte][]string{}
	zhFillersByRune   = map[rune][]string{}
)

func init() {
	for _, f := range enFillers {
		enFillersByLetter[f[0]] = append(enFillersByLetter[f[0]], f)
	}
	for _, f := range zhFillers {
		r, _ := utf8.DecodeRuneInString(f)
		zhFillersByRune[r] = append(zhFillersByRune[r], f)
	}
}

// hasPrefixFold reports whether s starts with the lowercase ASCII prefix,
// ignoring ASCII case in s.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// stripLead removes whitespace, list bullets, stray punctuation and filler
// words from the start of s.
func stripLead(s string) string {
	for {
		before := len(s)
		s = strings.TrimLeft(s, " \t\r\n,，:：;；、-*•·>")
		s = stripNumbering(s)
		if s == "" {
			return s
		}
		if c := s[0] | 0x20; 'a' <= c && c <= 'z' {
			for _, f := range enFillersByLetter[c] {
				if !hasPrefixFold(s, f) {
					continue
				}
				if len(s) == len(f) {
					s = s[len(f):]
					break
				}
				c := s[len(f)]
				if c == ',' || c == '!' || c == ':' || c >= 0x80 || c == ' ' && !enFillersNeedPunct[f] {
					s = s[len(f):]
					break
				}
			}
		} else if r, _ := utf8.DecodeRuneInString(s); r >= 0x80 {
			for _, f := range zhFillersByRune[r] {
				if strings.HasPrefix(s, f) && len(s) > len(f) {
					s = s[len(f):]
					break
				}
			}
		}
		if len(s) == before {
			return s
		}
	}
}

// stripNumbering removes "1. ", "2) ", "3、" list numbering.
func stripNumbering(s string) string {
	i := 0
	for i < len(s) && i < 3 && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) {
		return s
	}
	switch {
	case (s[i] == '.' || s[i] == ')') && i+1 < len(s) && s[i+1] == ' ':
		return s[i+2:]
	case strings.HasPrefix(s[i:], "、"):
		return s[i+len("、"):]
	}
	return s
}

// Questions are not statements: "我喜欢什么？", "do I like coffee?".
var (
	enQuestionStarts = []string{
		"what", "what's", "who", "who's", "whom", "whose", "where", "where's", "why", "how", "which",
		"do", "does", "did", "is", "are", "am", "was", "were", "can", "could", "would", "should", "shall",
		"will", "may", "have", "has", "isn't", "aren't", "doesn't", "didn't", "can't", "won't",
	}
	zhInterrogatives = []string{
		"什么", "为什么", "为何", "怎么", "怎样", "如何", "多少", "几岁", "几个", "谁", "哪", "是否", "是不是",
		"有没有", "对不对", "能不能", "会不会", "要不要", "可不可以", "行不行", "好不好", "吗",
	}
	// zhNotQuestions contain an interrogative but ask nothing: "什么都行".
	zhNotQuestions = []string{
		"什么都", "什么也", "没什么", "谁都", "谁也", "哪都", "哪儿都", "哪里都", "无论如何", "不管怎么",
		"不管什么", "无论什么",
	}
)

func looksLikeQuestion(text, low string) bool {
	for _, w := range enQuestionStarts {
		if hasWordPrefix(low, w) {
			if (w == "do" || w == "will") && (hasWordPrefix(low[len(w):], " not") || strings.HasPrefix(low[len(w):], " remember")) {
				continue
			}
			return true
		}
	}
	if !chars.HasHan(text) {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(text)
	if last == '吗' || last == '么' || last == '呢' {
		return true
	}
	if !containsAny(text, zhInterrogatives...) {
		return false
	}
	if !containsAny(text, zhNotQuestions...) {
		return true
	}
	t := text
	for _, w := range zhNotQuestions {
		t = strings.ReplaceAll(t, w, "")
	}
	return containsAny(t, zhInterrogatives...)
}

// trimEdges removes trailing punctuation and quotes and surrounding space.
func trimEdges(s string) string {
	return strings.Trim(s, " \t\r\n.,;:!?。，；：！？、…~～\"'“”「」『』《》()（）[]【】*_")
}

// trimParticles drops Chinese sentence-final particles that are not part
// of the object: "我们升级到 Python 3.12 了" / "我叫李雷啊".
func trimParticles(s string) string {
	for {
		t := trimEdges(s)
		r, size := utf8.DecodeLastRuneInString(t)
		if size == 0 || !strings.ContainsRune("了啊呀哦吧嘛啦哈噢呢哟喔", r) || utf8.RuneCountInString(t) <= 1 {
			return t
		}
		s = t[:len(t)-size]
	}
}

// capRunes cuts s to at most n runes, at a space when one is near the end.
func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := chars.CutRunes(s, n)
	if sp := strings.LastIndexByte(cut, ' '); sp > len(cut)*3/4 {
		cut = cut[:sp]
	}
	return strings.TrimSpace(cut) + chars.Ellipsis
}

// collapseSpace turns runs of whitespace into one space.
func collapseSpace(s string) string {
	if !strings.Contains(s, "  ") && !strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// cutAtAny returns s up to the first occurrence of any of seps.
func cutAtAny(s string, low string, seps []string) string {
	end := len(s)
	for _, sep := range seps {
		if i := strings.Index(low, sep); i >= 0 && i < end {
			end = i
		}
	}
	return s[:end]
}

// opensCondition reports whether English text opens with a condition word.
// Callers pass a short prefix: this runs at every comma.
func opensCondition(s string) bool {
	t := stripLead(s)
	low := lowerASCII(t[:min(len(t), 12)])
	for _, w := range enConditionStarts {
		if hasWordPrefix(low, w) {
			return true
		}
	}
	return false
}
