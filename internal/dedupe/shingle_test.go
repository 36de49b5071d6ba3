package dedupe

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/memory"
)

// similarity is memory.Similarity computed this package's way: shingles,
// ids from a dictionary, jaccard over sorted ids.
func similarity(a, b string) float64 {
	dict := map[string]uint32{}
	ids := func(s string) []uint32 {
		var out []uint32
		for _, sh := range shingles(s) {
			id, ok := dict[sh]
			if !ok {
				id = uint32(len(dict))
				dict[sh] = id
			}
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	return jaccard(ids(a), ids(b))
}

// edgeTexts are the corners of memory's shingling.
var edgeTexts = []string{
	"", " ", ".", "...", "a", "A.", "Ana.", "3.12", "v3.12.1.", ".net", "a.b.c", "end.",
	"我", "我们", "我们用 PostgreSQL 16", "用户喜欢绿茶，不喝咖啡。", "东京タワー에서",
	"カタカナ", "ひらがな", "한국어 텍스트", "mixed中文and English词语", "中a文b",
	"ÉCOLE École école", "İstanbul ISTANBUL", "straße STRASSE", "ǅemal", "ﬁne",
	"tab\tand\nnewline", "emoji 😀 here", "\xff\xfe bad utf8 \xffword", "中\xff文",
	"x.\xff", "a1b2 3c", "٣٤ digits", "ⅻ roman", "under_score dash-word", "the the THE",
}

func TestJaccardEqualsMemorySimilarity(t *testing.T) {
	t.Parallel()
	texts := append([]string{}, edgeTexts...)
	for _, it := range Synthetic(400, 7) {
		texts = append(texts, it.Text)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(a, b string) {
		t.Helper()
		if got, want := similarity(a, b), memory.Similarity(a, b); got != want {
			t.Fatalf("similarity(%q, %q) = %v, memory.Similarity = %v", a, b, got, want)
		}
	}
	for i, a := range texts {
		check(a, a)
		check(a, texts[(i+1)%len(texts)])
		check(a, texts[rng.IntN(len(texts))])
	}
	for _, a := range edgeTexts {
		for _, b := range edgeTexts {
			check(a, b)
		}
	}
}

// TestShingleCount checks the number of shingles, not only the index: a
// text and the same with one new word have similarity n/(n+1).
func TestShingleCount(t *testing.T) {
	t.Parallel()
	texts := append([]string{}, edgeTexts...)
	for _, it := range Synthetic(200, 8) {
		texts = append(texts, it.Text)
	}
	for _, a := range texts {
		s := memory.Similarity(a, a+" qqzxqq")
		n := int(math.Round(s / (1 - s)))
		if got := len(shingles(a)); got != n {
			t.Errorf("shingles(%q) has %d, memory counts %d", a, got, n)
		}
	}
}

func FuzzSimilarity(f *testing.F) {
	for i := 0; i+1 < len(edgeTexts); i += 2 {
		f.Add(edgeTexts[i], edgeTexts[i+1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := similarity(a, b), memory.Similarity(a, b); got != want {
			t.Fatalf("similarity(%q, %q) = %v, memory.Similarity = %v", a, b, got, want)
		}
		for _, sh := range shingles(a) {
			if sh == "" || !utf8.ValidString(sh) {
				t.Fatalf("shingles(%q) holds %q", a, sh)
			}
		}
	})
}
