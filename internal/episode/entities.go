package episode

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
)

// ProjectPrefix marks an entity that names the project a turn was
// recorded in ("project:engram"), so that the scratchpad, which only sees
// the episode, knows which entities are projects.
const ProjectPrefix = "project:"

const maxProjects = 5

// What is read of each text for entities: what a turn is about shows at
// its start, and a pasted log or file would cost time and add noise.
const (
	maxScanBytes      = 8 << 10
	maxScanInputBytes = 2 << 10
)

var (
	fenceRe = regexp.MustCompile("(?s)```.*?(?:```|$)")
	codeRe  = regexp.MustCompile("`([^`\n]{1,60})`")
	urlRe   = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"'()\[\]{}，。、；：！？」》]+`)
	pathRe  = regexp.MustCompile(`(?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)+/?|(?:~|\.{1,2})?/[\w.@+-]{2,}`)
	fileRe  = regexp.MustCompile(`\b[\w-]+(?:\.[\w-]+)+`) // kept when its extension is in fileExts
	// A tool with its version: "Python 3.12", "Go 1.26", "Vue3", "Node 20".
	versionRe = regexp.MustCompile(`\b([A-Za-z][A-Za-z+#]*) ?v?(\d+(?:\.\d+){0,2})\b`)
	wordRe    = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	quoteRe   = regexp.MustCompile(`「([^」\n]{1,30})」|『([^』\n]{1,30})』|“([^”\n]{1,30})”|《([^》\n]{1,30})》`)
)

// fileExts are the extensions that make a bare name a file name
// ("README.md"), where "e.g" and "v1.2" are not.
var fileExts = setOf("go", "py", "js", "mjs", "ts", "tsx", "jsx", "vue", "rs", "java", "kt", "rb", "php", "c", "h",
	"cc", "cpp", "hpp", "cs", "swift", "sh", "bash", "zsh", "ps1", "md", "txt", "rst", "yaml", "yml", "json", "toml",
	"ini", "cfg", "conf", "env", "xml", "html", "css", "scss", "sql", "proto", "mod", "sum", "lock", "csv", "log",
	"ipynb", "dockerfile")

func (k *entityKinds) addFile(name string) bool {
	if !fileExts[strings.ToLower(name[strings.LastIndexByte(name, '.')+1:])] {
		return false
	}
	k.paths = append(k.paths, name)
	return true
}

// knownTools are lower-case names that take a version without being
// capitalised ("python 3.12").
var knownTools = setOf("python", "go", "golang", "node", "nodejs", "java", "ruby", "rust", "php", "perl",
	"postgres", "postgresql", "mysql", "redis", "nginx", "docker", "kubernetes", "k8s", "ubuntu", "debian",
	"gcc", "clang", "swift", "kotlin", "dotnet", "npm", "pnpm", "yarn", "pip", "vue", "react", "angular",
	"django", "flask", "rails", "spring", "nats", "sqlite", "mongodb", "kafka", "elasticsearch", "terraform")

// notNames are capitalised words that name nothing: function words at
// the head of a clause, calendar words, greetings, log levels.
var notNames = setOf("i", "im", "ive", "id", "ill", "a", "an", "the", "and", "or", "but", "if", "in", "on",
	"at", "by", "for", "from", "to", "of", "with", "as", "is", "it", "its", "this", "that", "these", "those",
	"since", "until", "before", "after", "about", "around", "over", "under", "between", "into", "also",
	"step", "version", "chapter", "section", "phase", "day", "week", "month", "year", "top", "table",
	"figure", "page", "round", "part", "issue", "item", "line", "option", "case", "point", "level", "number",
	"no", "yes", "ok", "okay", "hi", "hello", "hey", "thanks", "please", "sorry", "mr", "mrs", "ms", "dr",
	"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
	"march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
	"todo", "fyi", "btw", "asap", "eof", "am", "pm", "error", "warn", "warning", "info", "debug", "fail",
	"failed", "pass", "passed", "note", "ok", "not", "true", "false", "null", "nil", "none", "let", "lets",
	"try", "attempt", "test", "run", "use", "add", "see", "take", "only", "just", "then", "now", "here",
	"there", "what", "why", "how", "when", "where", "which", "who", "can", "could", "would", "should", "will",
	"done", "fixed", "great", "good", "nice", "sure", "we", "you", "he", "she", "they", "my", "our", "your")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// entityKinds collects entities by kind, each in order of first
// appearance.
type entityKinds struct {
	projects, paths, hosts, versions, code, quoted, names []string
	versionNames                                          map[string]bool
}

// entities follows the rules documented at Extractive.
func (s *session) entities() []string {
	k := &entityKinds{versionNames: map[string]bool{}}
	seenProject := map[string]bool{}
	for i := len(s.turns) - 1; i >= 0 && len(k.projects) < maxProjects; i-- {
		p := clean(s.turns[i].Project)
		if p == "" || seenProject[strings.ToLower(p)] {
			continue
		}
		seenProject[strings.ToLower(p)] = true
		k.projects = append(k.projects, ProjectPrefix+p)
	}
	for _, t := range s.turns {
		switch normRole(t.Role) {
		case roleUser, roleAssistant:
			k.scanText(t.Content)
		}
		for _, c := range t.ToolCalls {
			k.scanInput(c.Input)
		}
	}
	out := []string{}
	seen := map[string]bool{}
	for _, group := range [][]string{k.projects, k.paths, k.hosts, k.versions, k.code, k.quoted, k.names} {
		for _, e := range group {
			e = clean(e)
			key := strings.ToLower(e)
			if e == "" || seen[key] || runes(e) > MaxEntityRunes || len(e) > maxEntityBytes {
				continue
			}
			seen[key] = true
			out = append(out, e)
			if len(out) == MaxEntities {
				return out
			}
		}
	}
	return out
}

// scanText takes every kind of entity from what a person or the
// assistant wrote. What each pattern takes is blanked out before the
// next looks, so a path's segments are not also names.
func (k *entityKinds) scanText(text string) {
	text = strings.ToValidUTF8(chars.CutBytes(text, maxScanBytes), "")
	text = blank(text, fenceRe, nil)
	text = blank(text, codeRe, func(m []string) bool { k.code = append(k.code, m[1]); return true })
	text = blank(text, urlRe, func(m []string) bool { return k.addHost(m[0]) })
	text = blank(text, pathRe, func(m []string) bool { return k.addPath(m[0]) })
	text = blank(text, fileRe, func(m []string) bool { return k.addFile(m[0]) })
	text = blank(text, quoteRe, func(m []string) bool {
		for _, g := range m[1:] {
			if strings.TrimSpace(g) != "" {
				k.quoted = append(k.quoted, g)
			}
		}
		return true
	})
	text = blank(text, versionRe, func(m []string) bool {
		name := m[1]
		if notNames[strings.ToLower(name)] || len(name) < 2 ||
			!unicode.IsUpper(rune(name[0])) && !knownTools[strings.ToLower(name)] {
			return false
		}
		k.versions = append(k.versions, m[0])
		k.versionNames[strings.ToLower(name)] = true
		return true
	})
	k.scanNames(text)
}

// scanInput takes paths and hosts from a tool call's input.
func (k *entityKinds) scanInput(input string) {
	text := strings.ToValidUTF8(chars.CutBytes(input, maxScanInputBytes), "")
	text = blank(text, urlRe, func(m []string) bool { return k.addHost(m[0]) })
	text = blank(text, pathRe, func(m []string) bool { return k.addPath(m[0]) })
	blank(text, fileRe, func(m []string) bool { return k.addFile(m[0]) })
}

func (k *entityKinds) addHost(raw string) bool {
	u, err := url.Parse(strings.TrimRight(raw, ".,:;"))
	if err != nil || u.Hostname() == "" {
		return false
	}
	k.hosts = append(k.hosts, strings.ToLower(u.Hostname()))
	return true
}

// addPath keeps what reads as a file path: one that starts at a root
// ("/", "./", "../", "~/"), ends in a file extension, or has at least two
// slashes. "and/or" and "TCP/IP" do not.
func (k *entityKinds) addPath(p string) bool {
	p = strings.TrimRight(p, ".,:;")
	if p != "/" {
		p = strings.TrimRight(p, "/")
	}
	if !hasLetter(p) {
		return false // a date or a fraction
	}
	last := p[strings.LastIndexByte(p, '/')+1:]
	ext := ""
	if i := strings.LastIndexByte(last, '.'); i > 0 {
		ext = last[i+1:]
	}
	rooted := strings.HasPrefix(p, "/") || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "~/")
	if !rooted && (ext == "" || !hasLetter(ext) || strings.ContainsAny(ext, "0123456789")) && strings.Count(p, "/") < 2 {
		return false
	}
	k.paths = append(k.paths, p)
	return true
}

// scanNames takes acronyms, CamelCase identifiers and capitalised words
// that do not start a sentence.
func (k *entityKinds) scanNames(text string) {
	for _, loc := range wordRe.FindAllStringIndex(text, -1) {
		w := text[loc[0]:loc[1]]
		lw := strings.ToLower(w)
		if len(w) < 2 || notNames[lw] || k.versionNames[lw] {
			continue
		}
		// Part of a longer token ("x86_64", "Nats-Msg-Id", "naïveFoo") is
		// not a name; Han around it ("用Redis做") is fine.
		if r, _ := utf8.DecodeLastRuneInString(text[:loc[0]]); r == '_' || r == '-' || r < utf8.RuneSelf && isWordByte(byte(r)) || unicode.Is(unicode.Latin, r) {
			continue
		}
		rest := text[loc[1]:]
		if r, _ := utf8.DecodeRuneInString(rest); r == '_' || unicode.Is(unicode.Latin, r) ||
			r == '-' && len(rest) > 1 && isWordByte(rest[1]) || r == '\'' && !strings.HasPrefix(rest, "'s") {
			continue
		}
		switch {
		case isAcronym(w), isCamel(w):
			k.names = append(k.names, w)
		case unicode.IsUpper(rune(w[0])) && !startsSentence(text[:loc[0]]):
			k.names = append(k.names, w)
		}
	}
}

func isAcronym(w string) bool {
	letters := 0
	for _, r := range w {
		switch {
		case unicode.IsLower(r):
			return false
		case unicode.IsUpper(r):
			letters++
		}
	}
	return letters >= 2
}

// isCamel reports a lower-case letter followed by a capital: JetStream,
// PostgreSQL, parseToken.
func isCamel(w string) bool {
	for i := 1; i < len(w); i++ {
		if unicode.IsLower(rune(w[i-1])) && unicode.IsUpper(rune(w[i])) {
			return true
		}
	}
	return false
}

// startsSentence reports whether a word after before begins a sentence
// or a line, where any word is capitalised.
func startsSentence(before string) bool {
	before = strings.TrimRightFunc(before, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'“‘(*_-#>", r)
	})
	if before == "" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return strings.ContainsRune(".!?。！？:：;；\n", r) || unicode.IsDigit(r) && strings.HasSuffix(before, ".")
}

// needs lists, for a pattern, characters one of which any match holds.
var needs = map[*regexp.Regexp]string{
	fenceRe: "`", codeRe: "`", urlRe: ":", pathRe: "/", fileRe: ".",
	quoteRe: "「『“《", versionRe: "0123456789",
}

// blank replaces with spaces each match of re in text that take keeps
// (take is handed its submatches), so later patterns do not see it again.
func blank(text string, re *regexp.Regexp, take func([]string) bool) string {
	if need, ok := needs[re]; ok && !strings.ContainsAny(text, need) {
		return text // cannot match: save the scan
	}
	locs := re.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 {
		return text
	}
	var b strings.Builder
	prev := 0
	for _, loc := range locs {
		if take != nil {
			sub := make([]string, len(loc)/2)
			for i := range sub {
				if loc[2*i] >= 0 {
					sub[i] = text[loc[2*i]:loc[2*i+1]]
				}
			}
			if !take(sub) {
				continue
			}
		}
		b.WriteString(text[prev:loc[0]])
		b.WriteString(strings.Repeat(" ", loc[1]-loc[0]))
		prev = loc[1]
	}
	b.WriteString(text[prev:])
	return b.String()
}

var projectCues = []string{"project", "repo", "repository", "codebase", "项目", "仓库", "工程"}

// Projects are the projects an episode is about: its ProjectPrefix
// entities, then other entities the goal or summary calls a project
// ("the Atlas project", "项目「星河」", "engram repo").
func Projects(ep memory.Episode) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if k := strings.ToLower(p); p != "" && !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	for _, e := range ep.Entities {
		if p, ok := strings.CutPrefix(e, ProjectPrefix); ok {
			add(clean(p))
		}
	}
	text := ep.Goal + "\n" + ep.Summary
	for _, e := range ep.Entities {
		if strings.HasPrefix(e, ProjectPrefix) || strings.ContainsAny(e, "/`") || e == "" {
			continue
		}
		if calledProject(text, e) {
			add(e)
		}
	}
	return out
}

// calledProject reports whether text names e right next to a word for a
// project.
func calledProject(text, e string) bool {
	for off := 0; off < len(text); {
		i := strings.Index(text[off:], e)
		if i < 0 {
			return false
		}
		i += off
		before := strings.ToLower(strings.TrimRight(text[:i], " 「『“《\"'"))
		after := strings.ToLower(strings.TrimLeft(text[i+len(e):], " 」』”》\"'"))
		for _, c := range projectCues {
			if strings.HasSuffix(before, c) || strings.HasPrefix(after, c) {
				return true
			}
		}
		off = i + len(e)
	}
	return false
}
