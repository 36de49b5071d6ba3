package episode

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// clean returns s on one line: valid UTF-8, every run of whitespace or
// control characters folded to one space. Everything the package returns
// passes through it, so no output field can carry a control character.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// sentences splits text into cleaned sentences. 。！？!? end a sentence,
// and so does a full stop followed by a space, so "3.12" and "jwt.go" stay
// whole. A blank line or a list item ("- ", "1. ", "# ") starts a new
// one; a single line break inside a paragraph does not (it is how text is
// wrapped). Fenced code is left out (it is not prose), list markers are
// dropped, and a "sentence" with no letter in it ("1.", "---") is skipped.
func sentences(text string) []string {
	var out []string
	for _, para := range paragraphs(text) {
		rs := []rune(para)
		start := 0
		emit := func(end int) {
			if s := clean(string(rs[start:end])); hasLetter(s) {
				out = append(out, s)
			}
			start = end
		}
		for i := 0; i < len(rs); i++ {
			if !endsSentence(rs, i) {
				continue
			}
			j := i + 1
			for j < len(rs) && (isTerminator(rs[j]) || isCloser(rs[j])) {
				j++
			}
			emit(j)
			i = j - 1
		}
		if start < len(rs) {
			emit(len(rs))
		}
	}
	return out
}

var listMarker = regexp.MustCompile(`^(?:[-*+•>]|#{1,6}|\d{1,3}[.)])(?:\s+|$)`)

// paragraphs joins wrapped lines and splits at blank lines, list items
// and headings, leaving fenced code out.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, " "))
			cur = cur[:0]
		}
	}
	fenced := false
	for _, line := range strings.Split(strings.ToValidUTF8(text, ""), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			flush()
			continue
		}
		if fenced {
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		if m := listMarker.FindString(trimmed); m != "" {
			flush()
			trimmed = trimmed[len(m):]
		}
		cur = append(cur, trimmed)
	}
	flush()
	return out
}

func endsSentence(rs []rune, i int) bool {
	switch rs[i] {
	case '。', '！', '？', '!', '?':
		return true
	case '.':
		return i+1 == len(rs) || unicode.IsSpace(rs[i+1])
	}
	return false
}

func isTerminator(r rune) bool { return strings.ContainsRune("。！？!?.…", r) }
func isCloser(r rune) bool     { return strings.ContainsRune("”」』）)\"'】", r) }

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// joinSentences joins parts into prose: a Chinese sentence needs no space
// after it, and a part that does not end a sentence gets a semicolon so
// two parts do not run together.
func joinSentences(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(parts[i-1])
			switch {
			case chars.IsCJKPunct(prev):
			case isTerminator(prev) || isCloser(prev):
				b.WriteByte(' ')
			case chars.HasHan(parts[i-1]):
				b.WriteString("；")
			default:
				b.WriteString("; ")
			}
		}
		b.WriteString(p)
	}
	return b.String()
}

// isQuestion reports whether a sentence asks something.
func isQuestion(s string) bool {
	s = strings.TrimRightFunc(s, func(r rune) bool { return isCloser(r) || unicode.IsSpace(r) })
	return strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？") ||
		strings.HasSuffix(s, "吗") || strings.HasSuffix(s, "吗。")
}

// chinese reports whether text reads as Chinese: at least as many Han
// characters as space-separated Latin words, so a Chinese sentence full of
// file names still counts and an English one quoting a Chinese term does
// not. ok is false when text has neither.
func chinese(text string) (zh, ok bool) {
	han, words := 0, 0
	for _, f := range strings.Fields(text) {
		latin := false
		for _, r := range f {
			switch {
			case chars.IsHan(r):
				han++
			case r < utf8.RuneSelf && unicode.IsLetter(r):
				latin = true
			}
		}
		if latin {
			words++
		}
	}
	if han == 0 && words == 0 {
		return false, false
	}
	return han > 0 && han >= words, true
}

// cues is a list of phrases to look for: ASCII phrases match whole words,
// case-insensitively; others (Chinese) match anywhere.
type cues []string

func (c cues) in(s string) bool { return c.find(s) >= 0 }

// find returns where the first phrase of c occurs in s, or -1.
func (c cues) find(s string) int {
	lower := strings.ReplaceAll(strings.ToLower(s), "’", "'")
	best := -1
	for _, p := range c {
		if i := indexPhrase(lower, p); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

func indexPhrase(s, p string) int {
	ascii := isASCII(p)
	for off := 0; off < len(s); {
		i := strings.Index(s[off:], p)
		if i < 0 {
			return -1
		}
		i += off
		if !ascii || (!wordByteBefore(s, i) && !wordByteAt(s, i+len(p))) {
			return i
		}
		off = i + 1
	}
	return -1
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '\'' || c == '_'
}

func wordByteBefore(s string, i int) bool { return i > 0 && isWordByte(s[i-1]) }
func wordByteAt(s string, i int) bool     { return i < len(s) && isWordByte(s[i]) }
