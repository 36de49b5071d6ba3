package textseg

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func (f *ftsTable) insertBody(id int64, body string) {
	f.tb.Helper()
	if _, err := f.db.Exec(`INSERT INTO f(rowid, body) VALUES (?, ?)`, id, body); err != nil {
		f.tb.Fatalf("insert %q: %v", body, err)
	}
}

// partitionRows are texts of every kind Index treats differently.
var partitionRows = []string{
	"我住在北京市朝阳区", "北方的天气和东京不同", "I was running late for the meetings",
	"昨天用Python写了个爬虫", "c++ code review", "上海很热，北京很冷", "Le café était fermé",
	"東京に行きました", "서울에서 만나요", "thanks🙏so much", "node.js and user@example.com",
	"is it as big as us", "feed the cat", "content:x NEAR(a b, 2) \"quoted\" -minus ^caret *star",
	"Caroline: I went to the LGBTQ support group yesterday", "部署到了 staging，v2.3.1 发布",
	"x\u0301y ǅemal Ⅻ ١٢٣ ٣ arabic مرحبا", "a\tb\nc\rd", "",
}

func TestPartition(t *testing.T) {
	t.Parallel()
	a, b := Partition("default\x00alice"), Partition("default\x00bob")
	if len(a) != 12 || strings.Trim(a, "0123456789") != "" {
		t.Fatalf("Partition = %q, want 12 decimal digits", a)
	}
	if a == b {
		t.Fatalf("two users share partition %q", a)
	}
	if again := Partition("default\x00alice"); again != a {
		t.Fatalf("Partition is not deterministic: %q then %q", a, again)
	}
}

// Every token FTS5 stores from IndexIn carries the partition, so no
// posting list mixes partitions.
func TestIndexInPrefixesEveryToken(t *testing.T) {
	t.Parallel()
	f := openFTS(t)
	part := Partition("p")
	for i, text := range partitionRows {
		f.insertBody(int64(i+1), IndexIn(part, text))
	}
	for term := range f.vocab() {
		if !strings.HasPrefix(term, part) {
			t.Errorf("token %q is outside partition %s", term, part)
		}
	}
}

// MatchIn over a partitioned table finds what Match finds over a table
// holding only that partition's rows, and never another partition's rows.
// (Except for words of one or two letters, which now stem: see Partition.)
func TestMatchInAgreesWithMatch(t *testing.T) {
	t.Parallel()
	plain, parted := openFTS(t), openFTS(t)
	p1, p2 := Partition("one"), Partition("two")
	for i, text := range partitionRows {
		plain.insert(int64(i+1), text)
		parted.insertBody(int64(i+1), IndexIn(p1, text))
		parted.insertBody(int64(i+1001), IndexIn(p2, text))
	}
	queries := []string{"北京", "北京市", "京", "区", "run", "runs", "meeting", "python爬虫", "c++", "cafe ferme",
		"東京", "行き", "서울", "thanks", "node.js", "user@example.com", "feeding", "NEAR", "content:x",
		"\"quoted\"", "support group", "caroline", "v2.3.1", "部署", "مرحبا", "١٢٣", "Ⅻ", "where did I go"}
	for _, q := range queries {
		t.Run(q, func(t *testing.T) {
			want, err := plain.run(Match(q))
			if err != nil {
				t.Fatalf("Match(%q)=%s: %v", q, Match(q), err)
			}
			got, err := parted.run(MatchIn(p1, q))
			if err != nil {
				t.Fatalf("MatchIn(%q)=%s: %v", q, MatchIn(p1, q), err)
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("MatchIn(%q)=%s found %v; Match over the partition alone finds %v", q, MatchIn(p1, q), got, want)
			}
		})
	}
}

// FuzzMatchIn: whatever the user types, MatchIn gives an expression FTS5
// accepts that finds the same text in its own partition and never in
// another.
func FuzzMatchIn(f *testing.F) {
	db := openFTS(f).db
	p1, p2 := Partition("one"), Partition("two")
	f.Fuzz(func(t *testing.T, query string) {
		tbl := &ftsTable{tb: t, db: db}
		expr := MatchIn(p1, query)
		if got, want := expr == "", len(Terms(query)) == 0; got != want {
			t.Fatalf("MatchIn(%q)=%q but Terms=%q", query, expr, Terms(query))
		}
		if expr == "" {
			return
		}
		if !utf8.ValidString(expr) {
			t.Fatalf("MatchIn(%q)=%q is not valid UTF-8", query, expr)
		}
		tbl.clear()
		tbl.insertBody(1, IndexIn(p1, query))
		tbl.insertBody(2, IndexIn(p2, query))
		tbl.insertBody(3, IndexIn(p1, "unrelated"))
		ids, err := tbl.run(expr)
		if err != nil {
			t.Fatalf("MatchIn(%q)=%s: FTS5 rejects it: %v", query, expr, err)
		}
		if !contains(ids, 1) {
			t.Fatalf("MATCH %s (from %q) found %v, not the row holding the same text (indexed as %q)", expr, query, ids, IndexIn(p1, query))
		}
		if contains(ids, 2) {
			t.Fatalf("MATCH %s (from %q) found the other partition's row", expr, query)
		}
	})
}

func BenchmarkIndexIn(b *testing.B) {
	part := Partition("bench")
	for _, tc := range []struct{ name, text string }{
		{"english", "I was running late for the meetings because the train stopped at every station on the way"},
		{"chinese", "我住在北京市朝阳区，昨天用Python写了个爬虫，今天要部署到服务器上"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				IndexIn(part, tc.text)
			}
		})
	}
}
