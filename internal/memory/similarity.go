package memory

import (
	"strings"
	"unicode"

	"github.com/engramhq/engram/internal/chars"
)

// Similarity is a deterministic text similarity in [0, 1]: the Jaccard
// index of the two texts' word sets, where CJK runs count as overlapping
// character pairs. It needs no model, so merge decisions made when an
// event is applied are the same on every replay.
func Similarity(a, b string) float64 {
	sa, sb := shingles(a), shingles(b)
	if len(sa) == 0 && len(sb) == 0 {
		return 1
	}
	inter := 0
	for s := range sa {
		if sb[s] {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

func shingles(s string) map[string]bool {
	out := map[string]bool{}
	var word []rune
	var cjk []rune
	flushWord := func() {
		// A dot joins "3.12" but does not end a word ("Ana." is "ana").
		if w := strings.TrimRight(string(word), "."); w != "" {
			out[strings.ToLower(w)] = true
		}
		word = word[:0]
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
		case 1:
			out[string(cjk)] = true
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out[string(cjk[i:i+2])] = true
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range s {
		switch {
		case chars.IsCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' && len(word) > 0:
			flushCJK()
			word = append(word, r)
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}
