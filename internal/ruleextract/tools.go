package ruleextract

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Tools and versions. A tool fact's subject is the canonical tool name, so
// "我们用的是 Python 3.10" and a later "we upgraded to Python 3.12" are both
// (python, version) with different content: the later supersedes.

// Trigger classes, in the order of reToolTrigger's groups: how the clause
// relates the speaker to the tool.
const (
	stopTool = iota
	upgradeTool
	downgradeTool
	switchTool
	useTool
)

var (
	reIdent   = regexp.MustCompile(`[a-z][a-z0-9+#]*(?:[.\-_][a-z0-9+#]+)*`)
	reVersion = regexp.MustCompile(`^\s*(?:v|version\s*|ver\.?\s*|版本\s*)?(\d+(?:\.\d+){0,3}(?:-?(?:alpha|beta|rc|lts)\.?\d*)?)`)
	reSplitV  = regexp.MustCompile(`^([a-z][a-z+#.\-]*?[a-z+#])(\d+(?:\.\d+)*)$`)
	reJoin    = regexp.MustCompile(`^\s*(?:,|，|and\b|&|和|以及|与|跟|、|\+|/|plus\b|with\b|on\b)\s*`)

	reMigrateEn = regexp.MustCompile(`\b(?:moved|migrated|switched|changed|went|upgraded|ported|converted|migrating|moving|switching|upgrading|downgraded|bumped)(?: \S+){0,2}? from\s+(.+?)\s+to\s+(.+)$|\breplaced\s+(.+?)\s+with\s+(.+)$`)
	reMigrateZh = regexp.MustCompile(`从\s*(.+?)\s*(?:迁移|迁|切换|切|换|升级|降级|改|转|移)(?:到|成|为)了?\s*(.+)$|把\s*(.+?)\s*(?:换成|替换成|替换为|改成|改为|迁移到|切换到|升级到|降级到)了?\s*(.+)$`)
)

// toolHit is one tool mention: where it is and what was said of it.
type toolHit struct {
	canon   string // the subject: lowercased canonical name
	display string // as written
	version string
	known   bool // in the dictionary, not just shaped like a product name
	end     int  // offset just past the mention (and its version)
}

func (x *extractor) tools(c *clause) {
	if !mayNameTool(c) || x.migration(c) || x.movedOn(c) {
		return
	}
	x.retired(c)
	// A mention is read once, by the trigger nearest before it: in "数据库
	// 已经升级到 PostgreSQL 16" the upgrade, not the role noun, says what
	// happened.
	type said struct {
		hit   toolHit
		class int
	}
	var mentions []said
	at := map[int]int{} // mention end → index in mentions
	for _, t := range findTriggers(c) {
		class := t.class
		if class == useTool && pastState(c.low[:t.start]) {
			continue // "our old monolith was written in PHP 5"
		}
		if class != useTool && class != stopTool && underWay(c.low, t.start) {
			continue // "the team is moving to Rust": not there yet
		}
		if negated(c, t.start) {
			// "I don't use Vim anymore": a tool stopped, not a denial.
			if class != useTool || !containsWord(c.low, "anymore", "any more", "no more") {
				continue
			}
			class = stopTool
		}
		hits := x.scanTools(c, t.end, class == useTool && !t.knownOnly)
		if t.knownOnly {
			hits = slices.DeleteFunc(hits, func(h toolHit) bool { return !h.known })
		}
		if len(hits) == 0 && class != useTool && class != stopTool {
			// "bumped python to 3.12", "Python 升级到了 3.12": the tool came first.
			if v := leadingVersion(c.low[t.end:]); v != "" {
				if h, ok := lastToolBefore(c, t.end); ok {
					h.version = v
					hits = append(hits, h)
				}
			}
		}
		for _, h := range hits {
			if i, ok := at[h.end]; ok {
				mentions[i] = said{h, class}
				continue
			}
			at[h.end] = len(mentions)
			mentions = append(mentions, said{h, class})
		}
	}
	// "I meant Python 3.11, not 3.10": a correction may name the value
	// alone.
	if len(mentions) == 0 && x.correcting {
		for _, h := range scanFrom(c, 0, false, 0) {
			if h.version != "" && h.known {
				mentions = append(mentions, said{h, useTool})
			}
		}
	}
	for _, m := range mentions {
		x.toolFact(c, m.hit, m.class)
	}
}

// toolFact turns a mention into a version or uses candidate.
func (x *extractor) toolFact(c *clause, h toolHit, class int) {
	verbs := [...][2]string{
		useTool:       {"使用 ", " uses "},
		upgradeTool:   {"已升级到 ", " upgraded to "},
		downgradeTool: {"已降级到 ", " downgraded to "},
		switchTool:    {"已切换到 ", " switched to "},
		stopTool:      {"不再使用 ", " no longer uses "},
	}
	verb := verbs[class][1]
	if c.zh {
		verb = verbs[class][0]
	}
	what := h.display
	if h.version != "" {
		what += " " + h.version
	}
	content := x.who(c, c.zh) + verb + what
	f := fact{subject: h.canon, content: content, updates: class != useTool, scoped: true}
	switch {
	case class == stopTool:
		f.pred, f.conf = PredUses, confClear
		if !h.known {
			f.conf = confHint
		}
	case h.version != "":
		f.pred, f.conf = PredVersion, confStrong
		if !h.known {
			f.conf = confGuess
		}
	default:
		f.pred, f.conf = PredUses, confClear
		if !h.known {
			f.conf = confHint
		}
	}
	x.add(f)
}

// migration reads "moved from X to Y" / "从 X 迁移到 Y" / "replaced X with Y":
// the old tool is no longer used, the new one is, or one tool moved from
// one version to another.
func (x *extractor) migration(c *clause) bool {
	if !containsAny(c.low, " from ", "replaced", "从", "把") {
		return false
	}
	m := reMigrateEn.FindStringSubmatchIndex(c.low)
	if m == nil {
		if m = reMigrateZh.FindStringSubmatchIndex(c.low); m == nil {
			return false
		}
	}
	a, b := 2, 4
	if m[2] < 0 {
		a, b = 6, 8
	}
	// "We're migrating from Angular to React": under way, so neither tool
	// has changed yet.
	if verb, _, _ := strings.Cut(c.low[m[0]:], " "); strings.HasSuffix(verb, "ing") && hasSuffixAny(strings.TrimRight(c.low[:m[0]], " "), []string{"'re", "'m", "'s", " are", " am", " is", " be", "still"}) {
		return true
	}
	if m[a] < 0 || m[b] < 0 || negated(c, m[0]) {
		return false
	}
	from, ok := toolAt(c, m[a], m[a+1])
	if !ok {
		return false
	}
	to, toOK := toolAt(c, m[b], m[b+1])
	if !toOK || to.canon == from.canon {
		newVersion := leadingVersion(c.low[m[b]:m[b+1]])
		if toOK {
			newVersion = to.version
		}
		if newVersion == "" {
			return false
		}
		dir := "升级"
		enDir := "upgraded"
		if from.version != "" && versionLess(newVersion, from.version) {
			dir, enDir = "降级", "downgraded"
		}
		content := x.who(c, false) + " " + enDir + " " + from.display + " to " + newVersion
		if from.version != "" {
			content = x.who(c, false) + " " + enDir + " " + from.display + " from " + from.version + " to " + newVersion
		}
		if c.zh {
			content = x.who(c, true) + "已" + dir + "到 " + from.display + " " + newVersion
			if from.version != "" {
				content = x.who(c, true) + "已将 " + from.display + " 从 " + from.version + " " + dir + "到 " + newVersion
			}
		}
		x.add(fact{pred: PredVersion, subject: from.canon, content: content, conf: confStrong, updates: true, scoped: true})
		return true
	}
	x.moved(c, from, to)
	return true
}

// moved stores a move from one tool to another: the first no longer
// used, the second used.
func (x *extractor) moved(c *clause, from, to toolHit) {
	oldContent := x.who(c, false) + " no longer uses " + from.display + " (moved to " + to.display + ")"
	newWhat := to.display
	if to.version != "" {
		newWhat += " " + to.version
	}
	newContent := x.who(c, false) + " uses " + newWhat + " (moved from " + from.display + ")"
	if c.zh {
		oldContent = x.who(c, true) + "不再使用 " + from.display + "（已迁移到 " + to.display + "）"
		newContent = x.who(c, true) + "使用 " + newWhat + "（从 " + from.display + " 迁移）"
	}
	conf := confStrong
	if !from.known || !to.known {
		conf = confGuess
	}
	x.add(fact{pred: PredUses, subject: from.canon, content: oldContent, conf: conf, updates: true, scoped: true})
	pred := PredUses
	if to.version != "" {
		pred = PredVersion
	}
	x.add(fact{pred: pred, subject: to.canon, content: newContent, conf: conf, updates: true, scoped: true})
}

// Retirements name the tool first: "the old Jenkins is retired", "旧的
// Jenkins 已经下线", "VS Code 不用了". The tool is no longer used.
var (
	reRetiredEn = regexp.MustCompile(`\b(?:is|was|has been|have been|had been|got|are|were)(?: now| finally| already| officially)? (?:retired|decommissioned|shut down|turned off|switched off|sunset|sunsetted|gone)\b`)
	reRetiredZh = regexp.MustCompile(`(?:已经|已|都|也|早就|终于|彻底)*(?:下线|停用|废弃|弃用|淘汰|退役|关停|下掉|不用)了?`)
)

// retired reads the retirements of tools named before them.
func (x *extractor) retired(c *clause) {
	re := reRetiredEn
	if c.zh {
		re = reRetiredZh
	}
	for _, m := range re.FindAllStringIndex(c.low, 2) {
		if negated(c, m[0]) || c.zh && strings.HasPrefix(c.low[m[0]:], "不用") && !strings.HasSuffix(c.low[:m[1]], "了") {
			continue // "还没下线"; "不用担心" is no retirement
		}
		h, ok := toolBefore(c, m[0])
		if !ok {
			continue
		}
		x.toolFact(c, h, stopTool)
	}
}

// toolBefore finds the tool named last before offset i, if nothing but a
// few words lie between ("the old Jenkins server is retired", "Jenkins
// 服务器已经停用").
func toolBefore(c *clause, i int) (toolHit, bool) {
	var best toolHit
	found := false
	for _, loc := range reIdent.FindAllStringIndex(c.low[:i], -1) {
		if h, ok := readTool(c, loc[0], loc[1], false); ok && h.known && h.end <= i {
			best, found = h, true
		}
	}
	if !found {
		return toolHit{}, false
	}
	between := c.low[best.end:i]
	return best, len(between) <= 24 && !strings.ContainsAny(between, ",，;；:：") && !strings.Contains(between, " not ")
}

// movedAux are the words that may stand between a tool and its move.
var movedAux = setOf("", "has", "have", "had", "has been", "have been", "was", "were", "is", "are", "got", "has now", "has finally",
	"已经", "已", "都", "也", "全部", "已经全部", "现在", "终于", "已经全部都", "整体")

// movedOn reads a tool that moved to another: "Jenkins has moved to
// GitHub Actions", "Jenkins 已经迁移到 GitHub Actions 了". The first is no
// longer used, the second is.
func (x *extractor) movedOn(c *clause) bool {
	for _, t := range findTriggers(c) {
		if t.class != switchTool || underWay(c.low, t.start) || negated(c, t.start) {
			continue
		}
		from, ok := toolBefore(c, t.start)
		if !ok || !movedAux[strings.TrimSpace(c.low[from.end:t.start])] {
			continue // "we tried Bun but went back to Node": Bun is not what moved
		}
		hits := x.scanTools(c, t.end, false)
		if len(hits) == 0 || hits[0].canon == from.canon {
			continue
		}
		x.moved(c, from, hits[0])
		return true
	}
	return false
}

// toolAt reads a tool at the start of c.low[start:end].
func toolAt(c *clause, start, end int) (toolHit, bool) {
	sub := &clause{text: c.text[:end], low: c.low[:end], zh: c.zh}
	hits := scanFrom(sub, start, false, 8)
	if len(hits) == 0 {
		return toolHit{}, false
	}
	return hits[0], true
}

func (x *extractor) scanTools(c *clause, from int, bareOK bool) []toolHit {
	gap := 40
	if c.zh {
		gap = 18
	}
	return scanFrom(c, from, bareOK, gap)
}

// scanFrom finds the tools named right after from: the first within gap
// bytes (skipping filler words like "the latest"), then any joined to it
// ("Go 1.26 and Postgres 16", "Go、Redis"). bareOK allows an unknown
// capitalised name with no version ("we use Linear").
func scanFrom(c *clause, from int, bareOK bool, gap int) []toolHit {
	var hits []toolHit
	pos, skipped := from, 0
	for pos < len(c.low) && len(hits) < 4 && skipped < 6 {
		loc := reIdent.FindStringIndex(c.low[pos:])
		if loc == nil || loc[0] > gap {
			break
		}
		if between := c.low[pos : pos+loc[0]]; strings.ContainsAny(between, ",，;；:：.。!?不没") || strings.Contains(between, "not ") {
			break
		}
		start, end := pos+loc[0], pos+loc[1]
		h, ok := readTool(c, start, end, bareOK && len(hits) == 0)
		if !ok {
			if len(hits) == 0 && toolStopwords[c.low[start:end]] {
				pos, skipped = end, skipped+1
				continue
			}
			break
		}
		hits = append(hits, h)
		// "GitHub for code, Linear for issues and Notion for docs": each
		// tool's role sits between it and the next.
		if n := roleTail(c.low[h.end:]); n > 0 {
			h.end += n
			hits[len(hits)-1].end = h.end
		}
		j := reJoin.FindStringIndex(c.low[h.end:])
		if j == nil {
			break
		}
		pos, gap = h.end+j[1], 4
	}
	return hits
}

// roleTail returns the length of " for issues" when a join follows it
// (", " or " and "), else 0.
func roleTail(low string) int {
	rest, ok := strings.CutPrefix(low, " for ")
	if !ok {
		return 0
	}
	n := len(low) - len(rest)
	for words := 0; words < 3; words++ {
		w := rest
		if i := strings.IndexAny(rest, " ,;"); i >= 0 {
			w = rest[:i]
		}
		if w == "" || w == "and" {
			break
		}
		rest, n = rest[len(w):], n+len(w)
		if reJoin.MatchString(rest) && (strings.HasPrefix(rest, ",") || strings.HasPrefix(rest, " and ")) {
			return n
		}
		if !strings.HasPrefix(rest, " ") {
			break
		}
		rest, n = rest[1:], n+1
	}
	return 0
}

// readTool decides whether the identifier at [start, end) is a tool.
func readTool(c *clause, start, end int, bareOK bool) (toolHit, bool) {
	tok := c.low[start:end]
	display := c.text[start:end]
	version := ""
	canon, known := lookupTool(tok)
	// Tools whose name is two words, the first no tool by itself: "VS Code".
	if next, ok := twoWordTools[tok]; ok && !known {
		if trimmed := strings.TrimLeft(c.low[end:], " "); strings.HasPrefix(trimmed, next.second) {
			e := len(c.low) - len(trimmed) + len(next.second)
			if wordAt(c.low, e-len(next.second), e) {
				end, canon, known, display = e, next.canon, true, c.text[start:e]
			}
		}
	}
	if !known {
		if m := reSplitV.FindStringSubmatch(tok); m != nil {
			if cn, ok := lookupTool(m[1]); ok {
				canon, known, version = cn, true, m[2]
				display = display[:len(m[1])]
			}
		}
	}
	// "Spring Boot 3.2", "GitHub Actions", "React Native": a second word
	// makes it another tool.
	if known && version == "" {
		if next, ok := toolSecondWords[canon]; ok {
			rest := c.low[end:]
			if trimmed := strings.TrimLeft(rest, " "); strings.HasPrefix(trimmed, next) && wordAt(c.low, len(c.low)-len(trimmed), len(c.low)-len(trimmed)+len(next)) {
				end = len(c.low) - len(trimmed) + len(next)
				canon, display = canon+"-"+next, c.text[start:end]
			}
		}
	}
	after := end
	if version == "" {
		if m := reVersion.FindStringSubmatchIndex(c.low[end:]); m != nil && versionEnds(c.low, end+m[1]) {
			version, after = c.low[end+m[2]:end+m[3]], end+m[1]
		}
	}
	if known {
		if (ambiguousTools[canon] || ambiguousTools[tok]) && !c.zh && version == "" && !startsUpper(display) {
			return toolHit{}, false // "we use go to …", "we run node scripts"
		}
		return toolHit{canon: canon, display: display, version: version, known: true, end: after}, true
	}
	if !startsUpper(display) || notTools[tok] || len(tok) < 2 || len(tok) > 30 {
		return toolHit{}, false
	}
	if version == "" && !bareOK {
		return toolHit{}, false
	}
	return toolHit{canon: tok, display: display, version: version, end: after}, true
}

// versionEnds rejects versions glued to a unit: "16GB", "20%", "3.5x".
func versionEnds(low string, i int) bool {
	if i >= len(low) {
		return true
	}
	c := low[i]
	return !isASCIIAlnum(c) && c != '%'
}

func leadingVersion(low string) string {
	m := reVersion.FindStringSubmatchIndex(low)
	if m == nil || !versionEnds(low, m[1]) {
		return ""
	}
	return low[m[2]:m[3]]
}

// lastToolBefore finds the known tool named last before offset i.
func lastToolBefore(c *clause, i int) (toolHit, bool) {
	var best toolHit
	found := false
	for _, loc := range reIdent.FindAllStringIndex(c.low[:i], -1) {
		tok := c.low[loc[0]:loc[1]]
		if canon, ok := lookupTool(tok); ok {
			best, found = toolHit{canon: canon, display: c.text[loc[0]:loc[1]], known: true, end: loc[1]}, true
		}
	}
	if found && ambiguousTools[best.canon] && !c.zh && !startsUpper(best.display) {
		return toolHit{}, false
	}
	return best, found
}

// negated reports whether the words just before offset i negate the
// trigger: "we don't use", "我们没用", "不是用".
func negated(c *clause, i int) bool {
	before := c.low[max(0, i-16):i]
	for _, n := range []string{"don't ", "do not ", "doesn't ", "does not ", "didn't ", "did not ", "not ", "never ", "won't ", "aren't ", "isn't ", "n't ", "no "} {
		if strings.HasSuffix(before, n) {
			return true
		}
	}
	for _, n := range []string{"不", "没", "没有", "未", "别", "不要", "不想", "不能", "不会", "不用", "无需", "不是", "从没", "从来没", "还没"} {
		if strings.HasSuffix(before, n) {
			return true
		}
	}
	return false
}

// underWay reports whether the trigger at start is a progressive after a
// form of "be": "is moving to", "we're upgrading to".
func underWay(low string, start int) bool {
	verb, _, _ := strings.Cut(low[start:], " ")
	if !strings.HasSuffix(verb, "ing") {
		return false
	}
	before := strings.TrimRight(low[:start], " ")
	for _, adv := range []string{" slowly", " gradually", " currently", " still", " now", " already"} {
		before = strings.TrimSuffix(before, adv)
	}
	return hasSuffixAny(before, []string{"'re", "'m", "'s", " are", " am", " is", " be"}) || before == "are" || before == "is"
}

// pastState reports whether the words before a use trigger put it in the
// past: "was written in", "were using", "had been running".
func pastState(before string) bool {
	words := strings.Fields(before)
	for i := len(words) - 1; i >= 0 && i >= len(words)-2; i-- {
		switch words[i] {
		case "was", "were", "had", "wasn't", "weren't":
			return true
		case "originally", "initially", "first", "all", "once", "still", "been", "mostly":
			continue
		}
		return false
	}
	return false
}

// versionLess compares dotted numeric versions.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var na, nb int
		if i < len(pa) {
			na, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			nb, _ = strconv.Atoi(pb[i])
		}
		if na != nb {
			return na < nb
		}
	}
	return false
}

// mayNameTool is a cheap test run before the tool regular expressions,
// which are the costliest part of a clause: a tool fact needs a known tool
// name somewhere, or a capitalised product-like word after the first one.
func mayNameTool(c *clause) bool {
	for i := 0; i < len(c.text); {
		b := c.text[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z') {
			i++
			continue
		}
		j := i + 1
		for j < len(c.text) && (isASCIIAlnum(c.text[j]) || strings.IndexByte("+#.-_", c.text[j]) >= 0) {
			j++
		}
		tok := strings.TrimRight(c.low[i:j], ".-_")
		if _, ok := lookupTool(tok); ok || i > 0 && 'A' <= b && b <= 'Z' {
			return true
		}
		if m := reSplitV.FindStringSubmatch(tok); m != nil && knownTool(m[1]) {
			return true
		}
		i = j
	}
	return false
}

func hasASCIILetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}

// lookupTool returns the canonical name of a known tool.
func lookupTool(tok string) (string, bool) {
	if canon, ok := toolAliases[tok]; ok {
		return canon, true
	}
	if knownTools[tok] {
		return tok, true
	}
	return "", false
}

func knownTool(lw string) bool {
	_, ok := lookupTool(lw)
	return ok
}

var (
	twoWordTools = map[string]struct{ second, canon string }{
		"vs": {"code", "vscode"}, "visual": {"studio code", "vscode"}, "sublime": {"text", "sublime"},
		"android": {"studio", "android-studio"}, "google": {"cloud", "gcp"},
	}

	toolSecondWords = map[string]string{"spring": "boot", "github": "actions", "react": "native", "google": "cloud", "apache": "kafka"}

	toolAliases = map[string]string{
		"golang": "go", "nodejs": "node", "node.js": "node", "postgresql": "postgres", "psql": "postgres",
		"k8s": "kubernetes", "mongo": "mongodb", "sqlite3": "sqlite", "python3": "python", "py": "python",
		"nextjs": "next.js", "next": "next.js", "reactjs": "react", "react.js": "react", "vuejs": "vue",
		"vue.js": "vue", "torch": "pytorch", "tf": "tensorflow", "nvim": "neovim", "brew": "homebrew",
		"tailwindcss": "tailwind", "springboot": "spring", "spring-boot": "spring",
		"dotnet": ".net", "csharp": "c#", "ts": "typescript", "js": "javascript", "rabbit": "rabbitmq",
		"cpp": "c++", "pg": "postgres", "macos": "macos", "osx": "macos", "win": "windows",
	}
	knownTools = setOf(
		"python", "go", "node", "deno", "bun", "java", "kotlin", "scala", "rust", "ruby", "php", "perl",
		"swift", "typescript", "javascript", "c#", "c++", ".net", "elixir", "erlang", "haskell", "ocaml",
		"clojure", "zig", "nim", "lua", "julia", "dart", "flutter", "react", "vue", "angular", "svelte",
		"next.js", "nuxt", "django", "flask", "fastapi", "spring", "rails", "laravel", "express", "nestjs",
		"gin", "postgres", "mysql", "mariadb", "sqlite", "redis", "mongodb", "cassandra", "elasticsearch",
		"opensearch", "clickhouse", "duckdb", "snowflake", "bigquery", "dynamodb", "kafka", "rabbitmq",
		"nats", "pulsar", "docker", "podman", "kubernetes", "helm", "terraform", "ansible", "pulumi",
		"nginx", "caddy", "ubuntu", "debian", "centos", "fedora", "alpine", "macos", "windows", "linux",
		"wsl", "ios", "android", "gradle", "maven", "npm", "pnpm", "yarn", "pip", "poetry", "conda", "cargo",
		"webpack", "vite", "esbuild", "babel", "tailwind", "jquery", "pytorch", "tensorflow", "jax",
		"numpy", "pandas", "cuda", "llvm", "gcc", "clang", "cmake", "git", "github", "gitlab", "bitbucket",
		"jenkins", "circleci", "aws", "gcp", "azure", "vercel", "netlify", "heroku", "cloudflare",
		"supabase", "firebase", "prisma", "sqlalchemy", "graphql", "grpc", "protobuf", "openai",
		"anthropic", "claude", "ollama", "vllm", "langchain", "llamaindex", "vim", "neovim", "emacs",
		"vscode", "intellij", "pycharm", "goland", "xcode", "zsh", "bash", "fish", "tmux", "homebrew",
		"memcached", "minio", "grafana", "prometheus", "loki", "jaeger", "sentry", "datadog", "jest",
		"pytest", "vitest", "mocha", "cypress", "playwright", "selenium", "storybook", "electron", "tauri",
		"unity", "unreal", "godot", "blender", "figma", "notion", "slack", "jira", "linear", "confluence",
		"obsidian", "postman", "jupyter", "airflow", "spark", "hadoop", "flink", "dbt", "celery", "traefik",
		"envoy", "istio", "consul", "vault", "etcd", "zookeeper", "haproxy", "tomcat", "gunicorn",
		"uvicorn", "pm2", "systemd", "tokio", "actix", "axum", "echo", "fiber", "htmx", "astro", "remix",
		"hugo", "jekyll", "openresty", "oracle", "mssql", "cockroachdb", "tidb", "neo4j", "influxdb",
		"timescaledb", "qdrant", "milvus", "pinecone", "weaviate", "chroma", "pgvector", "llama.cpp",
		"chrome", "firefox", "safari", "chromium", "sveltekit", "solid", "qwik", "gatsby", "ember", "backbone", "bootstrap", "sass", "less", "rxjs",
		"redux", "mobx", "zustand", "typeorm", "sequelize", "mongoose", "gorm", "sqlc", "ent", "hibernate",
		"mybatis", "dubbo", "nacos", "seata", "sentinel", "rocketmq", "zeromq", "mqtt", "emqx", "openshift",
		"rancher", "argocd", "flux", "skaffold", "tilt", "bazel", "buck", "pants", "nx", "turborepo",
		"lerna", "rollup", "parcel", "swc", "biome", "eslint", "prettier", "ruff", "black", "mypy",
		"pyright", "golangci-lint", "nix", "asdf", "nvm", "pyenv", "rbenv", "rustup", "uv",
	)

	// ambiguousTools are also common English words: in English text they
	// count only capitalised or with a version ("Go 1.26", not "go to").
	ambiguousTools = setOf(
		"go", "node", "rust", "swift", "spring", "next.js", "bun", "fish", "express", "flask", "rails",
		"react", "dart", "julia", "ruby", "java", "jest", "mocha", "remix", "astro", "hugo", "helm", "vault",
		"consul", "envoy", "echo", "fiber", "solid", "ember", "backbone", "less", "flux", "tilt", "black",
		"linear", "unity", "spark", "notion", "slack", "sentinel", "ent", "bootstrap", "oracle", "buck",
		"pants", "chroma", "gin", "uv", "nx", "ts", "js", "py", "pg", "tf", "win",
	)

	// toolStopwords may sit between a verb and the tool it names.
	toolStopwords = setOf(
		"the", "a", "an", "latest", "new", "newer", "newest", "recent", "current", "version", "versions",
		"of", "our", "my", "their", "its", "same", "old", "older", "stable", "only", "mostly", "now",
		"currently", "still", "also", "both", "official", "some", "modern", "plain", "vanilla", "just",
		"already", "finally", "all", "ver", "release", "lts", "good", "old-fashioned", "mainly", "primarily",
	)

	// notTools are capitalised words that look like a product after "use"
	// but are not one.
	notTools = setOf(
		"i", "english", "chinese", "spanish", "french", "german", "japanese", "korean", "monday", "tuesday",
		"wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "march", "april",
		"may", "june", "july", "august", "september", "october", "november", "december", "port", "ports",
		"step", "steps", "page", "pages", "line", "lines", "item", "items", "times", "minutes", "seconds",
		"hours", "days", "weeks", "months", "years", "spaces", "tabs", "gb", "mb", "kb", "cores", "threads",
		"workers", "replicas", "nodes", "instances", "level", "phase", "option", "chapter", "section",
		"room", "floor", "size", "width", "height", "this", "that", "these", "those", "it", "we", "you",
		"they", "he", "she", "us", "them", "what", "which", "when", "where", "why", "how", "and", "or",
		"but", "if", "then", "so", "to", "for", "in", "on", "at", "by", "with", "from", "as", "is", "are",
		"not", "no", "yes", "ok", "okay", "please", "thanks", "one", "two", "three", "round", "attempt",
		"try", "test", "tests", "case", "cases", "issue", "bug", "pr", "day", "week", "month", "year",
		"chapter", "figure", "table", "task", "team", "user", "users", "version", "v",
	)
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
