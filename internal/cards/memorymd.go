package cards

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/maintain"
	"github.com/engramhq/engram/internal/memory"
)

// MEMORY.md limits (seed 000 §7.4): about 1,500 characters, at most five
// entries of each kind.
const (
	MemoryMDChars   = 1500
	MemoryMDPerKind = 5
)

// kindOrder is the order of MEMORY.md's sections: who the user is and how
// they want to be treated first, then what is known.
var kindOrder = []memory.Kind{
	memory.KindIdentity, memory.KindPreference, memory.KindRule,
	memory.KindFact, memory.KindSkill, memory.KindError, memory.KindContext,
}

type headings struct {
	title string
	kinds map[memory.Kind]string
}

var memoryHeadings = map[bool]headings{
	false: {"Core memory", map[memory.Kind]string{
		memory.KindIdentity: "Identity", memory.KindPreference: "Preferences", memory.KindRule: "Rules",
		memory.KindFact: "Facts", memory.KindSkill: "Skills", memory.KindError: "Lessons", memory.KindContext: "Context",
	}},
	true: {"核心记忆", map[memory.Kind]string{
		memory.KindIdentity: "身份", memory.KindPreference: "偏好", memory.KindRule: "规则",
		memory.KindFact: "事实", memory.KindSkill: "技能", memory.KindError: "教训", memory.KindContext: "上下文",
	}},
}

// entry is one memory ready to render.
type entry struct {
	id    string
	kind  memory.Kind
	text  string // escaped, one line
	score float64
	imp   float64
	order int // rank of its section
}

// MemoryMD renders MEMORY.md: the active memories with the highest
// maintain.Score at now, at most MemoryMDPerKind of each kind, in at most
// maxChars characters (Unicode code points; ≤ 0 means MemoryMDChars),
// grouped under one heading per kind:
//
//	# Core memory
//
//	## Identity
//	- User's name is Ana
//
//	## Rules
//	- Rule: answer in English
//
// Entries are chosen best first across all kinds: each is taken if it and,
// for the first of its kind, its heading still fit, so a long entry that
// does not fit leaves room for shorter ones after it. Within a section they
// keep that order. Memories that are not active, have an unknown kind, are
// credentials, or would expire at now are left out, as is a second entry
// with the same text. When not even the title fits, the result is "".
func MemoryMD(mems []memory.Memory, now time.Time, maxChars int) string {
	return memoryMD(mems, now, maxChars, false)
}

// MemoryMDFile is MemoryMD as written to a file a person may edit: each
// entry ends with its memory's id in an HTML comment ("- User likes tea
// <!-- m_0123abcd -->"), which ParseMemoryMD reads back. The comments do
// not count against maxChars. An entry's text cannot hold "<!--" (escape
// writes '<' as "\<"), so the comment is always engram's.
func MemoryMDFile(mems []memory.Memory, now time.Time, maxChars int) string {
	return memoryMD(mems, now, maxChars, true)
}

func memoryMD(mems []memory.Memory, now time.Time, maxChars int, ids bool) string {
	if maxChars <= 0 {
		maxChars = MemoryMDChars
	}
	rank := make(map[memory.Kind]int, len(kindOrder))
	for i, k := range kindOrder {
		rank[k] = i
	}

	var all []entry
	for _, m := range mems {
		o, ok := rank[m.Kind]
		if !ok || !onCard(m, now) {
			continue
		}
		text := inline(m.Content, EntryMaxChars)
		if text == "" {
			continue
		}
		all = append(all, entry{id: m.ID, kind: m.Kind, text: text, score: maintain.Score(m, now), imp: m.Importance, order: o})
	}
	slices.SortFunc(all, func(a, b entry) int {
		return cmp.Or(
			cmp.Compare(b.score, a.score),
			cmp.Compare(b.imp, a.imp),
			cmp.Compare(a.order, b.order),
			cmp.Compare(a.id, b.id),
			strings.Compare(a.text, b.text),
		)
	})

	// The best MemoryMDPerKind of each kind, without repeated text.
	perKind := make(map[memory.Kind]int)
	seen := make(map[string]bool)
	var cands []entry
	for _, e := range all {
		if perKind[e.kind] == MemoryMDPerKind || seen[e.text] {
			continue
		}
		perKind[e.kind]++
		seen[e.text] = true
		cands = append(cands, e)
	}

	texts := make([]string, len(cands))
	for i, e := range cands {
		texts[i] = e.text
	}
	h := memoryHeadings[chinese(texts)]

	title := "# " + h.title + "\n"
	used := runes(title)
	if used > maxChars {
		return ""
	}
	chosen := make(map[memory.Kind][]entry)
	for _, e := range cands {
		cost := runes(e.text) + len("- \n")
		if len(chosen[e.kind]) == 0 {
			cost += runes(h.kinds[e.kind]) + len("\n## \n")
		}
		if used+cost > maxChars {
			continue
		}
		used += cost
		chosen[e.kind] = append(chosen[e.kind], e)
	}

	var b strings.Builder
	b.WriteString(title)
	for _, k := range kindOrder {
		if len(chosen[k]) == 0 {
			continue
		}
		b.WriteString("\n## " + h.kinds[k] + "\n")
		for _, e := range chosen[k] {
			b.WriteString("- " + e.text)
			if ids && validCardID(e.id) {
				b.WriteString(" <!-- " + e.id + " -->")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// onCard reports whether m may appear on a card at now.
func onCard(m memory.Memory, now time.Time) bool {
	return m.Status == memory.StatusActive && m.Category != memory.CategoryCredential && !maintain.Expired(m, now)
}
