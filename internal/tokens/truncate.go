package tokens

import (
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// wordCut is the length in bytes above which Truncate cuts inside a word
// rather than before it: a URL, a hash or base64 is worth keeping in part,
// while an ordinary word cut in half only wastes tokens.
const wordCut = 32

// Truncate returns the longest prefix of s that c counts as at most max
// tokens, cut where a reader would cut: never inside a rune, and not inside
// a word of letters or digits unless that word is longer than 32 bytes.
// Every other rune (a Han character, a space, a punctuation mark) is a unit
// of its own, since Chinese has no spaces to cut at.
//
// A BPE count is not monotonic in the length of a prefix (half a word can
// cost more tokens than the whole word), so "longest" is by binary search:
// the result fits, and the result extended by the next unit (or the next
// rune, inside a long word) does not. Truncate calls c.Count about
// log2(len(s)) times. It returns "" for max <= 0 and s if it fits.
func Truncate(c Counter, s string, max int) string {
	if max <= 0 {
		return ""
	}
	if c.Count(s) <= max {
		return s
	}
	// Invariant: s[:lo] fits (the empty prefix does) and s[:hi] does not.
	lo, hi := 0, len(s)
	for {
		mid := cutBetween(s, lo, hi, isWordBreak)
		if mid < 0 {
			break
		}
		if c.Count(s[:mid]) <= max {
			lo = mid
		} else {
			hi = mid
		}
	}
	// s[lo:hi] is now a single unit; only a long word is cut inside.
	if hi-lo <= wordCut {
		return s[:lo]
	}
	for {
		mid := cutBetween(s, lo, hi, isRuneStart)
		if mid < 0 {
			return s[:lo]
		}
		if c.Count(s[:mid]) <= max {
			lo = mid
		} else {
			hi = mid
		}
	}
}

// cutBetween returns a position in (lo, hi) where ok allows a cut, the one
// nearest below the midpoint if any, else the nearest above it, else -1.
func cutBetween(s string, lo, hi int, ok func(s string, i int) bool) int {
	mid := lo + (hi-lo)/2
	for i := mid; i > lo; i-- {
		if ok(s, i) {
			return i
		}
	}
	for i := mid + 1; i < hi; i++ {
		if ok(s, i) {
			return i
		}
	}
	return -1
}

func isRuneStart(s string, i int) bool { return utf8.RuneStart(s[i]) }

// isWordBreak reports whether s may be cut at byte i: at a rune start that
// does not fall between two word runes.
func isWordBreak(s string, i int) bool {
	if !utf8.RuneStart(s[i]) {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i:])
	return !isWordRune(before) || !isWordRune(after)
}

// isWordRune reports whether r belongs to a word that Truncate keeps whole:
// letters, digits, marks and '_', except in scripts written without spaces.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		c := asciiClass[r]
		return c == clLower || c == clUpper || c == clDigit || r == '_'
	}
	if chars.IsCJK(r) || r > 0xFFFF {
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}
