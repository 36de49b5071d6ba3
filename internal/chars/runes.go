package chars

import "unicode"

// IsCJK reports whether r is a letter or number of a script written without
// spaces between words: Han (with every extension block in Go's tables),
// Hiragana, Katakana and Hangul, plus the few Common-script letters that only
// occur in Japanese words (ー, 〆, kana repeat marks, half-width sound marks).
//
// Radicals, circled and squared forms and other symbols of those scripts
// are left out on purpose: they are not parts of words, and the full-text
// index's tokenizer (unicode61) treats them as separators, so one inside a
// bigram would cut the bigram apart.
func IsCJK(r rune) bool {
	switch {
	case r < 0x1100: // below Hangul Jamo: no CJK at all, the common case for ASCII text
		return false
	case r >= 0x4E00 && r <= 0x9FFF: // CJK Unified Ideographs, fully assigned
		return true
	case r >= 0xAC00 && r <= 0xD7A3: // Hangul syllables
		return true
	case r >= 0x3041 && r <= 0x3096, r >= 0x30A1 && r <= 0x30FA: // kana letters
		return true
	case r == 0x3006, r >= 0x3031 && r <= 0x3035, r == 0x303C, r == 0x30FC,
		r == 0xFF70, r == 0xFF9E, r == 0xFF9F:
		return true
	case isPunct(r): // between every few words of Chinese text
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) &&
		(unicode.IsLetter(r) || unicode.IsNumber(r))
}

// IsHan reports whether r is a Han character: a letter or number of the Han
// script (々 and 〇 included, radicals not), the subset of IsCJK that tells
// Chinese (or kanji) text from other CJK text.
func IsHan(r rune) bool {
	switch {
	case r < 0x2E80:
		return false
	case r >= 0x4E00 && r <= 0x9FFF:
		return true
	case isPunct(r):
		return false
	}
	return unicode.Is(unicode.Han, r) && (unicode.IsLetter(r) || unicode.IsNumber(r))
}

// IsCJKPunct reports whether r is in the CJK Symbols and Punctuation block
// (、。「」《》) or the Halfwidth and Fullwidth Forms block (，！？（）): the
// punctuation of CJK text, which takes no space around it. Both blocks
// also hold a few letters (々, full-width Latin, half-width kana); a caller
// that must tell those apart asks IsCJK first.
func IsCJKPunct(r rune) bool {
	return r >= 0x3000 && r <= 0x303F || r >= 0xFF00 && r <= 0xFFEF
}

// HasCJK reports whether s holds a CJK rune.
func HasCJK(s string) bool {
	for _, r := range s {
		if IsCJK(r) {
			return true
		}
	}
	return false
}

// HasHan reports whether s holds a Han character.
func HasHan(s string) bool {
	for _, r := range s {
		if IsHan(r) {
			return true
		}
	}
	return false
}

// isPunct reports whether r is in one of the punctuation ranges that show
// up in CJK and English text, none of which holds a letter or number. It
// spares IsCJK and IsHan the Unicode table look-ups on the runes they meet
// most often after CJK ones.
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
