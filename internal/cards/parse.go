package cards

import (
	"regexp"
	"strings"

	"github.com/engramhq/engram/internal/memory"
)

// Line is one entry of a MEMORY.md as a person left it: the memory it
// stands for (ID, "" for a line a person added), the section it is under,
// and its text with the card's escaping undone.
type Line struct {
	ID   string
	Kind memory.Kind
	// Section is USER.md's section of the line (UserBasic, …); "" in
	// MEMORY.md.
	Section string
	Text    string
}

// USER.md's sections of memories, the Section of its Lines.
const (
	UserBasic = "basic"
	UserTech  = "tech"
	UserEnv   = "env"
	UserPrefs = "prefs"
)

var userSections = [secNone]struct {
	name string
	kind memory.Kind
}{
	secBasic: {UserBasic, memory.KindIdentity}, secTech: {UserTech, memory.KindFact},
	secEnv: {UserEnv, memory.KindFact}, secPrefs: {UserPrefs, memory.KindPreference},
}

var (
	idComment = regexp.MustCompile(`[ \t]*<!--[ \t]*(m_[0-9A-Za-z_-]{1,64})[ \t]*-->[ \t]*$`)
	cardID    = regexp.MustCompile(`^m_[0-9A-Za-z_-]{1,64}$`)
	item      = regexp.MustCompile(`^[ \t]{0,3}[-*+][ \t]+`)
	heading   = regexp.MustCompile(`^[ \t]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$`)
)

func validCardID(id string) bool { return cardID.MatchString(id) }

// ParseMemoryMD reads the entries of a MEMORY.md written by MemoryMDFile
// and then perhaps edited by hand: every list item is an entry, of the kind
// its "## " heading names (in either language; an unknown heading or none
// is a fact), with the id of its trailing comment when it has one. A
// second line with the same id is read as a new line. Everything else —
// headings, blank lines, prose — is not an entry.
func ParseMemoryMD(s string) []Line {
	kinds := map[string]memory.Kind{}
	for _, h := range memoryHeadings {
		for k, name := range h.kinds {
			kinds[strings.ToLower(name)] = k
		}
	}
	return parseCard(s, func(h string) (Line, bool) {
		if k, ok := kinds[h]; ok {
			return Line{Kind: k}, true
		}
		return Line{Kind: memory.KindFact}, true
	})
}

// ParseUserMD reads the entries of a USER.md written by UserMDFile and
// perhaps edited: the list items of its basic-info, tech-stack,
// environment and preferences sections, each with its Section and the
// kind a memory of that section has. The projects section (the scratchpad
// and the memories' projects, not memories) and unknown sections are not
// read.
func ParseUserMD(s string) []Line {
	secs := map[string]Line{}
	for _, h := range userHeadings {
		for i, name := range h.sections {
			if i < len(userSections) && userSections[i].name != "" {
				secs[strings.ToLower(name)] = Line{Kind: userSections[i].kind, Section: userSections[i].name}
			}
		}
	}
	return parseCard(s, func(h string) (Line, bool) {
		l, ok := secs[h]
		return l, ok
	})
}

// DiffUserMD is DiffMemoryMD for USER.md. A line moved to another section
// is not an edit (a section is not a kind), and a line added carries its
// Section.
func DiffUserMD(last, edited string) Edits {
	e := diffLines(ParseUserMD(last), ParseUserMD(edited))
	kept := e.Updated[:0]
	for _, u := range e.Updated {
		u.Kind = ""
		if u.Text != "" {
			kept = append(kept, u)
		}
	}
	e.Updated = kept
	return e
}

// parseCard reads a card's list items; section says what a "## "
// heading's items are (its lowercased text), false to skip them.
func parseCard(s string, section func(heading string) (Line, bool)) []Line {
	cur, on := section("")
	seen := map[string]bool{}
	var out []Line
	for _, raw := range strings.Split(s, "\n") {
		raw = strings.TrimRight(raw, "\r")
		if m := heading.FindStringSubmatch(raw); m != nil {
			if len(m[1]) >= 2 {
				cur, on = section(strings.ToLower(strings.TrimSpace(m[2])))
			}
			continue
		}
		loc := item.FindStringIndex(raw)
		if loc == nil || !on {
			continue
		}
		text := raw[loc[1]:]
		id := ""
		if m := idComment.FindStringSubmatchIndex(text); m != nil {
			id = text[m[2]:m[3]]
			text = text[:m[0]]
		}
		text = strings.TrimSpace(unescape(text))
		if text == "" {
			continue
		}
		if seen[id] {
			id = ""
		}
		if id != "" {
			seen[id] = true
		}
		out = append(out, Line{ID: id, Kind: cur.Kind, Section: cur.Section, Text: text})
	}
	return out
}

// unescape undoes escape: a backslash before ASCII punctuation is dropped
// (CommonMark's reading); any other backslash stays.
func unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Edits are what a person changed in a card: lines added, lines whose text
// or section changed, and memories whose line was removed.
type Edits struct {
	Added   []Line
	Updated []Line // Text is set only when it changed, Kind only when the line moved to another section
	Deleted []string
}

// Empty reports whether there is nothing to do.
func (e Edits) Empty() bool { return len(e.Added)+len(e.Updated)+len(e.Deleted) == 0 }

// DiffMemoryMD compares the MEMORY.md engram last wrote with the file as a
// person left it. A line of the old card whose id is gone was deleted; one
// whose text or section differs was updated; a line with no id, or an id
// the old card did not show, was added. Lines a person did not touch are
// left alone, even when the card showed a memory's text cut short.
func DiffMemoryMD(last, edited string) Edits {
	return diffLines(ParseMemoryMD(last), ParseMemoryMD(edited))
}

func diffLines(lastLines, editedLines []Line) Edits {
	old := map[string]Line{}
	var order []string
	for _, l := range lastLines {
		if l.ID != "" {
			old[l.ID] = l
			order = append(order, l.ID)
		}
	}
	var e Edits
	kept := map[string]bool{}
	for _, l := range editedLines {
		o, ok := old[l.ID]
		if l.ID == "" || !ok {
			l.ID = ""
			e.Added = append(e.Added, l)
			continue
		}
		kept[l.ID] = true
		if o.Text == l.Text && o.Kind == l.Kind {
			continue
		}
		u := Line{ID: l.ID}
		if o.Text != l.Text {
			u.Text = l.Text
		}
		if o.Kind != l.Kind {
			u.Kind = l.Kind
		}
		e.Updated = append(e.Updated, u)
	}
	for _, id := range order {
		if !kept[id] {
			e.Deleted = append(e.Deleted, id)
		}
	}
	return e
}
