package memory

import "unicode"

// EstimateTokens approximates how many tokens an LLM tokenizer makes of s:
// about one per Han/Kana/Hangul character and one per four bytes of other
// text. It is used for budgets and batching thresholds, where a cheap,
// deterministic estimate is enough.
func EstimateTokens(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		if unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
			unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) {
			cjk++
			continue
		}
		other += len(string(r))
	}
	return cjk + (other+3)/4
}
