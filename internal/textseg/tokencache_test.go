package textseg

import (
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

// A text of a 32nd of the cache is tokenized but not kept: it would crowd
// out the turns (the bound itself: gencache's TestBounded).
func TestTokenCacheKeepsNoLongText(t *testing.T) {
	long := string(make([]byte, tokenCacheBytes/32))
	StoredTokens(long)
	if _, ok := storedTokens.Get(long); ok {
		t.Fatal("a text of a 32nd of the cache was cached; it would crowd out the turns")
	}
}
