package memory

import "github.com/engramhq/engram/internal/chars"

// EstimateTokens approximates how many tokens an LLM tokenizer makes of s:
// about one per Han/Kana/Hangul character and one per four bytes of other
// text. It is used for budgets and batching thresholds, where a cheap,
// deterministic estimate is enough.
func EstimateTokens(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		if chars.IsCJK(r) {
			cjk++
			continue
		}
		other += len(string(r))
	}
	return cjk + (other+3)/4
}
