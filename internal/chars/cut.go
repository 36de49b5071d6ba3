package chars

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where a string was cut.
const Ellipsis = "…"

// CutBytes cuts s to at most n bytes without splitting a character: for
// limits stated in bytes (a column, a header, an event field).
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ClipBytes is CutBytes with the cut marked by Ellipsis, which comes on top
// of the n bytes: for a reason or a message that a person reads.
func ClipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return CutBytes(s, n) + Ellipsis
}

// TailBytes returns the end of s, at most n bytes, starting at a character.
func TailBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// CutRunes cuts s to its first n characters (runes).
func CutRunes(s string, n int) string {
	return s[:byteOffset(s, max(n, 0))]
}

// ClipHead cuts s to at most n characters, Ellipsis included, keeping its
// head: a goal, a parameter or an error's first line says what matters
// first. Spaces before the mark are dropped.
func ClipHead(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	return strings.TrimRight(CutRunes(s, n-1), " ") + Ellipsis
}

// ClipMiddle cuts s to at most n characters, Ellipsis included, keeping
// two thirds from its head and one from its tail: a tool's output or an
// error often ends with its conclusion.
func ClipMiddle(s string, n int) string {
	count := utf8.RuneCountInString(s)
	if count <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	head := (n - 1) * 2 / 3
	tail := n - 1 - head
	return s[:byteOffset(s, head)] + Ellipsis + s[byteOffset(s, count-tail):]
}

// OneLine folds every run of white space in s, line breaks included, to
// one space, and trims both ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// byteOffset returns where the character numbered r starts in s (len(s)
// when s has no more than r).
func byteOffset(s string, r int) int {
	for i := range s {
		if r == 0 {
			return i
		}
		r--
	}
	return len(s)
}
