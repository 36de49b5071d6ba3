package cards

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/memory"
)

// FuzzMemoryMD renders MEMORY.md around arbitrary content: it must never
// panic, never exceed its budget, and never let content start a line.
// The seed corpus is in testdata/fuzz/FuzzMemoryMD.
func FuzzMemoryMD(f *testing.F) {
	f.Fuzz(checkCards)
}

func checkCards(t *testing.T, content, other string, kind uint8, importance float64, maxChars int) {
	mems := []memory.Memory{
		fact("a", memory.Kinds[int(kind)%len(memory.Kinds)], cConfig, "user", "note", content, importance, 1),
		fact("b", memory.Kinds[int(kind/8)%len(memory.Kinds)], cEvent, "user", "note", other, 0.5, 3),
		fact("c", kR, cConfig, "user", "rule", content+"\n"+other, 0.9, 2),
		fact("d", kI, cIdentity, "user", "name", "User's name is Ana", 1, 100),
	}
	card := MemoryMD(mems, now, maxChars)
	limit := maxChars
	if limit <= 0 {
		limit = MemoryMDChars
	}
	if n := utf8.RuneCountInString(card); n > limit {
		t.Fatalf("card is %d chars, want ≤ %d", n, limit)
	}
	checkInert(t, card)
	if card != "" && !strings.HasPrefix(card, "# ") {
		t.Fatalf("card does not start with its title: %q", card)
	}
	user := UserMD(mems, &memory.Scratchpad{ActiveProjects: []string{content}, CurrentFocus: other}, now)
	checkInert(t, user)
}
