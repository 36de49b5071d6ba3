package cards

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

func cardMemories() []memory.Memory {
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, kind memory.Kind, content string) memory.Memory {
		return memory.Memory{ID: id, Kind: kind, Category: memory.CategoryConfig, Subject: "user", Predicate: "note",
			Content: content, Importance: 0.8, Confidence: 1, Status: memory.StatusActive, Created: now, Updated: now}
	}
	return []memory.Memory{
		mk("m_aaaa", memory.KindIdentity, "User's name is Ana"),
		mk("m_bbbb", memory.KindPreference, "User likes <b>green</b> tea and [links]"),
		mk("m_cccc", memory.KindRule, "# never push to main"),
		mk("m_dddd", memory.KindFact, `Code lives in D:\code\src`),
	}
}

// What MemoryMDFile writes, ParseMemoryMD reads back: the same ids, kinds
// and texts, the escaping undone.
func TestMemoryMDFileRoundTrip(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	card := MemoryMDFile(cardMemories(), now, 0)
	if !strings.Contains(card, "- User's name is Ana <!-- m_aaaa -->\n") {
		t.Fatalf("no id comment on the entry:\n%s", card)
	}
	if plain := MemoryMD(cardMemories(), now, 0); strings.Contains(plain, "<!--") {
		t.Fatalf("MemoryMD (prompts) carries ids:\n%s", plain)
	}
	got := map[string]Line{}
	for _, l := range ParseMemoryMD(card) {
		got[l.ID] = l
	}
	for _, m := range cardMemories() {
		if l := got[m.ID]; l.Text != m.Content || l.Kind != m.Kind {
			t.Errorf("%s read back as %+v, want %q (%s)", m.ID, l, m.Content, m.Kind)
		}
	}
	if e := DiffMemoryMD(card, card); !e.Empty() {
		t.Errorf("an untouched card has edits: %+v", e)
	}
}

// A person edits one line, adds one, deletes one and moves one to another
// section; the diff says exactly that.
func TestDiffMemoryMD(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	card := MemoryMDFile(cardMemories(), now, 0)
	edited := strings.Replace(card, "User's name is Ana <!--", "User's name is Anna <!--", 1)
	edited = strings.Replace(edited, "## Preferences\n", "## Preferences\n- User prefers dark mode\n", 1)
	edited = strings.Replace(edited, "- \\# never push to main <!-- m_cccc -->\n", "", 1)
	// The fact moves under Preferences.
	edited = strings.Replace(edited, "- Code lives in D:\\code\\src <!-- m_dddd -->\n", "", 1)
	edited = strings.Replace(edited, "## Preferences\n", "## Preferences\n*   Code lives in D:\\code\\src   <!--m_dddd-->\n", 1)
	e := DiffMemoryMD(card, edited)
	want := Edits{
		Added:   []Line{{Kind: memory.KindPreference, Text: "User prefers dark mode"}},
		Updated: []Line{{ID: "m_aaaa", Text: "User's name is Anna"}, {ID: "m_dddd", Kind: memory.KindPreference}},
		Deleted: []string{"m_cccc"},
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("edits = %+v\nwant    %+v\ncard:\n%s\nedited:\n%s", e, want, card, edited)
	}
	// A copied line (its id twice) is a new line; a made-up id is too.
	dup := card + "- another copy <!-- m_aaaa -->\n- invented <!-- m_zzzz -->\n"
	e = DiffMemoryMD(card, dup)
	if len(e.Added) != 2 || e.Added[0].Text != "another copy" || e.Added[1].ID != "" || len(e.Updated)+len(e.Deleted) != 0 {
		t.Fatalf("copied and invented ids: %+v", e)
	}
}

// USER.md's memory lines carry their ids; a person's edit of them reads
// back as added (with the section), updated and deleted; project lines
// and moves between sections are not edits.
func TestDiffUserMD(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string, kind memory.Kind, pred, content string) memory.Memory {
		return memory.Memory{ID: id, Kind: kind, Category: memory.CategoryConfig, Subject: "user", Predicate: pred,
			Content: content, Importance: 0.8, Confidence: 1, Status: memory.StatusActive, Created: now, Updated: now}
	}
	mems := []memory.Memory{
		mk("m_name", memory.KindIdentity, "name", "User's name is Ana"),
		mk("m_py", memory.KindFact, "uses", "User uses Python"),
		mk("m_sh", memory.KindFact, "shell", "User's shell is fish"),
		mk("m_dark", memory.KindPreference, "prefers", "User prefers dark mode"),
	}
	pad := &memory.Scratchpad{CurrentFocus: "ship it", ActiveProjects: []string{"engram"}}
	card := UserMDFile(mems, pad, now)
	if !strings.Contains(card, "- User uses Python <!-- m_py -->\n") || strings.Contains(card, "engram <!--") {
		t.Fatalf("USER.md:\n%s", card)
	}
	if plain := UserMD(mems, pad, now); strings.Contains(plain, "<!--") {
		t.Fatalf("UserMD (prompts) carries ids:\n%s", plain)
	}
	if e := DiffUserMD(card, card); !e.Empty() {
		t.Fatalf("untouched: %+v", e)
	}
	edited := strings.Replace(card, "User uses Python <!--", "User uses Python 3.13 <!--", 1)
	edited = strings.Replace(edited, "- User prefers dark mode <!-- m_dark -->\n", "", 1)
	edited = strings.Replace(edited, "## Environment\n", "## Environment\n- User's editor is Helix\n", 1)
	edited = strings.Replace(edited, "- engram\n", "- engram\n- homelab\n", 1)
	e := DiffUserMD(card, edited)
	want := Edits{
		Added:   []Line{{Kind: memory.KindFact, Section: UserEnv, Text: "User's editor is Helix"}},
		Updated: []Line{{ID: "m_py", Text: "User uses Python 3.13"}},
		Deleted: []string{"m_dark"},
	}
	if !reflect.DeepEqual(e, want) {
		t.Fatalf("edits = %+v\nwant    %+v\nedited:\n%s", e, want, edited)
	}
}
