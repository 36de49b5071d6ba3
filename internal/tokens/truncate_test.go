package tokens

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// runes counts one token per rune: monotonic, so Truncate's result is
// predictable to the byte.
type runes struct{}

func (runes) Count(s string) int { return utf8.RuneCountInString(s) }
func (runes) Name() string       { return "runes" }

func TestTruncateExamples(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 40) // longer than wordCut: cut inside
	tests := []struct {
		s    string
		max  int
		want string
	}{
		{"hello world", 100, "hello world"},
		{"hello world", 11, "hello world"},
		{"hello world", 10, "hello "}, // not "hello worl"
		{"hello world", 6, "hello "},
		{"hello world", 5, "hello"},
		{"hello world", 4, ""}, // the first word does not fit whole
		{"hello world", 0, ""},
		{"hello world", -1, ""},
		{"", 5, ""},
		{"我住在北京朝阳区", 3, "我住在"}, // every Han character is a unit
		{"我在 Google 工作", 5, "我在 "},
		{"我在 Google 工作", 8, "我在 "},
		{"我在 Google 工作", 9, "我在 Google"},
		{"ラーメンを", 2, "ラー"}, // kana, ー included, are units as Han is
		{"ｶﾀｶﾅ", 2, "ｶﾀ"},  // half-width kana too (a word of letters before internal/chars)
		{"v2.3.1 released", 4, "v2.3"},
		{"state_of_the_art design", 10, ""}, // '_' joins a word
		{"café au lait", 3, ""},             // é is a letter: café is one word
		{"café au lait", 7, "café au"},
		{"see " + long, 10, "see " + long[:6]},
		{long, 1, "x"},
		{"a\xffb", 2, "a\xff"}, // invalid bytes are units of their own
	}
	for _, tt := range tests {
		if got := Truncate(runes{}, tt.s, tt.max); got != tt.want {
			t.Errorf("Truncate(runes, %q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}

// checkTruncate asserts what Truncate promises for any counter and input.
func checkTruncate(t *testing.T, c Counter, s string, max int) {
	t.Helper()
	r := Truncate(c, s, max)
	if !strings.HasPrefix(s, r) {
		t.Fatalf("%s: Truncate(%q, %d) = %q, not a prefix", c.Name(), s, max, r)
	}
	if max <= 0 {
		if r != "" {
			t.Fatalf("%s: Truncate(%q, %d) = %q, want \"\"", c.Name(), s, max, r)
		}
		return
	}
	if n := c.Count(r); n > max {
		t.Fatalf("%s: Truncate(%q, %d) = %q counts %d tokens", c.Name(), s, max, r, n)
	}
	if !utf8.ValidString(s) {
		return // cut points in invalid text follow utf8.RuneStart, not decoding
	}
	if !utf8.ValidString(r) {
		t.Fatalf("%s: Truncate(%q, %d) = %q, not valid UTF-8", c.Name(), s, max, r)
	}
	if r == s {
		return
	}
	// Maximal: one more unit does not fit. The unit is the next word if
	// the cut is at a word's start and the word is short, else one rune.
	rest := s[len(r):]
	next, size := utf8.DecodeRuneInString(rest)
	unit := rest[:size]
	prev, _ := utf8.DecodeLastRuneInString(r)
	insideWord := r != "" && isWordRune(prev) && isWordRune(next)
	if insideWord {
		start := len(r)
		for start > 0 {
			p, n := utf8.DecodeLastRuneInString(s[:start])
			if !isWordRune(p) {
				break
			}
			start -= n
		}
		if w := wordAt(s[start:]); len(w) <= wordCut {
			t.Fatalf("%s: Truncate(%q, %d) = %q cuts the %d-byte word %q", c.Name(), s, max, r, len(w), w)
		}
	} else if w := wordAt(rest); w != "" && len(w) <= wordCut {
		unit = w
	}
	if n := c.Count(r + unit); n <= max {
		t.Fatalf("%s: Truncate(%q, %d) = %q, but adding %q still fits (%d tokens)", c.Name(), s, max, r, unit, n)
	}
}

// wordAt returns the run of word runes that s starts with.
func wordAt(s string) string {
	for i, r := range s {
		if !isWordRune(r) {
			return s[:i]
		}
	}
	return s
}

func TestTruncateProperties(t *testing.T) {
	t.Parallel()
	samples := loadCorpus(t, "corpus")
	counters := []Counter{runes{}, o200k, cl100k, estimates["qwen"], estimates["generic"]}
	for _, c := range counters {
		t.Run(c.Name(), func(t *testing.T) {
			for i, s := range samples {
				if _, exact := c.(*bpe); exact && i%3 != 0 {
					continue // BPE is slow under -race; a third of the corpus covers every kind
				}
				total := c.Count(s.text)
				for _, max := range []int{-1, 0, 1, 3, total / 3, total - 1, total} {
					checkTruncate(t, c, s.text, max)
				}
			}
		})
	}
}

// FuzzTruncate checks checkTruncate's promises for any text and budget;
// its seed corpus is in testdata/fuzz/FuzzTruncate.
func FuzzTruncate(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string, max int) {
		if len(s) > 4096 {
			return
		}
		max %= 64
		for _, c := range []Counter{runes{}, o200k, estimates["deepseek"]} {
			checkTruncate(t, c, s, max)
		}
	})
}

func BenchmarkTruncate(b *testing.B) {
	s := mixed2KB(b)
	for _, c := range []Counter{o200k, estimates["qwen"]} {
		b.Run(c.Name(), func(b *testing.B) {
			max := c.Count(s) / 2
			for b.Loop() {
				Truncate(c, s, max)
			}
		})
	}
}
