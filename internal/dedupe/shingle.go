package dedupe

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// shingles returns the sorted, distinct shingles of s exactly as
// memory.Similarity makes them: lower-cased words (a dot joins "3.12" but
// does not end a word) and overlapping character pairs of CJK runs (a lone
// CJK character is its own shingle). memory keeps its function unexported
// so that the domain package exports no text processing; a test holds the
// two equal (TestJaccardEqualsMemorySimilarity, FuzzSimilarity).
//
// It cuts shingles out of s instead of building them rune by rune, which is
// the same text: a word or a CJK run is always a contiguous stretch of s,
// and invalid UTF-8 (decoded as U+FFFD, neither letter nor CJK) is never
// inside one.
func shingles(s string) []string {
	var out []string
	wordStart, wordEnd := -1, -1
	// CJK run: byte offsets of its last two runes.
	prev, last := -1, -1
	flushWord := func() {
		if wordStart >= 0 {
			if w := strings.TrimRight(s[wordStart:wordEnd], "."); w != "" {
				out = append(out, strings.ToLower(w))
			}
		}
		wordStart = -1
	}
	runLen := 0
	flushCJK := func(end int) {
		if runLen == 1 {
			out = append(out, s[last:end])
		}
		runLen, prev, last = 0, -1, -1
	}
	for i, r := range s {
		switch {
		case chars.IsCJK(r):
			flushWord()
			if runLen > 0 {
				prev = last
			}
			last = i
			runLen++
			if runLen >= 2 {
				out = append(out, s[prev:i+utf8.RuneLen(r)])
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' && wordStart >= 0:
			flushCJK(i)
			if wordStart < 0 {
				wordStart = i
			}
			wordEnd = i + utf8.RuneLen(r)
		default:
			flushWord()
			flushCJK(i)
		}
	}
	flushWord()
	flushCJK(len(s))
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccard is memory.Similarity over shingle sets given as sorted, distinct
// ids: the same arithmetic, so the same float64 to the bit.
func jaccard(a, b []uint32) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			inter++
			i++
			j++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}
