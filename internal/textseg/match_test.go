package textseg

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/quiet"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ,.;!? *** ", nil},
		{"What did I say about Python?", []string{"say", "python"}},
		{"Python python PYTHON", []string{"python"}},
		{"the", []string{"the"}},
		{"AND OR NOT", []string{"and", "or", "not"}},
		{"c++ -foo content:x", []string{"c", "foo", "content x"}},
		{"node.js user@example.com don't", []string{"node js", "user example com"}},
		{"don't", []string{"don t"}},
		{"北京的天气怎么样", []string{"北京", "天气"}},
		{"我住在北京市朝阳区", []string{"住在北京市朝阳区"}},
		{"用Python写了个爬虫", []string{"用", "python", "写", "个爬虫"}},
		{"我想了解一下", []string{"想了解"}},
		{"我的", []string{"我的"}},
		{"北京，上海", []string{"北京", "上海"}},
		{"葛\U000E0100飾区", []string{"葛飾区"}},
		{"東京に行きました", []string{"東京に行きました"}},
		{"a\x00b\x1f\xffc", []string{"b", "c"}},
		{"thanks🙏so much", []string{"thanks", "much"}},
		{"Ａｂｃ", []string{"ａｂｃ"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := Terms(tc.in); !slices.Equal(got, tc.want) {
				t.Fatalf("Terms(%q)=%q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"***", ""},
		{"Python", `"Python"`},
		{"running shoes", `"running" OR "shoes"`},
		{"content:x", `"content x"`},
		{"北", `"北"*`},
		{"北京", `"北京"`},
		{"北京市", `"北京 京市" OR "北京" OR "京市"`},
		{"北京 北京市", `"北京" OR "北京 京市" OR "京市"`},
		{"用Python写了个爬虫", `"用"* OR "Python" OR "写"* OR "个爬 爬虫" OR "个爬" OR "爬虫"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := Match(tc.in); got != tc.want {
				t.Fatalf("Match(%q)=%s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestMatchBoundsQueryCost(t *testing.T) {
	t.Parallel()
	var words []string
	for i := range 100 {
		words = append(words, fmt.Sprintf("word%d", i))
	}
	long := strings.Join(words, " ")
	if got, want := len(Terms(long)), maxTerms; got != want {
		t.Fatalf("len(Terms(100 words))=%d, want %d", got, want)
	}
	run := strings.Repeat("记忆系统重构方案的设计", 20) // 200 runes, no function word between
	for _, q := range []string{long, run, run + " " + long} {
		expr := Match(q)
		if got := strings.Count(expr, " OR ") + 1; got > maxPhrases {
			t.Errorf("Match(%.20q…) ORs %d phrases, want at most %d", q, got, maxPhrases)
		}
		for _, phrase := range strings.Split(expr, " OR ") {
			if n := len(strings.Fields(phrase)); n > maxCJKRunes {
				t.Errorf("phrase %s has %d tokens, want at most %d", phrase, n, maxCJKRunes)
			}
		}
	}
	// Every term of a mixed query keeps its place before a long run's extra
	// bigrams fill the budget.
	if expr := Match(run + " python"); !strings.Contains(expr, `"python"`) {
		t.Errorf("Match(long run + python)=%s, lost python", expr)
	}
}

// A long run is cut into pieces that overlap by one rune, so every bigram of
// the run is still searched.
func TestLongRunKeepsEveryBigram(t *testing.T) {
	t.Parallel()
	run := "记忆系统重构方案设计哲学整体架构数据模型组件设计迁移方案文件结构"
	ts := terms(run)
	if len(ts) < 2 {
		t.Fatalf("terms(%d-rune run)=%d terms, want it cut", len([]rune(run)), len(ts))
	}
	got := make(map[string]bool)
	for _, tm := range ts {
		for _, bg := range bigrams(tm.text) {
			got[bg] = true
		}
	}
	for _, bg := range bigrams(run) {
		if !got[bg] {
			t.Errorf("bigram %q lost when cutting the run", bg)
		}
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	f := openFTS(t)
	rows := map[int64]string{
		1:  "我住在北京市朝阳区",
		2:  "北方的天气和东京不同",
		3:  "I was running late for the meetings",
		4:  "昨天用Python写了个爬虫",
		5:  "c++ code review",
		6:  "上海很热，北京很冷",
		7:  "Le café était fermé",
		8:  "東京に行きました",
		9:  "서울에서 만나요",
		10: "thanks🙏so much",
	}
	for id, text := range rows {
		f.insert(id, text)
	}
	for _, tc := range []struct {
		query     string
		want      []int64 // each must be found
		dontWant  []int64 // none may be found
		wantFirst int64   // if set, ranked first
	}{
		{query: "北京", want: []int64{1, 6}, dontWant: []int64{2}},
		{query: "北京市", want: []int64{1}, wantFirst: 1},
		{query: "朝阳区", want: []int64{1}},
		{query: "住在北京", want: []int64{1}, wantFirst: 1},
		{query: "北京的天气怎么样", want: []int64{1, 2, 6}},
		{query: "京", want: []int64{1, 2, 6}},
		{query: "区", want: []int64{1}},
		{query: "run", want: []int64{3}},
		{query: "runs", want: []int64{3}},
		{query: "meeting", want: []int64{3}},
		{query: "Python", want: []int64{4}},
		{query: "爬虫", want: []int64{4}},
		{query: "python爬虫", want: []int64{4}, wantFirst: 4},
		{query: "c++", want: []int64{5}},
		{query: "cafe ferme", want: []int64{7}},
		{query: "東京", want: []int64{8}, dontWant: []int64{2}}, // 東 is not 东
		{query: "行き", want: []int64{8}},
		{query: "서울", want: []int64{9}},
		{query: "thanks", want: []int64{10}},
		{query: "where did I go", dontWant: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			ids := f.search(tc.query)
			for _, id := range tc.want {
				if !contains(ids, id) {
					t.Errorf("search %q (MATCH %s) found %v, want row %d: %q", tc.query, Match(tc.query), ids, id, rows[id])
				}
			}
			for _, id := range tc.dontWant {
				if contains(ids, id) {
					t.Errorf("search %q (MATCH %s) found row %d: %q", tc.query, Match(tc.query), id, rows[id])
				}
			}
			if tc.wantFirst != 0 && (len(ids) == 0 || ids[0] != tc.wantFirst) {
				t.Errorf("search %q ranked %v, want row %d first", tc.query, ids, tc.wantFirst)
			}
		})
	}
}

// Bigrams must not let two characters that are far apart in a row match as
// if they were the word they make together.
func TestNoFalsePositiveAcrossBigrams(t *testing.T) {
	t.Parallel()
	f := openFTS(t)
	f.insert(1, "北方的天气和东京不同")
	f.insert(2, "北京，市场很大") // 京 and 市 are in different runs
	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"北京", []int64{2}},
		{"京市", nil},
		{"北京市", []int64{2}}, // through its bigram 北京, not as the phrase
		{"东京", []int64{1}},  // control: the table does find what is there
		{"方的", []int64{1}},
	} {
		if got := f.search(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("search %q (MATCH %s)=%v, want %v", tc.query, Match(tc.query), got, tc.want)
		}
	}
}

// Ranking: a row holding the exact words ranks above one that shares only
// part of them.
func TestRanking(t *testing.T) {
	t.Parallel()
	f := openFTS(t)
	f.insert(1, "我们讨论了北京的天气")
	f.insert(2, "用户住在北京市朝阳区")
	f.insert(3, "北京")
	for _, tc := range []struct {
		query string
		first int64
	}{
		{"北京市朝阳区", 2},
		{"北京天气", 1},
	} {
		if got := f.search(tc.query); len(got) == 0 || got[0] != tc.first {
			t.Errorf("search %q (MATCH %s)=%v, want row %d first", tc.query, Match(tc.query), got, tc.first)
		}
	}
}

func TestDiacritics(t *testing.T) {
	t.Parallel()
	f := openFTS(t)
	f.insert(1, "がっこう")
	f.insert(2, "Le café était fermé")
	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"かっ", nil}, // kana sound marks are not diacritics to drop
		{"がっ", []int64{1}},
		{"cafe", []int64{2}},
		{"etait", []int64{2}},
	} {
		if got := f.search(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("search %q=%v, want %v", tc.query, got, tc.want)
		}
	}
}

// User text is searched as text: nothing in it is read as FTS5 syntax, the
// query runs, and it finds a row that holds the same text.
func TestHostileQueries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		row   string // "" when nothing in query is searchable
	}{
		{"c++", "c++ code"},
		{"C#", "written in C#"},
		{"-foo", "foo bar"},
		{"foo -bar", "only bar here"},
		{"AND", "salt and pepper"},
		{"OR", "this or that"},
		{"NOT", "not now"},
		{"NEAR", "near the station"},
		{"NEAR(a b, 2)", "b 2"},
		{"a NOT b", "just b"},
		{"content:x", "content:x"},
		{"body:北京", "北京"},
		{"{body}: x", "body x"},
		{"*", ""},
		{"x*", "x ray"},
		{"^start", "start here"},
		{"(foo OR bar", "bar"},
		{"foo)", "foo"},
		{`"unbalanced`, "unbalanced quote"},
		{`say "hi`, "hi there"},
		{`""`, ""},
		{`a""b`, "a b"},
		{"'; DROP TABLE f; --", "drop table"},
		{"foo\x00bar", "foo"},
		{"\x01\x02\x7f", ""},
		{"\xff\xfe北京", "北京"},
		{"北\xff京", "北 京"},
		{`"北京"`, "北京"},
		{"北京 -上海", "上海"},
		{"😀", ""},
		{"+", ""},
		{"+1", "+1 from me"},
		{"-", ""},
		{"a:b:c", "a:b:c"},
		{strings.Repeat("(", 1000) + "deep", "deep"},
		{strings.Repeat("NOT ", 100), "not"},
		{strings.Repeat(`"`, 101), ""},
	} {
		t.Run(fmt.Sprintf("%.30q", tc.query), func(t *testing.T) {
			f := openFTS(t)
			f.insert(1, tc.row)
			f.insert(2, "unrelated words only")
			expr := Match(tc.query)
			ids, err := f.run(expr)
			if err != nil {
				t.Fatalf("MATCH %s (from %q): %v", expr, tc.query, err)
			}
			if tc.row == "" {
				if expr != "" {
					t.Fatalf("Match(%q)=%s, want nothing searchable", tc.query, expr)
				}
				return
			}
			if !contains(ids, 1) {
				t.Fatalf("MATCH %s (from %q) found %v, want row %q", expr, tc.query, ids, tc.row)
			}
		})
	}
	// The table is still there after the query that tried to drop it.
	f := openFTS(t)
	if _, err := f.run(Match("'; DROP TABLE f; --")); err != nil {
		t.Fatal(err)
	}
	f.insert(1, "still here")
}

// Match returns "" rather than an expression that matches nothing because
// FTS5 rejects an empty MATCH; callers must skip the query.
func TestEmptyMatchIsRejectedByFTS5(t *testing.T) {
	t.Parallel()
	f := openFTS(t)
	rows, err := f.db.Query(`SELECT rowid FROM f WHERE f MATCH ''`)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		quiet.Close(rows)
	}
	if err == nil {
		t.Fatal("FTS5 accepted an empty MATCH; Match could return an always-false expression instead of \"\"")
	}
}

func TestInformative(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"the", false}, {"to be or not to be", false}, {"what about that?", false}, {"什么", false}, {"", false}, {"!!", false},
		{"the kubernetes", true}, {"北京", true}, {"我喜欢什么", true}, {"c++", true},
	} {
		if got := Informative(tc.query); got != tc.want {
			t.Errorf("Informative(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}
