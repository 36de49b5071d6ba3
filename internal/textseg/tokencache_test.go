package textseg

import (
	"fmt"
	"slices"
	"testing"
)

// A stored text reads as Tokens reads it, the first time and from the
// cache after.
func TestStoredTokensAreTokens(t *testing.T) {
	for _, text := range []string{"We deployed the Billing service on Fridays.", "我住在北京，昨天部署了计费服务。", "", "a"} {
		want := Tokens(text)
		for range 2 {
			if got := StoredTokens(text); !slices.Equal(got, want) {
				t.Fatalf("StoredTokens(%q) = %q, want %q", text, got, want)
			}
		}
	}
}

// The cache holds two generations of at most tokenCacheBytes each, and
// a text it evicted reads the same again.
func TestTokenCacheIsBounded(t *testing.T) {
	c := tokenCache{cur: map[string][]string{}}
	first := "the first turn, about coffee"
	c.put(first, Tokens(first))
	for i := 0; c.old == nil || len(c.old[first]) > 0 || i < 100; i++ {
		text := fmt.Sprintf("turn %d about deploys and coffee breaks on a Friday afternoon", i)
		c.put(text, Tokens(text))
		if c.size > tokenCacheBytes {
			t.Fatalf("a generation holds %d bytes, want at most %d", c.size, tokenCacheBytes)
		}
		if i > 1_000_000 {
			t.Fatal("the first text was never evicted")
		}
	}
	if _, ok := c.get(first); ok {
		t.Fatal("the first text is still cached two generations later")
	}
	long := string(make([]byte, tokenCacheBytes/32))
	c.put(long, nil)
	if _, ok := c.get(long); ok {
		t.Fatal("a text of a 32nd of the cache was cached; it would crowd out the turns")
	}
}
