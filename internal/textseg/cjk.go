package textseg

import (
	"unicode"
	"unicode/utf8"
)

// Tokenizer is the FTS5 tokenize= argument for every table whose text comes
// from Index and whose queries come from Match.
//
//   - unicode61 splits on everything that is not a letter, number or private
//     use character and folds case, which is all Latin, Cyrillic, Greek, etc.
//     need; CJK is already split into bigram tokens by Index and unicode61
//     keeps each of them whole (tested for every rune chars.IsCJK accepts).
//   - remove_diacritics 2 lets "cafe" find "café": people often type without
//     accents. Level 2 also strips several diacritics on one letter; it leaves
//     kana alone (が is not folded to か), which is tested.
//   - porter stems English so "running" finds "run" and "meetings" finds
//     "meeting", which matters on conversational text where the same idea
//     comes back in a different inflection. It can merge unrelated words
//     ("universe", "university"), a loss of precision we accept because BM25
//     still ranks and recall matters more for memory. SQLite's stemmer only
//     rewrites ASCII suffixes, so CJK tokens (all bytes >= 0x80) pass through
//     unchanged (tested against the index vocabulary).
//
// A table must be created and queried with the same tokenizer; changing it
// means rebuilding the index.
const Tokenizer = "porter unicode61 remove_diacritics 2"

// isPunct reports whether r is in one of the punctuation ranges that show
// up in CJK and English text, none of which holds a letter, number or mark.
// It spares Index and Terms the Unicode table look-ups on the runes they
// meet most often after CJK ones.
func isPunct(r rune) bool {
	switch {
	case r >= 0x2000 && r <= 0x206F, // General Punctuation: ’ — … and spaces
		r >= 0x3000 && r <= 0x3004, r >= 0x3008 && r <= 0x3020, // 、。「」【】…
		r >= 0xFF01 && r <= 0xFF0F, r >= 0xFF1A && r <= 0xFF20, // ！（），：？…
		r >= 0xFF3B && r <= 0xFF40, r >= 0xFF5B && r <= 0xFF65:
		return true
	}
	return false
}

// isWordRune reports whether r belongs inside a non-CJK word: the characters
// unicode61 keeps in tokens (letters, numbers, private use) and combining
// marks, which it folds away with remove_diacritics.
func isWordRune(r rune) bool {
	switch {
	case r < utf8.RuneSelf:
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	case isPunct(r):
		return false
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r) || unicode.Is(unicode.Co, r)
}

// isMark reports whether r combines with the rune before it. Inside a CJK
// run such marks (variation selectors on kanji, decomposed sound marks) are
// dropped so they neither end the run nor end up inside a bigram.
func isMark(r rune) bool {
	return r >= 0x300 && unicode.Is(unicode.M, r)
}
