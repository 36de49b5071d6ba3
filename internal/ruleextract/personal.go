package ruleextract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// Identity, location, work and age: what the user says about themselves.
// Every pattern is anchored at the clause start, after fillers, so "我妈妈叫
// 王芳", "如果我叫李雷" and "my friend's name is Bob" do not match.
var (
	reZhNameIs  = regexp.MustCompile(`^我(?:的)?(?:名字|姓名|全名|大名|真名)(?:是|叫)[：:\s]*(.+)$`)
	reZhCalled  = regexp.MustCompile(`^我(?:现在)?叫[：:\s]*(.+)$`)
	reZhCallMe  = regexp.MustCompile(`^(?:你|大家|您)?(?:以后)?(?:可以|就)?(?:叫|称呼|喊)我[：:\s]*(.+?)(?:就(?:好|行|可以))?了?$`)
	reZhIAm     = regexp.MustCompile(`^我(?:就)?是[：:\s]*(.+)$`)
	reZhDoingIs = regexp.MustCompile(`^我是(?:做|搞|干)(.+)的$`)
	reZhLive    = regexp.MustCompile(`^我(?:现在|目前|一直|也|平时|常年)*(住在|居住在|生活在|定居在|常驻|住)(.+)$`)
	reZhMoved   = regexp.MustCompile(`^我(?:最近|刚刚|刚|已经|去年|今年|前年|上个月|上周|上礼拜|前几天|年初|这个月)*(?:搬到|搬去|搬家到|搬来)了?(.+)$`)
	reZhHome    = regexp.MustCompile(`^我家(?:住)?在(.+)$`)
	reZhFrom    = regexp.MustCompile(`^我(?:来自|出生在|出生于|老家在|老家是)(.+)$`)
	reZhWorkAt  = regexp.MustCompile(`^我(?:现在|目前|一直|正|正在)*在(.+?)(?:工作|上班|任职|就职|实习)`)
	reZhWorkFor = regexp.MustCompile(`^我(?:现在|目前)*(?:就职于|任职于|供职于|受雇于)(.+)$`)
	reZhWorkAs  = regexp.MustCompile(`^我(?:现在|目前|一直)*在(.+)(?:当|担任)(.+)$`)
	reZhWorkDo  = regexp.MustCompile(`^我(?:现在|目前|一直)*在(.+?)(?:做|当|担任)(.+)$`)
	reZhJobIs   = regexp.MustCompile(`^我的(?:工作|职业|职位|岗位)是(.+)$`)
	reZhAge     = regexp.MustCompile(`^我(?:今年|现在|已经)*([0-9]{1,3}|[一二三四五六七八九十两百]{1,4})(?:周)?岁(?:了|啦)?$`)

	reEnNameIs = regexp.MustCompile(`^my (?:full |first |real |given )?name(?:'s| is)\s+(.+)$`)
	reEnCallMe = regexp.MustCompile(`^(?:(?:please|pls|you can|just|feel free to) )*call me\s+(.+)$|^(?:everyone|everybody|people|my friends|friends|most people) (?:calls?|knows?) me(?: as)?\s+(.+)$`)
	// reEnOthersCallMe is how other people name the user: not about them.
	reEnOthersCallMe = regexp.MustCompile(`^(?:everyone|everybody|people|my friends|friends|most people) (?:calls?|knows?) me\b`)
	reEnBeenA        = regexp.MustCompile(`^i(?:'ve| have) been (?:an? )(.+?)(?: for .+| since .+)?$`)
	reEnIAm          = regexp.MustCompile(`^i(?:'m| am)\s+(.+)$`)
	reEnLive         = regexp.MustCompile(`^i(?: (?:currently|now|still|also))*(?: live| reside|'ve lived|'ve been living| have lived| have been living) in\s+(.+)$`)
	reEnBased        = regexp.MustCompile(`^i(?:'m| am) (?:(?:currently|now|still|also) )*(?:living|based|located) (?:in|at|out of)\s+(.+)$`)
	reEnMoved        = regexp.MustCompile(`^(?:i|me and my [a-z]+|my [a-z]+ and i) (?:(?:just|recently|finally|have|'ve) )*(?:moved|relocated) to\s+(.+)$`)
	// "Marcus here, SRE at Datadog": a chat introduction.
	reEnNameHere = regexp.MustCompile(`^([A-Z][\p{L}'-]+(?: [A-Z][\p{L}'-]+)?) here(?:[,!.:;]|\s*$)`)
	reEnFrom     = regexp.MustCompile(`^i(?: come|'m originally| am originally| originally come) from\s+(.+)$|^i (?:grew up|was born and raised|was raised) in\s+(.+)$`)
	reEnWorkAt   = regexp.MustCompile(`^i (?:(?:currently|now|still) )*work (?:at|for)\s+(.+?)(?: as (?:an? )?(.+))?$`)
	reEnWorkAs   = regexp.MustCompile(`^i (?:(?:currently|now|still) )*work as (?:an? )?(.+?)(?: (?:at|for) (.+))?$`)
	reEnEmploy   = regexp.MustCompile(`^i(?:'m| am) (?:(?:currently|now) )*(?:employed|working) (?:at|for|by)\s+(.+?)(?: as (?:an? )?(.+))?$`)
	reEnAge      = regexp.MustCompile(`^(\d{1,3})(?: years? old| yo| y/o)?(?: and [a-z-]+)?$`)
)

func (x *extractor) identity(c *clause) bool {
	if strings.HasPrefix(c.text, "我") || strings.HasPrefix(c.text, "你") || strings.HasPrefix(c.text, "叫") ||
		strings.HasPrefix(c.text, "大家") || strings.HasPrefix(c.text, "您") || strings.HasPrefix(c.text, "称呼") {
		if m := reZhNameIs.FindStringSubmatch(c.text); m != nil {
			if name, ok := zhName(m[1], false); ok {
				x.name(c, name, confStrong)
				return true
			}
		}
		if m := reZhCalled.FindStringSubmatch(c.text); m != nil {
			if name, ok := zhName(m[1], false); ok {
				x.name(c, name, confStrong)
				return true
			}
		}
		if m := reZhCallMe.FindStringSubmatch(c.text); m != nil {
			if name, ok := zhName(m[1], false); ok {
				x.add(fact{pred: PredNickname, subject: "user", content: "用户希望被称为" + name, conf: confClear})
				return true
			}
		}
		if m := reZhDoingIs.FindStringSubmatch(c.text); m != nil && runeLen(m[1]) <= 20 {
			x.add(fact{pred: PredOccupation, subject: "user", content: "用户是做" + trimEdges(m[1]) + "的", conf: confWeak})
			return true
		}
		if m := reZhIAm.FindStringSubmatch(c.text); m != nil {
			return x.zhIAm(c, trimParticles(m[1]))
		}
	}
	if m := reEnNameIs.FindStringSubmatchIndex(c.low); m != nil {
		if name, ok := enName(c.text[m[2]:m[3]], false); ok {
			conf := confStrong
			if name == strings.ToLower(name) && !chars.HasHan(name) {
				conf = confClear
			}
			x.name(c, name, conf)
			return true
		}
	}
	if m := reEnCallMe.FindStringSubmatchIndex(c.low); m != nil {
		if m[2] < 0 {
			m[2], m[3] = m[4], m[5]
		}
		if name, ok := enName(c.text[m[2]:m[3]], false); ok {
			x.add(fact{pred: PredNickname, subject: "user", content: "User wants to be called " + name, conf: confClear})
			return true
		}
	}
	if m := reEnIAm.FindStringSubmatchIndex(c.low); m != nil {
		return x.enIAm(c, c.text[m[2]:m[3]], c.low[m[2]:m[3]])
	}
	// "I've been a nurse for twelve years": still one.
	if m := reEnBeenA.FindStringSubmatchIndex(c.low); m != nil {
		return x.enOccupation(c.text[m[2]:m[3]], confClear)
	}
	return false
}

// nameHere reads a chat introduction: "Marcus here, SRE at Datadog".
func (x *extractor) nameHere(c *clause) bool {
	m := reEnNameHere.FindStringSubmatchIndex(c.text)
	if m == nil {
		return false
	}
	name, ok := enName(c.text[m[2]:m[3]], true)
	if !ok {
		return false
	}
	x.name(c, name, confWeak)
	x.appositive(c.text[m[1]:])
	return true
}

func (x *extractor) name(c *clause, name string, conf float64) {
	content := "User's name is " + name
	if c.zh {
		content = "用户叫" + name
	}
	x.add(fact{pred: PredName, subject: "user", content: content, conf: conf})
}

// zhIAm reads "我是X": a name, an occupation or a hometown, or nothing
// ("我是说…", "我是不是…" and most other uses of 是).
func (x *extractor) zhIAm(c *clause, rest string) bool {
	rest = strings.TrimPrefix(strings.TrimPrefix(rest, "一名"), "一个")
	rest = strings.TrimPrefix(strings.TrimPrefix(rest, "一位"), "个")
	n := runeLen(rest)
	switch {
	case n == 0 || n > 30:
		return false
	case hasSuffixAny(rest, zhJobSuffixes):
		x.add(fact{pred: PredOccupation, subject: "user", content: "用户是" + rest, conf: confClear})
		return true
	case strings.HasSuffix(rest, "人") && n >= 2 && n <= 8 && !zhNotPlaces[strings.TrimSuffix(rest, "人")]:
		x.add(fact{pred: PredHometown, subject: "user", content: "用户是" + rest, conf: confClear})
		return true
	}
	if name, ok := zhName(rest, true); ok {
		x.name(c, name, confWeak)
		return true
	}
	return false
}

// enIAm reads "I'm X": an age, a hometown, an occupation or a name.
func (x *extractor) enIAm(c *clause, rest, low string) bool {
	if m := reEnAge.FindStringSubmatch(low); m != nil {
		return x.ageFact(c, m[1], m[1] != low)
	}
	if after, ok := strings.CutPrefix(low, "from "); ok {
		place := placeText(rest[len(rest)-len(after):])
		if place != "" && startsUpper(place) {
			x.add(fact{pred: PredHometown, subject: "user", content: "User is from " + place, conf: confClear})
			return true
		}
		return false
	}
	for _, art := range []string{"a ", "an "} {
		if after, ok := strings.CutPrefix(low, art); ok {
			return x.enOccupation(rest[len(rest)-len(after):], confClear)
		}
	}
	if name, ok := enName(rest, true); ok {
		x.name(c, name, confWeak)
		// "I'm Priya, a product designer based in Bangalore."
		if i := strings.Index(rest, name); i >= 0 {
			x.appositive(strings.TrimSpace(rest[i+len(name):]))
		}
		return true
	}
	return false
}

// reEnPlaceIn finds where an appositive places the speaker: "based in
// Bangalore", "in Madrid".
var reEnPlaceIn = regexp.MustCompile(`\b(?:based in|living in|located in|in|from)\s+([A-Z][\p{L}]+(?:[ -][A-Z][\p{L}]+)*)`)

var reEnBasedIn = regexp.MustCompile(`^(?:based|living|located) in\s+([A-Z][\p{L}]+(?:[ -][A-Z][\p{L}]+)*)`)

// appositive reads what follows a name after a comma: ", a product
// designer based in Bangalore".
func (x *extractor) appositive(after string) {
	after = strings.TrimLeft(after, ", ")
	low := lowerASCII(after)
	job := after
	for _, art := range []string{"a ", "an ", "the "} {
		if strings.HasPrefix(low, art) {
			job = after[len(art):]
			break
		}
	}
	// "I'm Lena, backend dev at Zalando": the article is often left out.
	x.enOccupation(job, confClear)
	if m := reEnPlaceIn.FindStringSubmatch(after); m != nil {
		pred, prefix := PredLocation, "User is based in "
		if strings.Contains(m[0], "from ") {
			pred, prefix = PredHometown, "User is from "
		}
		x.add(fact{pred: pred, subject: "user", content: prefix + m[1], conf: confClear})
	}
}

// enOccupation reads "backend engineer at Acme" after "I'm a".
func (x *extractor) enOccupation(phrase string, conf float64) bool {
	low := lowerASCII(phrase)
	cut := cutAtAny(phrase, low, []string{" at ", " for ", " in ", " from ", " with ", " who ", " and ", " since ", " based ", " living ", ","})
	job := trimEdges(cut)
	words := strings.Fields(lowerASCII(job))
	if len(words) == 0 || len(words) > 5 || !enJobWords[words[len(words)-1]] {
		return false
	}
	x.add(fact{pred: PredOccupation, subject: "user", content: "User is " + article(job) + " " + job, conf: conf})
	rest := strings.TrimPrefix(phrase[len(cut):], " ")
	lowRest := lowerASCII(rest)
	// "a freelance translator based in Montreal".
	if m := reEnBasedIn.FindStringSubmatch(rest); m != nil {
		x.add(fact{pred: PredLocation, subject: "user", content: "User is based in " + m[1], conf: conf})
	}
	for _, p := range []string{"at ", "for "} {
		if after, ok := strings.CutPrefix(lowRest, p); ok {
			if org := placeText(rest[len(rest)-len(after):]); org != "" && !hasPrefixAny(lowerASCII(org), []string{"a ", "an ", "the "}) {
				x.add(fact{pred: PredEmployer, subject: "user", content: "User works at " + org, conf: conf})
			}
		}
	}
	return true
}

// A stay, not a home: "I'm in Berlin this week for a conference", "我这周
// 在上海出差".
var (
	reEnStay = regexp.MustCompile(`\b(?:this (?:week|weekend|month)|for (?:a|the) (?:few|couple|week|weekend|conference|trip|visit|holiday|vacation|meetup)|on (?:a )?(?:vacation|holiday|trip|business)|until|temporarily|today|tonight|for now|visiting|staying)\b`)
	zhStay   = []string{"出差", "旅游", "旅行", "度假", "这周", "这几天", "暂时", "临时", "今天", "开会"}
)

func (x *extractor) location(c *clause) bool {
	if reEnStay.MatchString(c.low) || c.zh && containsAny(c.text, zhStay...) {
		return false
	}
	if strings.HasPrefix(c.text, "我") {
		if m := reZhMoved.FindStringSubmatch(c.text); m != nil {
			if place := zhPlace(m[1]); place != "" {
				x.add(fact{pred: PredLocation, subject: "user", content: "用户搬到了" + place, conf: confClear, updates: true})
				return true
			}
		}
		if m := reZhLive.FindStringSubmatch(c.text); m != nil {
			place := zhPlace(m[2])
			if place == "" || m[1] == "住" && strings.ContainsAny(firstRune(place), "院了的过宿店不") {
				return false
			}
			conf := confStrong
			if m[1] == "住" {
				conf = confWeak
			}
			x.add(fact{pred: PredLocation, subject: "user", content: "用户住在" + place, conf: conf})
			return true
		}
		if m := reZhHome.FindStringSubmatch(c.text); m != nil {
			if place := zhPlace(m[1]); place != "" {
				x.add(fact{pred: PredLocation, subject: "user", content: "用户家在" + place, conf: confClear})
				return true
			}
		}
		if m := reZhFrom.FindStringSubmatch(c.text); m != nil {
			if place := zhPlace(m[1]); place != "" {
				x.add(fact{pred: PredHometown, subject: "user", content: "用户来自" + place, conf: confStrong})
				return true
			}
		}
		return false
	}
	if m := reEnLive.FindStringSubmatchIndex(c.low); m != nil {
		return x.enPlace(c.text[m[2]:m[3]], PredLocation, "User lives in ", false)
	}
	if m := reEnBased.FindStringSubmatchIndex(c.low); m != nil {
		return x.enPlace(c.text[m[2]:m[3]], PredLocation, "User is based in ", false)
	}
	if m := reEnMoved.FindStringSubmatchIndex(c.low); m != nil {
		place := placeText(c.text[m[2]:m[3]])
		if place == "" || !startsUpper(place) {
			return false // "I moved to the next step"
		}
		x.add(fact{pred: PredLocation, subject: "user", content: "User moved to " + place, conf: confClear, updates: true})
		return true
	}
	if m := reEnFrom.FindStringSubmatchIndex(c.low); m != nil {
		if m[2] < 0 {
			return x.enPlace(c.text[m[4]:m[5]], PredHometown, "User grew up in ", false)
		}
		return x.enPlace(c.text[m[2]:m[3]], PredHometown, "User is from ", false)
	}
	return false
}

// enPlace stores a place; a capitalised one is clearly a place, a lowercase
// one ("a small town near Lyon") is probably one.
func (x *extractor) enPlace(raw, pred, prefix string, updates bool) bool {
	place := placeText(raw)
	if place == "" {
		return false
	}
	conf := confStrong
	if !startsUpper(place) {
		conf = confGuess
	}
	x.add(fact{pred: pred, subject: "user", content: prefix + place, conf: conf, updates: updates})
	return true
}

func (x *extractor) work(c *clause) bool {
	if strings.HasPrefix(c.text, "我") {
		if m := reZhWorkAt.FindStringSubmatch(c.text); m != nil {
			org := trimEdges(m[1])
			n := runeLen(org)
			switch {
			case n == 0 || n > 30 || zhNotEmployers[org]:
				return false
			case zhCities[org] || hasSuffixAny(org, []string{"市", "省", "区", "县"}):
				x.add(fact{pred: PredLocation, subject: "user", content: "用户在" + org + "工作", conf: confGuess})
			default:
				x.add(fact{pred: PredEmployer, subject: "user", content: "用户在" + org + "工作", conf: confStrong})
			}
			return true
		}
		m := reZhWorkAs.FindStringSubmatch(c.text)
		if m == nil {
			m = reZhWorkDo.FindStringSubmatch(c.text)
		}
		if m != nil {
			org, job := trimEdges(m[1]), trimParticles(m[2])
			if j := strings.Index(job, "，"); j > 0 {
				job = job[:j]
			}
			if runeLen(job) >= 2 && runeLen(job) <= 12 && hasSuffixAny(job, zhJobSuffixes) && runeLen(org) <= 30 {
				if !hasPrefixAny(org, []string{"一家", "一个", "家", "公司"}) && !zhNotEmployers[org] && !strings.Contains(org, "的") {
					x.add(fact{pred: PredEmployer, subject: "user", content: "用户在" + org + "工作", conf: confClear})
				}
				x.add(fact{pred: PredOccupation, subject: "user", content: "用户是" + job, conf: confClear})
				return true
			}
		}
		if m := reZhWorkFor.FindStringSubmatch(c.text); m != nil {
			if org := trimParticles(m[1]); org != "" && runeLen(org) <= 30 {
				x.add(fact{pred: PredEmployer, subject: "user", content: "用户就职于" + org, conf: confStrong})
				return true
			}
		}
		if m := reZhJobIs.FindStringSubmatch(c.text); m != nil {
			if job := trimParticles(m[1]); job != "" && runeLen(job) <= 30 {
				x.add(fact{pred: PredOccupation, subject: "user", content: "用户的工作是" + job, conf: confStrong})
				return true
			}
		}
		return false
	}
	for _, re := range []*regexp.Regexp{reEnWorkAt, reEnEmploy} {
		m := re.FindStringSubmatchIndex(c.low)
		if m == nil {
			continue
		}
		org := placeText(c.text[m[2]:m[3]])
		lowOrg := lowerASCII(org)
		if org == "" || enNotEmployers[lowOrg] || strings.HasPrefix(lowOrg, "a ") || strings.HasPrefix(lowOrg, "an ") {
			return false
		}
		x.add(fact{pred: PredEmployer, subject: "user", content: "User works at " + org, conf: confStrong})
		if m[4] >= 0 {
			if job := trimEdges(c.text[m[4]:m[5]]); job != "" && runeLen(job) <= 40 {
				x.add(fact{pred: PredOccupation, subject: "user", content: "User works as " + article(job) + " " + job, conf: confStrong})
			}
		}
		return true
	}
	if m := reEnWorkAs.FindStringSubmatchIndex(c.low); m != nil {
		job := trimEdges(c.text[m[2]:m[3]])
		if job == "" || runeLen(job) > 40 {
			return false
		}
		x.add(fact{pred: PredOccupation, subject: "user", content: "User works as " + article(job) + " " + job, conf: confStrong})
		if m[4] >= 0 {
			// "at a bank in Dubai" names no employer.
			if org := placeText(c.text[m[4]:m[5]]); org != "" && !hasPrefixAny(lowerASCII(org), []string{"a ", "an ", "the "}) {
				x.add(fact{pred: PredEmployer, subject: "user", content: "User works at " + org, conf: confStrong})
			}
		}
		return true
	}
	return false
}

func (x *extractor) age(c *clause) bool {
	if m := reZhAge.FindStringSubmatch(c.text); m != nil {
		return x.ageFact(c, m[1], true)
	}
	return false
}

// ageFact stores an age; explicit ("25岁", "25 years old") is strong, a bare
// "I'm 25" is weaker.
func (x *extractor) ageFact(c *clause, n string, explicit bool) bool {
	if v := parseSmallNumber(n); v < 1 || v > 120 {
		return false
	}
	conf := confStrong
	if !explicit {
		conf = confWeak
	}
	content := "User is " + n + " years old"
	if c.zh {
		content = "用户" + n + "岁"
	}
	x.add(fact{pred: PredAge, subject: "user", content: content, conf: conf})
	return true
}

// parseSmallNumber reads 1–3 ASCII digits or a Chinese numeral up to 百.
func parseSmallNumber(s string) int {
	if s == "" {
		return 0
	}
	if '0' <= s[0] && s[0] <= '9' {
		v := 0
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0
			}
			v = v*10 + int(s[i]-'0')
		}
		return v
	}
	digits := map[rune]int{'一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	total, cur := 0, 0
	for _, r := range s {
		switch r {
		case '十':
			if cur == 0 {
				cur = 1
			}
			total += cur * 10
			cur = 0
		case '百':
			if cur == 0 {
				cur = 1
			}
			total += cur * 100
			cur = 0
		default:
			d, ok := digits[r]
			if !ok {
				return 0
			}
			cur = d
		}
	}
	return total + cur
}

// zhName validates a name said in Chinese. After 叫 it accepts 2–4 Han
// characters not starting with a word that makes 叫 mean "order" or "tell"
// ("我叫了外卖", "我叫他走"); after 是 (strict) it also wants a known surname,
// because "我是程序员" is not a name. Latin names are accepted in both.
func zhName(raw string, strict bool) (string, bool) {
	s := trimParticles(raw)
	if s == "" {
		return "", false
	}
	if !chars.HasHan(firstRune(s)) {
		return enName(s, true)
	}
	// Cut at words that end a name: "我叫李雷是个程序员".
	for _, stop := range []string{"是", "在", "今年", "来自", "住", "喜欢", "，", ",", " ", "的", "和", "也", "就"} {
		if i := strings.Index(s, stop); i > 0 {
			s = s[:i]
		}
	}
	n := runeLen(s)
	if n < 2 || n > 4 || !allHan(s) {
		return "", false
	}
	if strings.ContainsAny(firstRune(s), "了过他她它你我们人车外一个上去来的起醒好不着住到出声做啥谁") || zhNotNames[s] {
		return "", false
	}
	if strict && !hasSurname(s) {
		return "", false
	}
	return s, true
}

func hasSurname(s string) bool {
	for _, c := range zhCompoundSurnames {
		if strings.HasPrefix(s, c) {
			return true
		}
	}
	return strings.Contains(zhSurnames, firstRune(s))
}

// enName reads a name from the start of raw: up to four name-like words,
// stopping at a connective ("Ana and …", "Ana from Lisbon") or punctuation.
// With requireCap every word must be capitalised ("I'm Ana", not "I'm
// tired"), and the name must be all that is said or be followed by a
// connective or punctuation ("I'm Going To …" is not a name).
func enName(raw string, requireCap bool) (string, bool) {
	words := strings.Fields(raw)
	var name []string
	punct := false
	i := 0
	for ; i < len(words) && len(name) < 4; i++ {
		w := words[i]
		clean := strings.TrimRight(w, ",;:!.?")
		lw := strings.ToLower(clean)
		if enNameStops[lw] || !nameLike(clean) || requireCap && !startsUpper(clean) {
			break
		}
		if len(name) == 0 && (enNotNames[lw] || knownTool(lw)) {
			return "", false
		}
		// "Korean-American", "English-speaking": a demonym, not a name.
		for _, part := range strings.Split(lw, "-") {
			if part != lw && enNotNames[part] {
				return "", false
			}
		}
		name = append(name, clean)
		if clean != w {
			punct = true
			i++
			break
		}
	}
	if len(name) == 0 {
		return "", false
	}
	if requireCap && i < len(words) && !punct && !enNameStops[strings.ToLower(strings.TrimRight(words[i], ",;:!.?"))] {
		return "", false
	}
	return strings.Join(name, " "), true
}

func nameLike(w string) bool {
	if w == "" || runeLen(w) > 30 {
		return false
	}
	han := 0
	for i, r := range w {
		switch {
		case chars.IsHan(r):
			han++
		case unicode.IsLetter(r):
		case (r == '\'' || r == '-' || r == '.') && i > 0:
		default:
			return false
		}
	}
	return han == 0 || han == runeLen(w) && han >= 2 && han <= 4
}

func startsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r) || chars.IsHan(r)
}

// placeText cuts a place or organisation at the words that end it.
func placeText(raw string) string {
	low := lowerASCII(raw)
	p := cutAtAny(raw, low, []string{" with ", " and ", " for ", " since ", " because ", " but ", " as ", " where ", " which ", " who ", ",", ";", " now", " these days", " right now", " at the moment",
		" last ", " this ", " next ", " a few ", " recently", " yesterday", " ago", " in 19", " in 20", " since"})
	p = trimEdges(p)
	for _, art := range []string{"the ", "The "} {
		if strings.HasPrefix(p, art) && len(p) > len(art) && startsUpper(p[len(art):]) {
			p = p[len(art):]
		}
	}
	if p == "" || runeLen(p) > 60 {
		return ""
	}
	return p
}

// zhPlace cuts a Chinese place at the words that end it.
func zhPlace(raw string) string {
	p := trimParticles(raw)
	for _, stop := range []string{"，", ",", "附近的", "和", "跟", "已经", "快", "有"} {
		if i := strings.Index(p, stop); i > 0 {
			p = p[:i]
		}
	}
	p = trimParticles(p)
	if p == "" || runeLen(p) > 30 || zhNotPlaces[p] {
		return ""
	}
	return p
}

func article(phrase string) string {
	if phrase == "" {
		return "a"
	}
	switch lowerASCII(phrase[:1]) {
	case "a", "e", "i", "o", "u":
		return "an"
	}
	return "a"
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func firstRune(s string) string {
	_, size := utf8.DecodeRuneInString(s)
	return s[:size]
}

func allHan(s string) bool {
	for _, r := range s {
		if !chars.IsHan(r) {
			return false
		}
	}
	return true
}

func hasSuffixAny(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

var (
	zhSurnames = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付傅方白邹孟熊秦邱江尹薛闫阎段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"

	zhCompoundSurnames = []string{"欧阳", "司马", "诸葛", "上官", "东方", "慕容", "令狐", "皇甫", "尉迟", "公孙", "长孙", "宇文", "夏侯", "司徒", "端木"}

	zhNotNames = map[string]bool{
		"高手": true, "菜鸟": true, "新手": true, "白痴": true, "学生": true, "老板": true, "小白": true,
		"司机": true, "石头": true, "金牌": true, "方便": true, "马上": true, "程序": true, "明白": true,
		"单身": true, "全职": true, "万能": true, "常客": true, "安静": true, "文科": true, "牛人": true,
		"宁愿": true, "应该": true, "时候": true, "管理员": true, "作者": true, "用户": true,
	}

	zhJobSuffixes = []string{
		"工程师", "程序员", "开发者", "开发", "设计师", "学生", "研究生", "博士生", "本科生", "大学生", "老师",
		"教师", "教授", "医生", "护士", "律师", "会计", "经理", "架构师", "研究员", "科学家", "作家", "分析师",
		"运维", "测试", "创始人", "合伙人", "顾问", "主管", "总监", "CEO", "CTO", "实习生", "自由职业者", "码农",
		"博主", "记者", "编辑", "销售", "运营", "公务员", "工人", "司机", "厨师", "画家", "歌手", "演员",
		"设计", "产品", "站长", "创业者", "学者", "讲师", "负责人", "组长", "leader", "Leader",
	}

	zhNotPlaces = map[string]bool{
		"好": true, "坏": true, "个": true, "男": true, "女": true, "大": true, "小": true, "老": true,
		"新": true, "年轻": true, "普通": true, "正常": true, "有钱": true, "穷": true, "聪明": true,
		"懒": true, "外行": true, "内行": true, "过来": true, "同一个": true, "一个": true, "这": true,
		"那": true, "这里": true, "那里": true, "哪": true, "哪里": true, "家": true, "家里": true,
		"好人": true, "本地": true, "当地": true, "自己": true, "": true,
	}

	zhNotEmployers = map[string]bool{
		"家": true, "家里": true, "这里": true, "那里": true, "这儿": true, "那儿": true, "公司": true,
		"远程": true, "线上": true, "晚上": true, "周末": true, "外地": true, "外面": true, "办公室": true,
		"这": true, "那": true, "哪": true, "哪里": true, "同一家公司": true, "一家公司": true,
	}

	zhCities = map[string]bool{
		"北京": true, "上海": true, "广州": true, "深圳": true, "杭州": true, "成都": true, "南京": true,
		"武汉": true, "西安": true, "重庆": true, "天津": true, "苏州": true, "长沙": true, "郑州": true,
		"青岛": true, "厦门": true, "大连": true, "宁波": true, "合肥": true, "福州": true, "济南": true,
		"昆明": true, "香港": true, "台北": true, "澳门": true, "珠海": true, "东莞": true, "佛山": true,
		"无锡": true, "沈阳": true, "哈尔滨": true, "长春": true, "石家庄": true, "太原": true, "南昌": true,
		"贵阳": true, "南宁": true, "海口": true, "兰州": true, "乌鲁木齐": true, "拉萨": true,
		"美国": true, "日本": true, "英国": true, "德国": true, "法国": true, "加拿大": true, "新加坡": true,
		"澳洲": true, "澳大利亚": true, "国外": true, "海外": true, "国内": true, "硅谷": true, "湾区": true,
		"纽约": true, "伦敦": true, "东京": true, "柏林": true, "巴黎": true,
	}

	enNotEmployers = map[string]bool{
		"home": true, "night": true, "nights": true, "weekends": true, "the moment": true, "a living": true,
		"myself": true, "free": true, "scale": true, "work": true, "it": true, "this": true, "that": true,
	}

	// enNameStops end a name: "Ana and I …", "Ana from Lisbon", "Ana, a designer".
	enNameStops = map[string]bool{
		"and": true, "but": true, "from": true, "i": true, "who": true, "by": true, "btw": true,
		"here": true, "in": true, "at": true, "the": true, "a": true, "an": true, "to": true,
		"with": true, "for": true, "is": true, "was": true, "so": true, "too": true, "now": true,
		"though": true, "lol": true, "haha": true, "thanks": true, "nice": true, "by-the-way": true,
		"btw,": true, "aka": true, "or": true,
	}

	// enNotNames are capitalised words that follow "I'm" without being a
	// name.
	enNotNames = map[string]bool{
		"sorry": true, "fine": true, "good": true, "great": true, "okay": true, "ok": true, "back": true,
		"done": true, "here": true, "not": true, "just": true, "so": true, "really": true, "very": true,
		"also": true, "still": true, "going": true, "trying": true, "using": true, "working": true,
		"looking": true, "thinking": true, "afraid": true, "sure": true, "glad": true, "happy": true,
		"tired": true, "busy": true, "ready": true, "confused": true, "new": true, "in": true, "at": true,
		"on": true, "from": true, "with": true, "the": true, "a": true, "an": true, "your": true, "my": true,
		"curious": true, "wondering": true, "stuck": true, "lost": true, "home": true, "out": true,
		"off": true, "over": true, "into": true, "currently": true, "now": true, "building": true,
		"writing": true, "running": true, "planning": true, "sick": true, "hungry": true, "bored": true,
		"excited": true, "chinese": true, "english": true, "american": true, "british": true, "french": true,
		"german": true, "japanese": true, "korean": true, "indian": true, "canadian": true, "australian": true,
		"russian": true, "spanish": true, "italian": true, "brazilian": true, "mexican": true, "dutch": true,
		"swedish": true, "polish": true, "vegan": true, "vegetarian": true, "alive": true, "sad": true,
		"angry": true, "late": true, "early": true, "free": true, "available": true, "aware": true,
		"interested": true, "certain": true, "pretty": true, "quite": true, "kinda": true, "like": true,
		"about": true, "all": true, "totally": true, "always": true, "never": true, "no": true, "yes": true,
		"hello": true, "hi": true, "hey": true, "thanks": true, "honestly": true, "actually": true,
		"probably": true, "definitely": true, "literally": true, "basically": true, "only": true,
		"male": true, "female": true, "christian": true, "muslim": true, "jewish": true, "it": true,
		"ai": true, "human": true, "god": true, "admin": true, "root": true, "user": true, "me": true,
		"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true,
		"saturday": true, "sunday": true, "english-speaking": true, "used": true, "learning": true,
	}

	enJobWords = map[string]bool{
		"engineer": true, "developer": true, "dev": true, "programmer": true, "coder": true, "designer": true,
		"student": true, "teacher": true, "professor": true, "lecturer": true, "doctor": true,
		"physician": true, "nurse": true, "lawyer": true, "attorney": true, "manager": true, "architect": true,
		"researcher": true, "scientist": true, "writer": true, "author": true, "analyst": true,
		"consultant": true, "founder": true, "co-founder": true, "cofounder": true, "ceo": true, "cto": true,
		"cfo": true, "coo": true, "pm": true, "intern": true, "freelancer": true, "accountant": true,
		"journalist": true, "editor": true, "artist": true, "musician": true, "photographer": true,
		"entrepreneur": true, "sre": true, "administrator": true, "admin": true, "sysadmin": true,
		"technician": true, "specialist": true, "lead": true, "director": true, "officer": true,
		"executive": true, "marketer": true, "salesperson": true, "recruiter": true, "tester": true,
		"statistician": true, "mathematician": true, "physicist": true, "chemist": true, "biologist": true,
		"economist": true, "pharmacist": true, "dentist": true, "surgeon": true, "therapist": true,
		"psychologist": true, "chef": true, "pilot": true, "mechanic": true, "electrician": true,
		"retiree": true, "phd": true, "postdoc": true, "undergrad": true, "undergraduate": true,
		"hacker": true, "maintainer": true, "contributor": true, "tutor": true, "trainer": true, "coach": true,
		"devops": true, "owner": true, "product": true, "librarian": true, "translator": true,
	}
)
