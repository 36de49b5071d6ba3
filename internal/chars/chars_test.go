package chars

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// IsCJK's fast paths must agree with its definition on every rune.
func TestIsCJKFastPaths(t *testing.T) {
	extra := map[rune]bool{0x3006: true, 0x3031: true, 0x3032: true, 0x3033: true, 0x3034: true,
		0x3035: true, 0x303C: true, 0x30FC: true, 0xFF70: true, 0xFF9E: true, 0xFF9F: true}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := extra[r] || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) &&
			(unicode.IsLetter(r) || unicode.IsNumber(r))
		if got := IsCJK(r); got != want {
			t.Fatalf("IsCJK(%U)=%v, want %v", r, got, want)
		}
	}
}

func TestIsHanFastPaths(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.Is(unicode.Han, r) && (unicode.IsLetter(r) || unicode.IsNumber(r))
		if got := IsHan(r); got != want {
			t.Fatalf("IsHan(%U)=%v, want %v", r, got, want)
		}
		if IsHan(r) && !IsCJK(r) {
			t.Fatalf("IsHan(%U) but not IsCJK", r)
		}
	}
}

// The copies this package replaced disagreed on these runes; each case
// says what the copies did and what every package now does.
func TestRuneClassesWhereCopiesDiffered(t *testing.T) {
	for _, tc := range []struct {
		r                  rune
		cjk, han, cjkPunct bool
		why                string
	}{
		// The full-text index's copy said yes; the five that asked only for
		// the script (similarity, dedupe, prefilter, context block, test
		// embedder) said no, so ラーメン was two CJK runs around a "word".
		{'ー', true, false, false, "the prolonged sound mark is part of katakana words"},
		{'ｰ', true, false, true, "its half-width form too"},
		{'ゝ', true, false, false, "a hiragana repeat mark is a letter"},
		// The script-only copies said yes: symbols of those scripts are not
		// parts of words, and the index splits words at them.
		{'⺀', false, false, false, "a CJK radical is a symbol"},
		{'⼀', false, false, false, "a Kangxi radical is a symbol"},
		{'㋐', false, false, false, "a circled katakana is a symbol"},
		{'㈀', false, false, false, "a parenthesised hangul is a symbol"},
		// The prompt's token estimate counted punctuation and full-width
		// forms as CJK; it now asks IsCJK || IsCJKPunct, as the episode
		// text always did.
		{'、', false, false, true, "CJK punctuation is not a CJK letter"},
		{'Ａ', false, false, true, "a full-width Latin letter is not CJK"},
		// The two isHan copies took the Han script whole: letters and
		// numbers are Han, radicals are not.
		{'々', true, true, true, "the iteration mark is a Han letter"},
		{'〇', true, true, true, "the ideographic zero is a Han number"},
		{'가', true, false, false, "hangul is CJK, not Han"},
		{'𠀀', true, true, false, "an Extension B ideograph is Han"},
		{'a', false, false, false, "Latin"},
	} {
		if got := IsCJK(tc.r); got != tc.cjk {
			t.Errorf("IsCJK(%q)=%v, want %v: %s", tc.r, got, tc.cjk, tc.why)
		}
		if got := IsHan(tc.r); got != tc.han {
			t.Errorf("IsHan(%q)=%v, want %v: %s", tc.r, got, tc.han, tc.why)
		}
		if got := IsCJKPunct(tc.r); got != tc.cjkPunct {
			t.Errorf("IsCJKPunct(%q)=%v, want %v: %s", tc.r, got, tc.cjkPunct, tc.why)
		}
	}
}

// A cut in bytes never ends inside a character: the dead-letter reason
// cut this way once ended in half of one.
func TestCutBytesKeepsCharactersWhole(t *testing.T) {
	for _, tc := range []struct {
		in        string
		n         int
		cut, clip string
	}{
		{"short", 10, "short", "short"},
		{"exactly", 7, "exactly", "exactly"},
		{"abcdef", 3, "abc", "abc…"},
		{"无法解析事件", 4, "无", "无…"},   // 3-byte characters: 4 bytes hold one
		{"无法解析事件", 6, "无法", "无法…"}, // on a boundary
		{"ab😀cd", 4, "ab", "ab…"},
		{"😀", 3, "", "…"},
		{"abc", 0, "", "…"},
		{"abc", -1, "", "…"},
	} {
		if got := CutBytes(tc.in, tc.n); got != tc.cut || !utf8.ValidString(got) {
			t.Errorf("CutBytes(%q, %d)=%q, want %q", tc.in, tc.n, got, tc.cut)
		}
		if got := ClipBytes(tc.in, tc.n); got != tc.clip || !utf8.ValidString(got) {
			t.Errorf("ClipBytes(%q, %d)=%q, want %q", tc.in, tc.n, got, tc.clip)
		}
	}
}

func TestTailBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 2, "ef"},
		{"事件", 4, "件"},
		{"事件", 2, ""},
		{"abc", 0, ""},
	} {
		if got := TailBytes(tc.in, tc.n); got != tc.want {
			t.Errorf("TailBytes(%q, %d)=%q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// The character cuts: at most n characters with the mark included. One
// copy returned "" and another "…" for n = 1; "…" fits and says that
// something was there.
func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in        string
		n         int
		head, mid string
	}{
		{"abcdef", 6, "abcdef", "abcdef"},
		{"abcdef", 5, "abcd…", "ab…ef"},
		{"ab cdef", 4, "ab…", "ab…f"}, // the head drops the space before the mark
		{"无法解析事件", 4, "无法解…", "无法…件"},
		{"abcdefghij", 10, "abcdefghij", "abcdefghij"},
		{"abcdefghijk", 10, "abcdefghi…", "abcdef…ijk"},
		{"一二三四五六七八九十百", 7, "一二三四五六…", "一二三四…十百"},
		{"abcdef", 1, "…", "…"},
		{"abcdef", 0, "", ""},
		{"", 0, "", ""},
	} {
		if got := ClipHead(tc.in, tc.n); got != tc.head {
			t.Errorf("ClipHead(%q, %d)=%q, want %q", tc.in, tc.n, got, tc.head)
		}
		if got := ClipMiddle(tc.in, tc.n); got != tc.mid {
			t.Errorf("ClipMiddle(%q, %d)=%q, want %q", tc.in, tc.n, got, tc.mid)
		}
		if got := utf8.RuneCountInString(ClipHead(tc.in, tc.n)); got > max(tc.n, 0) {
			t.Errorf("ClipHead(%q, %d) has %d characters", tc.in, tc.n, got)
		}
	}
	if got, want := CutRunes("无法解析", 2), "无法"; got != want {
		t.Errorf("CutRunes=%q, want %q", got, want)
	}
	if got, want := OneLine(" a\n\tb  c "), "a b c"; got != want {
		t.Errorf("OneLine=%q, want %q", got, want)
	}
}

func FuzzCut(f *testing.F) {
	f.Add("无法解析事件", 4)
	f.Add("ab😀cd", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) {
			return
		}
		n %= 64
		for name, got := range map[string]string{"CutBytes": CutBytes(s, n), "TailBytes": TailBytes(s, n),
			"ClipHead": ClipHead(s, n), "ClipMiddle": ClipMiddle(s, n), "CutRunes": CutRunes(s, n)} {
			if !utf8.ValidString(got) {
				t.Fatalf("%s(%q, %d)=%q is not valid UTF-8", name, s, n, got)
			}
		}
		if got := CutBytes(s, n); len(got) > max(n, 0) {
			t.Fatalf("CutBytes(%q, %d) has %d bytes", s, n, len(got))
		}
		if got := utf8.RuneCountInString(ClipMiddle(s, n)); got > max(n, 0) && got != utf8.RuneCountInString(s) {
			t.Fatalf("ClipMiddle(%q, %d) has %d characters", s, n, got)
		}
	})
}
