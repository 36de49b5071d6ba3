package textseg

import (
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// Index returns text ready to be stored in an FTS5 column tokenized with
// Tokenizer. Each run of CJK characters becomes its overlapping bigrams
// followed by the run's last character on its own ("我住在北京" →
// "我住 住在 在北 北京 京"), separated from the text around it by spaces;
// words are left for unicode61 to tokenize.
//
// Every other non-ASCII rune (punctuation, symbols, emoji, unassigned code
// points) and every invalid byte becomes a space. unicode61 would split at
// most of them anyway, but SQLite's Unicode tables are older than Go's and it
// treats code points it does not know, such as most emoji, as letters: left
// in, "thanks🙏" would be one token that a search for "thanks" misses. With
// them gone, FTS5 splits words exactly where Terms does.
//
// The trailing unigram gives every character of a run a token that starts
// with it, so a one-character query can be a prefix query (see Match), and a
// one-character run is still indexed.
//
// Text of ASCII and non-CJK words only is returned as is, without allocating.
func Index(text string) string {
	start := firstToRewrite(text)
	if start == len(text) {
		return text
	}
	// The run loop writes to b here, not through a pointer in a helper:
	// that keeps its writes free of GC write barriers, which made
	// BenchmarkIndex/chinese 2.5 times slower.
	var b strings.Builder
	// Upper bound: a CJK rune of w >= 3 bytes adds at most w+1 bytes (its
	// second copy and a space, run boundaries included), so one allocation
	// always suffices.
	b.Grow(len(text) + (len(text)-start)*4/3 + 2)
	w := writer{sep: start == 0 || isSpaceByte(text[start-1])}
	b.WriteString(text[:start])
	pending := start // text[pending:i] is yet to be copied unchanged
	for i := start; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		cjk := chars.IsCJK(r)
		if !cjk && isWordRune(r) { // RuneError is not one, so invalid bytes go on below
			i += size
			continue
		}
		w.copy(&b, text[pending:i])
		if !cjk {
			b.WriteByte(' ')
			w = writer{sep: true}
			i += size
			pending = i
			continue
		}
		// A CJK run: each rune with the next, then the last one alone.
		if !w.sep {
			b.WriteByte(' ')
		}
		prevStart, prevEnd := i, i+size // the previous rune of the run
		for i = prevEnd; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			if !chars.IsCJK(r) {
				if isMark(r) {
					i += size
					continue
				}
				break
			}
			b.WriteString(text[prevStart:prevEnd])
			b.WriteString(text[i : i+size])
			b.WriteByte(' ')
			prevStart, prevEnd = i, i+size
			i += size
		}
		b.WriteString(text[prevStart:prevEnd])
		w = writer{afterRun: true}
		pending = i
	}
	w.copy(&b, text[pending:])
	return b.String()
}

// writer is what Index needs to know about what it has written so far.
type writer struct {
	sep      bool // nothing written yet, or a space last
	afterRun bool // a run's last token last
}

// copy writes s, text to pass through unchanged, keeping it off the run
// before it.
func (w *writer) copy(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	if w.afterRun && !isSpaceByte(s[0]) {
		b.WriteByte(' ')
	}
	b.WriteString(s)
	*w = writer{sep: isSpaceByte(s[len(s)-1])}
}

// firstToRewrite returns the offset of the first non-ASCII rune or byte that
// Index changes, or len(text) when it changes nothing.
func firstToRewrite(text string) int {
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if chars.IsCJK(r) || !isWordRune(r) {
			return i
		}
		i += size
	}
	return len(text)
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
