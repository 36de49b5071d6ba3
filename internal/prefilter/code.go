package prefilter

import (
	"strings"
	"unicode"

	"github.com/engramhq/engram/internal/chars"
)

// stripCode removes fenced blocks (``` … ```, an unclosed fence runs to the
// end) and inline `spans`, leaving a space in their place so the words on
// either side stay apart. hadCode reports whether anything was removed.
func stripCode(s string) (prose string, hadCode bool) {
	if strings.IndexByte(s, '`') < 0 {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i:]
		if strings.HasPrefix(rest, "```") {
			end := strings.Index(rest[3:], "```")
			if end < 0 {
				s = ""
			} else {
				s = rest[3+end+3:]
			}
			b.WriteByte(' ')
			hadCode = true
			continue
		}
		// An inline span closes on the same line; a lone backtick is text.
		end := strings.IndexAny(rest[1:], "`\n")
		if end < 0 || rest[1+end] != '`' {
			b.WriteByte('`')
			s = rest[1:]
			continue
		}
		b.WriteByte(' ')
		s = rest[1+end+1:]
		hadCode = true
	}
	return b.String(), hadCode
}

// looksLikeCode reports whether unfenced text is symbol-dense with no prose.
func looksLikeCode(s string) bool {
	visible, symbols := 0, 0
	for _, r := range s {
		switch {
		case chars.IsCJK(r):
			return false
		case unicode.IsSpace(r):
			continue
		case strings.ContainsRune(codeSymbols, r):
			symbols++
		}
		visible++
	}
	if symbols < 2 || symbols*100 < visible*15 {
		return false
	}
	return !hasProse(s)
}

// codeSymbols are characters common in code and rare in prose; full stop,
// comma, hyphen, apostrophe and question mark are left out because
// sentences are full of them.
const codeSymbols = "{}[]()<>;=+*/\\|&^%$#@~:!\"`"

// hasProse reports whether s reads as a sentence: three plain words in a
// row, a question mark at the end, or a wh-word at the start.
func hasProse(s string) bool {
	trimmed := strings.TrimSpace(s)
	if strings.HasSuffix(trimmed, "?") || strings.HasSuffix(trimmed, "？") {
		return true
	}
	words := englishWords(strings.ToLower(trimmed))
	for _, w := range whWords {
		if strings.HasPrefix(words, w) {
			return true
		}
	}
	run := 0
	for _, f := range strings.Fields(s) {
		if isPlainWord(f) {
			run++
			if run >= 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// isPlainWord reports whether f is letters (and apostrophes) with at most
// one trailing punctuation mark, like "word", "it's" or "done,".
func isPlainWord(f string) bool {
	if n := len(f); n > 1 && strings.IndexByte(",.;:!?", f[n-1]) >= 0 {
		f = f[:n-1]
	}
	if f == "" {
		return false
	}
	for _, r := range f {
		if !unicode.IsLetter(r) && r != '\'' && r != '’' {
			return false
		}
	}
	return true
}
