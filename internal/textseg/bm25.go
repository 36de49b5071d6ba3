package textseg

import (
	"math"
	"strings"
)

// BM25 parameters (Robertson's defaults, as FTS5's bm25()).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// phraseBonus is what a phrase found verbatim adds, as a share of its
	// terms' own weight: word order is a bonus, never a requirement.
	phraseBonus = 0.3
)

// Stats are what BM25 reads of a collection. They must come from one
// user's own data (engram's collections are per user), so that another
// tenant's text never moves a user's ranking.
type Stats struct {
	Docs   int            // documents in the collection
	AvgLen float64        // their mean length in tokens
	DF     map[string]int // documents holding each term's token
}

// Scorer ranks documents for a query with BM25 over Tokens, each term
// counted at its weight (Query.Terms), plus a bonus for each phrase a
// document holds verbatim. A Scorer is not safe for concurrent use.
type Scorer struct {
	q   Query
	idf []float64
	avg float64
	// terms finds the terms (but prefix ones) of each token, and prefixed
	// lists the prefix terms: a document's tokens are looked up among the
	// query's, not counted into a map of their own (a map per candidate,
	// hundreds a query, was a fifth of what a query allocated).
	terms    map[string][]int
	prefixed []int
	tf       []int // per term, the document being scored
}

// NewScorer prepares q for scoring against a collection with st.
func NewScorer(q Query, st Stats) *Scorer {
	s := &Scorer{q: q, idf: make([]float64, len(q.Terms)), avg: max(st.AvgLen, 1)}
	for i, t := range q.Terms {
		s.idf[i] = IDF(st.Docs, st.DF[t.Token])
	}
	return s
}

// index makes terms and prefixed, the first time a document is scored
// (Select and Informativeness need neither).
func (s *Scorer) index() {
	s.terms = make(map[string][]int, len(s.q.Terms))
	s.tf = make([]int, len(s.q.Terms))
	for i, t := range s.q.Terms {
		if t.Prefix {
			s.prefixed = append(s.prefixed, i)
		} else {
			s.terms[t.Token] = append(s.terms[t.Token], i)
		}
	}
}

// IDF is BM25's inverse document frequency in the form that never goes
// negative (Lucene's): a term in most of a user's documents still counts
// a little, never against a document.
func IDF(docs, df int) float64 {
	docs = max(docs, df)
	return math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
}

// LengthFactor is what BM25 gives a term that occurs once in a document
// of length n, where documents average avg, as a share of the term's
// weight × IDF: a store picking candidates from postings, which say
// which terms a document holds but not how often, ranks by it.
func LengthFactor(n int, avg float64) float64 {
	return (bm25K1 + 1) / (1 + bm25K1*(1-bm25B+bm25B*float64(n)/max(avg, 1)))
}

// Informativeness is a term's weight times its IDF: what Select keeps.
func (s *Scorer) Informativeness(i int) float64 { return s.q.Terms[i].Weight * s.idf[i] }

// Score returns doc's score and how many of the query's terms it holds.
func (s *Scorer) Score(doc string) (score float64, matched int) {
	return s.ScoreTokens(doc, Tokens(doc))
}

// ScoreTokens is Score for a document whose Tokens are at hand.
func (s *Scorer) ScoreTokens(doc string, toks []string) (score float64, matched int) {
	if len(toks) == 0 {
		return 0, 0
	}
	if s.terms == nil {
		s.index()
	}
	tf := s.tf
	clear(tf)
	for _, tok := range toks {
		for _, i := range s.terms[tok] {
			tf[i]++
		}
		for _, i := range s.prefixed {
			if strings.HasPrefix(tok, s.q.Terms[i].Token) {
				tf[i]++
			}
		}
	}
	norm := bm25K1 * (1 - bm25B + bm25B*float64(len(toks))/s.avg)
	for i, t := range s.q.Terms {
		n := tf[i]
		if n == 0 {
			continue
		}
		matched++
		f := float64(n)
		score += t.Weight * s.idf[i] * f * (bm25K1 + 1) / (f + norm)
	}
	if len(s.q.Phrases) > 0 && score > 0 {
		lower := strings.ToLower(doc)
		for _, p := range s.q.Phrases {
			if strings.Contains(lower, p) {
				score += phraseBonus * s.phraseWeight(p)
			}
		}
	}
	return score, matched
}

// phraseWeight is the IDF mass of a phrase's own terms.
func (s *Scorer) phraseWeight(p string) float64 {
	w := 0.0
	for _, tok := range Tokens(p) {
		for i, t := range s.q.Terms {
			if t.Token == tok {
				w += t.Weight * s.idf[i]
				break
			}
		}
	}
	return w
}

// Select returns q with at most n terms, the most informative by the
// collection's own statistics (weight × IDF): a long dialogue keeps its
// rare words wherever they stand, and the words every one of the user's
// documents holds go first.
func Select(q Query, st Stats, n int) Query {
	if len(q.Terms) <= n {
		return q
	}
	s := NewScorer(q, st)
	idx := make([]int, len(q.Terms))
	for i := range idx {
		idx[i] = i
	}
	sortByDesc(idx, s.Informativeness)
	out := Query{Phrases: q.Phrases, Terms: make([]Term, 0, n)}
	keep := make([]bool, len(q.Terms))
	for _, i := range idx[:n] {
		keep[i] = true
	}
	for i, t := range q.Terms {
		if keep[i] {
			out.Terms = append(out.Terms, t)
		}
	}
	return out
}

func sortByDesc(idx []int, key func(int) float64) {
	// insertion sort is enough for a few hundred terms and keeps ties in
	// their order (heaviest first already).
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && key(idx[j]) > key(idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// StatsOf computes Stats for q over docs, a whole small collection held in
// memory (a user's daily summaries): each document's tokens are read once.
func StatsOf(q Query, docs []string) Stats {
	st := Stats{Docs: len(docs), DF: make(map[string]int, len(q.Terms))}
	total := 0
	for _, d := range docs {
		toks := Tokens(d)
		total += len(toks)
		seen := make(map[string]bool, len(toks))
		for _, t := range toks {
			seen[t] = true
		}
		for _, t := range q.Terms {
			if t.In(seen) {
				st.DF[t.Token]++
			}
		}
	}
	if len(docs) > 0 {
		st.AvgLen = float64(total) / float64(len(docs))
	}
	return st
}

// In reports whether a document's token set holds t: its token, or, for
// a one-character CJK term, any token that starts with it.
func (t Term) In(set map[string]bool) bool {
	if set[t.Token] {
		return true
	}
	if t.Prefix {
		for tok := range set {
			if strings.HasPrefix(tok, t.Token) {
				return true
			}
		}
	}
	return false
}
