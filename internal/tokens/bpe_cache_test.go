package tokens

import (
	"fmt"
	"testing"

	"github.com/engramhq/engram/internal/gencache"
)

// Counts served from the cache equal the codec's, across generations.
func TestCountCache(t *testing.T) {
	t.Parallel()
	c := newBPE("o200k_base", o200k.new, estimates["o200k_base"])
	// One uncached counter, its cache emptied before each count: making
	// a codec per text (the o200k vocabulary each time) took most of
	// this test's 30 s under -race.
	u := newBPE("o200k_base", o200k.new, estimates["o200k_base"])
	fresh := func(s string) int {
		u.counted = gencache.New[string, int](cacheEntries, nil)
		return u.Count(s)
	}
	texts := make([]string, 0, 3*cacheEntries)
	for i := range cap(texts) {
		texts = append(texts, fmt.Sprintf("memory %d: 用户喜欢喝美式咖啡 and deploys v%d.%d on Fridays", i, i%7, i%13))
	}
	want := map[string]int{}
	for _, s := range texts[:50] {
		want[s] = fresh(s)
	}
	for range 2 {
		for _, s := range texts {
			n := c.Count(s)
			if w, ok := want[s]; ok && n != w {
				t.Fatalf("Count(%q) = %d, want %d", s, n, w)
			}
		}
	}
	// The text just counted is the one cached (it was the empty string,
	// consumed by the count, so nothing was ever found again).
	if _, ok := c.counted.Get(texts[len(texts)-1]); !ok {
		t.Fatal("the last text counted is not in the cache")
	}
	if got := c.counted.Len(); got > 2*cacheEntries {
		t.Fatalf("cache holds %d texts, bound %d", got, 2*cacheEntries)
	}
}

// A text counted once is served from the cache the next time, under the
// text itself (the cache once filed every count under the empty rest of
// the text, so it never served one).
func TestCountCacheServesRepeats(t *testing.T) {
	c := newBPE("o200k_base", o200k.new, estimates["o200k_base"])
	const s = "用户喜欢喝美式咖啡 and deploys on Fridays"
	want := c.Count(s)
	n, ok := c.counted.Get(s)
	if !ok {
		t.Fatalf("after Count(%q), the cache does not hold it", s)
	}
	if n != want {
		t.Fatalf("cached count %d, want %d", n, want)
	}
	if _, ok := c.counted.Get(""); ok {
		t.Fatalf("the cache holds the empty text")
	}
}
