package textseg

import "sync"

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
	if toks, ok := storedTokens.get(text); ok {
		return toks
	}
	toks := Tokens(text)
	storedTokens.put(text, toks)
	return toks
}

var storedTokens = tokenCache{cur: map[string][]string{}}

// tokenCacheBytes bounds one generation of the token cache, counted as
// its texts and a string header for each token (the tokens mostly share
// the text's bytes or the stem cache's).
const tokenCacheBytes = 8 << 20

type tokenCache struct {
	mu       sync.Mutex
	cur, old map[string][]string
	size     int // the bytes cur holds, as tokenCacheBytes counts them
}

func (c *tokenCache) get(text string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	toks, ok := c.cur[text]
	if !ok {
		if toks, ok = c.old[text]; ok {
			c.putLocked(text, toks)
		}
	}
	return toks, ok
}

func (c *tokenCache) put(text string, toks []string) {
	c.mu.Lock()
	c.putLocked(text, toks)
	c.mu.Unlock()
}

func (c *tokenCache) putLocked(text string, toks []string) {
	n := len(text) + 16*len(toks) + 64
	if n > tokenCacheBytes/64 {
		return // a text this long would crowd out the turns a recall reads again
	}
	if c.size+n > tokenCacheBytes {
		c.old, c.cur, c.size = c.cur, make(map[string][]string, len(c.cur)), 0
	}
	c.cur[text] = toks
	c.size += n
}
