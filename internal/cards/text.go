package cards

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// EntryMaxChars bounds one entry's text (before escaping), so that one long
// memory cannot fill a card alone.
const EntryMaxChars = 200

// inline turns memory content into the text of one list item: valid UTF-8,
// on one line, at most max characters before escaping, with markdown and
// HTML escaped. It returns "" for content with nothing printable.
func inline(s string, max int) string {
	return escape(chars.ClipHead(clean(s), max))
}

// clean makes s one line: every kind of space and line break (including
// U+2028, U+2029, NEL), and every control character, becomes one space;
// invisible format characters (bidi overrides, zero-width joiners, tag
// characters) are dropped, since they can hide text from a person who
// reads the card.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = b.Len() > 0
			continue
		case unicode.Is(unicode.Cf, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escape backslash-escapes what markdown (CommonMark and GFM) or HTML would
// read as structure or active content, and nothing else: an agent reads
// the card raw and copies paths, globs and identifiers out of it, so
// "~/src", "D:\code" and "snake_case" must stay as they are.
//
//   - everywhere: '<' (tags, comments, autolinks), '`' (code spans and
//     fences), '[' and ']' (links and images), and a backslash that would
//     otherwise escape what follows it or end the line;
//   - at the start, because the text follows "- " and a list item's content
//     starts a block of its own: '#' (heading), '>' (quote), '-', '+', '*'
//     (list, thematic break), '=', '_', '|', ':' and "1." / "1)" (ordered
//     list).
//
// Emphasis ('*', '_', '~' inside the text) is left alone: it changes only
// how text looks.
func escape(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range s {
		switch r {
		case '<', '`', '[', ']':
			b.WriteByte('\\')
		case '\\':
			if i+1 == len(s) || isASCIIPunct(s[i+1]) {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
	}
	out := b.String()
	if out == "" {
		return out
	}
	switch out[0] {
	case '#', '>', '-', '+', '*', '=', '_', '|', ':':
		return `\` + out
	}
	digits := len(out) - len(strings.TrimLeft(out, "0123456789"))
	if digits > 0 && digits < len(out) && (out[digits] == '.' || out[digits] == ')') {
		return out[:digits] + `\` + out[digits:]
	}
	return out
}

// isASCIIPunct reports whether c is one of the characters a CommonMark
// backslash escapes.
func isASCIIPunct(c byte) bool {
	return strings.IndexByte(asciiPunct, c) >= 0
}

const asciiPunct = `!"#$%&'()*+,-./:;<=>?@[\]^_{|}~` + "`"

// chinese reports whether most texts are Chinese: a text counts as Chinese
// when it has Han characters and at least half as many of them as Latin
// letters ("用户使用 Python 3.12" is Chinese; "User likes 拉面" is not).
// Texts with neither do not vote; a tie is English.
func chinese(texts []string) bool {
	zh, en := 0, 0
	for _, t := range texts {
		han, latin := 0, 0
		for _, r := range t {
			switch {
			case chars.IsHan(r):
				han++
			case r < utf8.RuneSelf && unicode.IsLetter(r), unicode.Is(unicode.Latin, r):
				latin++
			}
		}
		switch {
		case han > 0 && 2*han >= latin:
			zh++
		case han > 0 || latin > 0:
			en++
		}
	}
	return zh > en
}

func runes(s string) int { return utf8.RuneCountInString(s) }
