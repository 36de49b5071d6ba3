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
	Text string
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
	kind := memory.KindFact
	seen := map[string]bool{}
	var out []Line
	for _, raw := range strings.Split(s, "\n") {
		raw = strings.TrimRight(raw, "\r")
		if m := heading.FindStringSubmatch(raw); m != nil {
			if len(m[1]) >= 2 {
				kind = memory.KindFact
				if k, ok := kinds[strings.ToLower(strings.TrimSpace(m[2]))]; ok {
					kind = k
				}
			}
			continue
		}
		loc := item.FindStringIndex(raw)
		if loc == nil {
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
		out = append(out, Line{ID: id, Kind: kind, Text: text})
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
	old := map[string]Line{}
	var order []string
	for _, l := range ParseMemoryMD(last) {
		if l.ID != "" {
			old[l.ID] = l
			order = append(order, l.ID)
		}
	}
	var e Edits
	kept := map[string]bool{}
	for _, l := range ParseMemoryMD(edited) {
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
