package cards

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/maintain"
	"github.com/engramhq/engram/internal/memory"
)

// USER.md limits: entries per section and projects listed. Seed 000 §6.3
// reads 30 user facts; five sections of ten keep the card short enough to
// sit in every prompt.
const (
	UserMDPerSection = 10
	UserMDProjects   = 10
)

type section int

const (
	secBasic section = iota
	secTech
	secEnv
	secPrefs
	secProjects
	secNone
)

var userHeadings = map[bool]struct {
	title, focus string
	sections     [secNone]string
}{
	false: {"User profile", "Current focus: ", [secNone]string{"Basic info", "Tech stack", "Environment", "Preferences", "Projects"}},
	true:  {"用户画像", "当前重点：", [secNone]string{"基本信息", "技术栈", "开发环境", "偏好", "项目"}},
}

// basicOrder is the order of the basic-info section and the predicates that
// belong in it (the canonical vocabulary of internal/ruleextract).
var basicOrder = []string{
	"name", "nickname", "occupation", "role", "employer", "location", "hometown",
	"timezone", "language", "age", "birthday", "email",
}

// envPredicates describe where and with what the user works (seed 000
// §6.3: OS, IDE, shell; and paths and config).
var envPredicates = []string{"path", "os", "shell", "editor", "ide", "terminal", "config", "dotfiles"}

var userSubjects = []string{"user", "用户", "me", "我", "i"}

// classify says which USER.md section m belongs to, and its place in that
// section's order (lower first) before score.
func classify(m memory.Memory) (section, int) {
	p := memory.NormalizeKey(m.Predicate)
	switch {
	case m.Kind == memory.KindIdentity || m.Category == memory.CategoryIdentity:
		return secBasic, basicRank(p)
	case slices.Contains(basicOrder, p) && slices.Contains(userSubjects, memory.NormalizeKey(m.Subject)):
		return secBasic, basicRank(p)
	case p == "uses" || p == "tech":
		return secTech, 0
	case p == "version":
		return secTech, 1
	case slices.Contains(envPredicates, p):
		return secEnv, 0
	case m.Kind == memory.KindPreference || p == "likes" || p == "prefers" || p == "dislikes":
		return secPrefs, 0
	}
	return secNone, 0
}

func basicRank(p string) int {
	if i := slices.Index(basicOrder, p); i >= 0 {
		return i
	}
	return len(basicOrder)
}

type userEntry struct {
	entry
	subject string
	key     string // subject and predicate when the predicate is single-valued
	rank    int
	last    time.Time
}

// UserMD renders USER.md, the user's profile (seed 000 §6.3), from the
// active memories and the scratchpad (which may be nil):
//
//   - basic info: identity memories, and the user's name, occupation,
//     employer, location… in that order;
//   - tech stack: "uses" and "version" facts, grouped by subject;
//   - environment: paths, OS, shell, editor, config;
//   - preferences: likes, dislikes, prefers and other preference memories;
//   - projects: the scratchpad's current focus and active projects, then
//     the projects that memories belong to, most recently used first
//     (names starting with "_", like "_global", are partitions, not
//     projects).
//
// Within a section, entries go by their place above, then by
// maintain.Score at now, then by id, at most UserMDPerSection of them. Of
// several active memories for one subject and single-valued predicate
// (which supersede should have prevented) only the newest is shown. Rules,
// skills, errors and context are MEMORY.md's business; credentials appear
// on no card. Empty sections are left out. Headings are Chinese when most of
// what is shown is Chinese.
func UserMD(mems []memory.Memory, pad *memory.Scratchpad, now time.Time) string {
	return userMD(mems, pad, now, false)
}

// UserMDFile is UserMD as written to a file a person may edit: each entry
// that is a memory ends with the memory's id in an HTML comment, which
// ParseUserMD reads back. Project lines carry none: they are not memories.
func UserMDFile(mems []memory.Memory, pad *memory.Scratchpad, now time.Time) string {
	return userMD(mems, pad, now, true)
}

func userMD(mems []memory.Memory, pad *memory.Scratchpad, now time.Time, ids bool) string {
	var sections [secNone][]userEntry
	projectLast := map[string]time.Time{}
	for _, m := range mems {
		if !onCard(m, now) {
			continue
		}
		if name := strings.TrimSpace(m.Project); name != "" && !strings.HasPrefix(name, "_") {
			if t := maintain.LastUsed(m); !projectLast[name].After(t) {
				projectLast[name] = t
			}
		}
		sec, rank := classify(m)
		if sec == secNone {
			continue
		}
		text := inline(m.Content, EntryMaxChars)
		if text == "" {
			continue
		}
		e := userEntry{
			entry:   entry{id: m.ID, text: text, score: maintain.Score(m, now), imp: m.Importance},
			subject: memory.NormalizeKey(m.Subject),
			rank:    rank,
			last:    writtenAt(m),
		}
		if memory.SingleValued(m.Predicate) {
			e.key = e.subject + "\x00" + memory.NormalizeKey(m.Predicate)
		}
		sections[sec] = append(sections[sec], e)
	}

	var lines [secNone][]string
	var texts []string
	for sec := range secProjects {
		for _, e := range pickUser(sections[sec], sec == secTech) {
			texts = append(texts, e.text)
			l := e.text
			if ids && validCardID(e.id) {
				l += " <!-- " + e.id + " -->"
			}
			lines[sec] = append(lines[sec], l)
		}
	}

	focus, projects := projectLines(pad, projectLast)
	texts = append(texts, projects...)
	if focus != "" {
		texts = append(texts, focus)
	}
	if pad != nil && pad.Content != "" {
		texts = append(texts, clean(pad.Content))
	}

	h := userHeadings[chinese(texts)]
	if focus != "" {
		lines[secProjects] = append(lines[secProjects], h.focus+focus)
	}
	lines[secProjects] = append(lines[secProjects], projects...)

	var b strings.Builder
	b.WriteString("# " + h.title + "\n")
	for sec, ls := range lines {
		if len(ls) == 0 {
			continue
		}
		b.WriteString("\n## " + h.sections[sec] + "\n")
		for _, l := range ls {
			b.WriteString("- " + l + "\n")
		}
	}
	return b.String()
}

// projectLines returns the scratchpad's current focus and the projects to
// list: the scratchpad's active projects in its order, then those memories
// belong to, most recently used first, without repeats (ignoring case), at
// most UserMDProjects. Both are escaped.
func projectLines(pad *memory.Scratchpad, lastUsed map[string]time.Time) (focus string, projects []string) {
	seen := map[string]bool{}
	add := func(name string) {
		text := inline(name, EntryMaxChars)
		if key := strings.ToLower(text); text != "" && !seen[key] && len(projects) < UserMDProjects {
			seen[key] = true
			projects = append(projects, text)
		}
	}
	if pad != nil {
		focus = inline(pad.CurrentFocus, EntryMaxChars)
		for _, p := range pad.ActiveProjects {
			add(p)
		}
	}
	names := slices.Collect(maps.Keys(lastUsed))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(lastUsed[b].Compare(lastUsed[a]), strings.Compare(a, b))
	})
	for _, name := range names {
		add(name)
	}
	return focus, projects
}

// pickUser orders a section's entries, keeps the newest of each
// single-valued (subject, predicate) and drops repeated text. Tech entries
// are grouped by subject so a tool's use and version sit together.
func pickUser(es []userEntry, bySubject bool) []userEntry {
	// Newest first, so the first of a single-valued key seen is the one kept.
	slices.SortFunc(es, func(a, b userEntry) int {
		return cmp.Or(b.last.Compare(a.last), cmp.Compare(a.id, b.id), strings.Compare(a.text, b.text))
	})
	keys := map[string]bool{}
	kept := es[:0:0]
	for _, e := range es {
		if e.key != "" {
			if keys[e.key] {
				continue
			}
			keys[e.key] = true
		}
		kept = append(kept, e)
	}
	slices.SortFunc(kept, func(a, b userEntry) int {
		c := 0
		if bySubject {
			c = strings.Compare(a.subject, b.subject)
		}
		return cmp.Or(c,
			cmp.Compare(a.rank, b.rank),
			cmp.Compare(b.score, a.score),
			cmp.Compare(a.id, b.id),
			strings.Compare(a.text, b.text),
		)
	})
	var out []userEntry
	seen := map[string]bool{}
	for _, e := range kept {
		if len(out) == UserMDPerSection {
			break
		}
		if seen[e.text] {
			continue
		}
		seen[e.text] = true
		out = append(out, e)
	}
	return out
}

// writtenAt is when a memory's value was last written.
func writtenAt(m memory.Memory) time.Time {
	if m.Updated.After(m.Created) {
		return m.Updated
	}
	return m.Created
}
