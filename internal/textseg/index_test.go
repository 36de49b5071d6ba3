package textseg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

func TestIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"english unchanged", "I was running late, sorry!", "I was running late, sorry!"},
		{"one-character run", "北", "北"},
		{"two characters", "北京", "北京 京"},
		{"sentence", "我住在北京市朝阳区", "我住 住在 在北 北京 京市 市朝 朝阳 阳区 区"},
		{"mixed script", "用Python写了个爬虫", "用 Python 写了 了个 个爬 爬虫 虫"},
		{"full-width punctuation splits runs", "北京，上海。", "北京 京 上海 海 "},
		{"spaces kept", "北京 上海", "北京 京 上海 海"},
		{"latin between", "a北b", "a 北 b"},
		{"japanese", "東京に行きました", "東京 京に に行 行き きま まし した た"},
		{"katakana long vowel", "コーヒー", "コー ーヒ ヒー ー"},
		{"korean", "서울에서 만나요", "서울 울에 에서 서 만나 나요 요"},
		{"extension B", "𠀀𠀁", "𠀀𠀁 𠀁"},
		{"variation selector dropped", "葛\U000E0100飾区", "葛飾 飾区 区"},
		{"invalid UTF-8", "a\xffb北\xfe", "a b 北 "},
		{"emoji becomes a space", "thanks🙏so much", "thanks so much"},
		{"radical is not a letter", "⺀北", " 北"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Index(tc.in); got != tc.want {
				t.Fatalf("Index(%q)=%q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestIndexAllocations(t *testing.T) {
	// Not parallel: AllocsPerRun counts the whole process's allocations.
	for _, tc := range []struct {
		text   string
		allocs float64
	}{
		{"plain English text is returned as it is, naïve café", 0},
		{"我住在北京市朝阳区，用Python写了个爬虫。" + strings.Repeat("记忆系统", 100), 1},
	} {
		if got := testing.AllocsPerRun(100, func() { Index(tc.text) }); got != tc.allocs {
			t.Errorf("Index(%.20q…) allocates %v times, want %v", tc.text, got, tc.allocs)
		}
	}
}

func TestIsWordRuneFastPaths(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r) || unicode.Is(unicode.Co, r)
		if got := isWordRune(r); got != want {
			t.Fatalf("isWordRune(%U)=%v, want %v", r, got, want)
		}
	}
}

// FTS5 must keep every CJK rune as a token character; one it split at would
// cut the bigrams it is part of.
func TestCJKRunesAreTokenCharacters(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("indexes every CJK rune")
	}
	var b strings.Builder
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if chars.IsCJK(r) {
			b.WriteRune(r)
			b.WriteByte(' ')
			n++
		}
	}
	f := openFTS(t)
	f.insert(1, b.String())
	vocab := f.vocab()
	if got, want := len(vocab), n; got != want {
		t.Fatalf("FTS5 made %d distinct tokens of %d CJK runes", got, want)
	}
	for term := range vocab {
		if utf8.RuneCountInString(term) != 1 {
			t.Fatalf("token %q is not one rune", term)
		}
	}
}

// The tokens FTS5 stores for CJK are exactly the bigrams and unigrams Index
// wrote: neither unicode61's folding nor the porter stemmer touches them,
// while English words next to them are still stemmed.
func TestTokenizerKeepsCJKTokens(t *testing.T) {
	t.Parallel()
	text := "我们在会议上讨论了记忆系统 meetings running 東京に行きました 서울에서 コーヒー が"
	f := openFTS(t)
	f.insert(1, text)
	want := make(map[string]bool)
	for _, tok := range strings.Fields(Index(text)) {
		r, _ := utf8.DecodeRuneInString(tok)
		if chars.IsCJK(r) {
			want[tok] = true
		}
	}
	want["meet"], want["run"] = true, true
	got := f.vocab()
	for tok := range want {
		if !got[tok] {
			t.Errorf("token %q missing from the index", tok)
		}
	}
	for tok := range got {
		if !want[tok] {
			t.Errorf("index holds unexpected token %q", tok)
		}
	}
}

func TestIndexSeeds(t *testing.T) {
	t.Parallel()
	// The design documents are real mixed Chinese and English text.
	paths, err := filepath.Glob("../../../shared/seeds/*.txt")
	if err != nil || len(paths) == 0 {
		t.Skip("no seed documents beside the repository")
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("read seed: %v", err)
		}
		if out := Index(string(data)); !utf8.ValidString(out) {
			t.Fatalf("Index(%s) is not valid UTF-8", p)
		}
	}
}

var benchText = map[string]string{
	"chinese": strings.Repeat("我住在北京市朝阳区，平时用Python写爬虫。记忆系统需要支持中文检索和英文检索。", 40),
	"english": strings.Repeat("I was running late for the meeting, so we moved the retrospective to Friday. ", 40),
	"mixed":   strings.Repeat("用户偏好: prefers dark mode 和 vim 快捷键; deploys with Docker 到 k8s 集群. ", 40),
}

func BenchmarkIndex(b *testing.B) {
	for _, name := range []string{"chinese", "english", "mixed"} {
		text := benchText[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				Index(text)
			}
		})
	}
}
