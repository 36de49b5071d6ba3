package textseg

import (
	"strings"
	"testing"
)

// ScoreTokens counts each term as a map of the document's tokens would:
// a prefix term every token that starts with it, the exact one too, a
// token two terms share for both. The scores are the same to the bit.
func TestScoreTokensCountsAsAMapWould(t *testing.T) {
	t.Parallel()
	q := Understand("我的猫喜欢吃鱼 deploy the deployment", "猫粮 deployed yesterday, cat food")
	q.Terms = append(q.Terms, Term{Token: "deploy", Weight: 0.3}, Term{Token: "猫", Prefix: true, Weight: 0.2})
	q.Phrases = nil // scored as they were
	st := Stats{Docs: 50, AvgLen: 8, DF: map[string]int{}}
	for i, term := range q.Terms {
		st.DF[term.Token] = 1 + i%7
	}
	sc := NewScorer(q, st)
	docs := []string{"猫猫喜欢鱼", "we deploy, deploy and deploy again", "猫粮 and cat food deployed", "", "nothing of it", "我的猫 deployment 吃鱼"}
	for _, d := range docs {
		toks := Tokens(d)
		got, gotN := sc.ScoreTokens(d, toks)
		want, wantN := scoreByMap(sc, toks)
		if got != want || gotN != wantN {
			t.Errorf("ScoreTokens(%q) = %v, %d terms; counted by a map: %v, %d", d, got, gotN, want, wantN)
		}
	}
}

// scoreByMap is ScoreTokens as it was, phrases aside: each document's
// tokens counted into a map of their own.
func scoreByMap(s *Scorer, toks []string) (score float64, matched int) {
	if len(toks) == 0 {
		return 0, 0
	}
	tf := make(map[string]int, len(toks))
	for _, t := range toks {
		tf[t]++
	}
	norm := bm25K1 * (1 - bm25B + bm25B*float64(len(toks))/s.avg)
	for i, t := range s.q.Terms {
		n := tf[t.Token]
		if t.Prefix {
			n = 0
			for tok, c := range tf {
				if strings.HasPrefix(tok, t.Token) {
					n += c
				}
			}
		}
		if n == 0 {
			continue
		}
		matched++
		f := float64(n)
		score += t.Weight * s.idf[i] * f * (bm25K1 + 1) / (f + norm)
	}
	return score, matched
}

// Scoring a document whose tokens are at hand allocates nothing: a store
// scores hundreds of candidates a query.
func TestScoreTokensAllocatesNothing(t *testing.T) {
	q := Understand("我的猫喜欢吃鱼 deploy the deployment")
	q.Phrases = nil // a phrase is looked for in the lowercased document
	sc := NewScorer(q, Stats{Docs: 50, AvgLen: 8, DF: map[string]int{"deploy": 3}})
	doc := "we deploy, deploy and 我的猫 deployment again"
	toks := Tokens(doc)
	if got := testing.AllocsPerRun(100, func() { sc.ScoreTokens(doc, toks) }); got != 0 {
		t.Errorf("ScoreTokens allocates %v times a document, want 0", got)
	}
}
