package textseg

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/quiet"
)

func tokensOf(q Query) []string {
	out := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		out[i] = t.Token
	}
	return out
}

func weightOf(q Query, tok string) float64 {
	for _, t := range q.Terms {
		if t.Token == tok {
			return t.Weight
		}
	}
	return 0
}

// A Chinese run is searched by its bigrams, each a term: no phrase is
// required, so a memory holding 巧克力蛋糕 is found from 我可以带巧克力蛋糕.
// A bigram across a function word is a term too, but a light one.
func TestUnderstandChineseBigrams(t *testing.T) {
	t.Parallel()
	q := Understand("周六我可以带巧克力蛋糕吗")
	got := tokensOf(q)
	for _, want := range []string{"巧克", "克力", "力蛋", "蛋糕", "周六"} {
		if !slices.Contains(got, want) {
			t.Errorf("terms %v lack %s", got, want)
		}
	}
	for _, tok := range []string{"糕吗", "我可"} {
		if w := weightOf(q, tok); w > looseWeight {
			t.Errorf("term %q straddles a function word and weighs %.2f, more than %.2f", tok, w, looseWeight)
		}
	}
}

// The bigrams across a function word are what a plain bigram search
// matches on: a memory that shares only 买的 with "票买的几点的" ("买的是
// 早上 8:12 的高铁") is found by them.
func TestLooseBigrams(t *testing.T) {
	t.Parallel()
	q := Understand("票买的几点的")
	if w := weightOf(q, "买的"); w == 0 || w > looseWeight {
		t.Errorf("买的 weighs %.2f in %v, want a term of at most %.2f", w, tokensOf(q), looseWeight)
	}
	if w := weightOf(q, "票买"); w <= looseWeight {
		t.Errorf("票买, a run of its own, weighs %.2f in %v", w, tokensOf(q))
	}
	// Read in a scene sentence first and then in the question, a loose
	// bigram weighs as the question reads it.
	q = Understand("昨天票买的。票买的几点？")
	if w := weightOf(q, "买的"); w < looseWeight-1e-9 {
		t.Errorf("买的 weighs %.3f, want the question's %.2f", w, looseWeight)
	}
	// None inside a function word, after a particle, or with a pronoun.
	q = Understand("我们去的那家店有没有开门，为什么关了一天")
	for _, tok := range []string{"有没", "没有", "为什", "什么", "么关", "们去", "的那", "了一"} {
		if w := weightOf(q, tok); w > 0 {
			t.Errorf("%s is a term (%.2f) in %v", tok, w, tokensOf(q))
		}
	}
}

// A one-character noun is a prefix term, inside a run or alone.
func TestUnderstandSingleNoun(t *testing.T) {
	t.Parallel()
	for _, query := range []string{"上次我发给你的那张猫的照片给我一下", "猫"} {
		q := Understand(query)
		i := slices.IndexFunc(q.Terms, func(t Term) bool { return t.Token == "猫" })
		if i < 0 || !q.Terms[i].Prefix {
			t.Errorf("%q: terms %+v, want 猫 as a prefix term", query, q.Terms)
		}
	}
}

// The last utterance weighs most; the recent messages less the further
// back they are; in a long utterance the question outweighs the scene.
func TestUnderstandWeights(t *testing.T) {
	t.Parallel()
	q := Understand("what about the invoice", "we talked about billing", "earlier: kubernetes")
	inv, bill, kube := weightOf(q, "invoic"), weightOf(q, "bill"), weightOf(q, "kubernet")
	if !(inv > bill && bill > kube && kube > 0) {
		t.Fatalf("weights invoice %v billing %v kubernetes %v", inv, bill, kube)
	}
	q = Understand("Work has been crazy with patients all week. What does Sam have on Saturday?")
	if p, s := weightOf(q, "patient"), weightOf(q, "saturdai"); !(s > p && p > 0) {
		t.Fatalf("scene %v, question %v", p, s)
	}
}

// Nothing at the end of a long query is dropped.
func TestUnderstandKeepsTheEnd(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "filler%d ", i)
	}
	b.WriteString("zanzibar")
	q := Understand(b.String())
	if w := weightOf(q, "zanzibar"); w == 0 {
		t.Fatalf("the last word is not among %d terms", len(q.Terms))
	}
}

// The concept lexicon bridges a paraphrase, in both languages, below the
// words the user typed.
func TestUnderstandConcepts(t *testing.T) {
	t.Parallel()
	q := Understand("which theme do I like")
	if w := weightOf(q, "prefer"); w == 0 || w >= weightOf(q, "theme") {
		t.Fatalf("prefer %v theme %v", w, weightOf(q, "theme"))
	}
	if weightOf(q, "喜欢") == 0 || weightOf(q, "dark") == 0 {
		t.Fatalf("terms %v lack 喜欢 or dark", tokensOf(q))
	}
	if q := Understand("我喜欢什么主题"); weightOf(q, "prefer") == 0 || weightOf(q, "dark") == 0 {
		t.Fatalf("terms %v lack prefer or dark", tokensOf(q))
	}
}

// Stopwords alone are searched, and the query says it is not informative.
func TestUnderstandStopwordsAlone(t *testing.T) {
	t.Parallel()
	q := Understand("what about that?")
	if q.Empty() || !q.Uninformative {
		t.Fatalf("%+v", q)
	}
	if q := Understand("what about the cluster"); q.Uninformative || !slices.Equal(ownTokens(q), []string{"cluster"}) {
		t.Fatalf("%+v", q)
	}
}

// Tokens reads text as the index stores it: every token Go scores by is a
// token FTS5 holds for the same text (porter in Go and in SQLite agree).
func TestTokensAgreeWithFTS5(t *testing.T) {
	t.Parallel()
	f := openFTS(t)
	texts := []string{
		"We deployed billing to Kubernetes yesterday; deployments were running smoothly.",
		"User prefers dark mode in every tool and generally dislikes bright themes",
		"Never push directly to main; open a pull request. Happiness, relational, conditional, generalization.",
		"我住在北京市朝阳区，平时喜欢喝美式咖啡。 Caffè latte, naïve café, résumé",
		"connected connecting connection connections abilities agreed feed hopping sky skies dying lying",
	}
	for i, text := range texts {
		f.insert(int64(i+1), text)
	}
	rows, err := f.db.Query(`SELECT term FROM v`)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(rows)
	stored := map[string]bool{}
	for rows.Next() {
		var term string
		if err := rows.Scan(&term); err != nil {
			t.Fatal(err)
		}
		stored[term] = true
	}
	var missing []string
	for _, text := range texts {
		for _, tok := range Tokens(text) {
			if !stored[tok] {
				missing = append(missing, tok)
			}
		}
	}
	sort.Strings(missing)
	// remove_diacritics folds café to cafe in FTS5; Go keeps the accent,
	// which costs a match on accented words only.
	missing = slices.DeleteFunc(slices.Compact(missing), func(s string) bool { return strings.ContainsAny(s, "èïéé") })
	if len(missing) > 0 {
		t.Fatalf("tokens Go scores by that FTS5 does not hold: %v", missing)
	}
}

// BM25 in Go ranks by the collection's own statistics: a term every
// document holds counts little, a rare one much.
func TestScorerIDF(t *testing.T) {
	t.Parallel()
	q := Understand("happy zanzibar")
	st := Stats{Docs: 10, AvgLen: 5, DF: map[string]int{"happi": 9, "zanzibar": 1}}
	sc := NewScorer(q, st)
	common, _ := sc.Score("I am happy today")
	rare, _ := sc.Score("off to zanzibar today")
	if !(rare > common && common > 0) {
		t.Fatalf("rare %v common %v", rare, common)
	}
	if got := Select(q, st, 1); len(got.Terms) != 1 || got.Terms[0].Token != "zanzibar" {
		t.Fatalf("Select kept %+v", got.Terms)
	}
}

// Understand reads a one-character verb by its bigram with the 了 after
// it, at less than a word's weight; Terms (the plain search terms) does not.
func TestVerbBeforeLe(t *testing.T) {
	t.Parallel()
	var found *Term
	q := Understand("钱赔了没")
	for i, term := range q.Terms {
		if term.Token == "赔了" {
			found = &q.Terms[i]
		}
	}
	if found == nil || found.Weight >= 1 || found.Prefix {
		t.Fatalf("Understand(钱赔了没).Terms = %+v, want 赔了 at a weight below 1", q.Terms)
	}
	if got := Terms("钱赔了没"); slices.Contains(got, "赔了") {
		t.Fatalf("Terms(钱赔了没) = %q, want no verb bigram", got)
	}
}

// An utterance whose only term would be a verb bigram (好了吗, 对了) says
// nothing to search for, as before the bigram existed.
func TestVerbAloneIsUninformative(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"好了吗", "对了", "算了吧", "到了吗"} {
		if q := Understand(u); !q.Uninformative {
			t.Errorf("Understand(%q) = %+v, want Uninformative", u, q)
		}
	}
	if q := Understand("钱赔了没"); q.Uninformative {
		t.Errorf("Understand(钱赔了没) is Uninformative; 钱 is a word")
	}
}

// Feedback reads what was found as a query of the words the question
// does not have.
func TestFeedback(t *testing.T) {
	t.Parallel()
	q := Understand("房东的房租是什么时候涨的")
	fb := q.Feedback("跟房东刘老板谈成签三年合同，每月 2450")
	if weightOf(fb, "三年") == 0 || weightOf(fb, "2450") == 0 {
		t.Fatalf("feedback %v lacks 三年 or 2450", tokensOf(fb))
	}
	if weightOf(fb, "房东") != 0 || len(fb.Phrases) != 0 {
		t.Fatalf("feedback %v, phrases %v: holds the question's own words", tokensOf(fb), fb.Phrases)
	}
}

// ownTokens are the tokens of q's own words (weight 1), not those a
// lexicon added.
func ownTokens(q Query) []string {
	var out []string
	for _, t := range q.Terms {
		if t.Weight == 1 {
			out = append(out, t.Token)
		}
	}
	return out
}
