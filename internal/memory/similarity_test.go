package memory

import (
	"maps"
	"slices"
	"testing"
)

// The prolonged sound mark is part of a katakana word (internal/chars):
// ラーメン is one CJK run, not ラ, a "word" ー and メン.
func TestShinglesKeepKatakanaWordsWhole(t *testing.T) {
	got := slices.Sorted(maps.Keys(shingles("ラーメン")))
	if want := slices.Sorted(slices.Values([]string{"ラー", "ーメ", "メン"})); !slices.Equal(got, want) {
		t.Fatalf("shingles(ラーメン)=%q, want %q", got, want)
	}
}
