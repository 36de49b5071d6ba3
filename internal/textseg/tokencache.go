package textseg

import "github.com/engramhq/engram/internal/gencache"

// StoredTokens is Tokens for the text of a stored document (a turn, a
// memory), through a cache the process shares; the slice it returns is
// shared too, and must not be changed.
//
// A recall reads its candidates and their neighbours through Tokens:
// for a question of common words, hundreds of turns, mostly the same
// newest ones from one query to the next, and tokenizing them (stemming
// every word) was a third of /v1/search's CPU for a user with 100k
// turns. A document's tokens depend on its text alone, so the text is
// the key and nothing needs invalidating: a changed or erased turn's old
// text only ages out. Two generations bound the memory.
func StoredTokens(text string) []string {
	if toks, ok := storedTokens.Get(text); ok {
		return toks
	}
	toks := Tokens(text)
	storedTokens.Put(text, toks)
	return toks
}

// storedTokens holds two generations of tokenCacheBytes each, counted
// as the texts and a string header for each token (the tokens mostly
// share the text's bytes or the stem cache's). A text of more than a
// 64th of that is not kept: it would crowd out the turns a recall reads
// again.
var storedTokens = gencache.New(tokenCacheBytes, func(text string, toks []string) int { return len(text) + 16*len(toks) + 64 })

const tokenCacheBytes = 8 << 20
