package textseg

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

const (
	// maxTerms bounds the terms taken from one query, and maxPhrases the
	// phrases OR-ed in one MATCH expression, so that pasting a page of text
	// into a search box costs a bounded query.
	maxTerms   = 32
	maxPhrases = 32
	// maxCJKRunes and maxWords bound one phrase. Longer CJK runs are cut into
	// pieces that overlap by one rune, so no bigram is lost at a cut.
	maxCJKRunes = 16
	maxWords    = 8
)

// term is one unit of a query: a CJK word (a run, or part of a run between
// function words) or a non-CJK word group such as "c++" or "node.js".
type term struct {
	key  string // lowercased; what Terms returns and what duplicates are found by
	text string // as written (words joined by one space); what Match quotes
	cjk  bool
	// verb is a CJK bigram of a run's last character and the 了 after
	// it (赔了, 丢了): the only term that finds a one-character verb.
	verb bool
}

// Terms returns the normalized search terms of query, in order, without
// duplicates and at most 32 of them: lowercased words and word groups, where
// a group is words joined by punctuation such as '.', '-', ':' or '+' ("node.js"
// gives "node js", "c++" gives "c"), and CJK words as they appear, runs being
// split at a few Chinese function words (的, 了, 吗, 什么, ...). English
// stopwords and those function words are dropped unless nothing else is left.
func Terms(query string) []string {
	ts := terms(query)
	if len(ts) == 0 {
		return nil
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.key
	}
	return out
}

// Match returns an FTS5 MATCH expression that searches for query as plain
// text in a column filled by Index, or "" when query has nothing searchable
// (then the caller must not run the MATCH at all: FTS5 rejects an empty one).
//
// Every term becomes a double-quoted FTS5 string, so no part of the user's
// text is ever read as query syntax (AND, NEAR, column:, *, ^, parentheses).
// Terms are OR-ed so that BM25 ranks a row by how many of them it contains:
// for memory retrieval a partial match is worth returning. A one-character CJK
// term is a prefix query on its token; a longer one is the phrase of its
// bigrams, so it matches only that exact substring, and a term of three or
// more characters also adds each of its bigrams on its own: Chinese queries
// come without spaces, so a run is often several words, and a row sharing
// only some of them should still be found, below the exact match.
//
// The result is a complete expression; to combine it with other FTS5 syntax,
// wrap it in parentheses.
func Match(query string) string { return match("", query) }

// match is Match with every token of every phrase in partition part (see
// MatchIn); part "" leaves tokens as they are.
func match(part, query string) string {
	ts := terms(query)
	var b strings.Builder
	n := 0
	seen := make(map[string]bool)
	add := func(phrase string, prefix bool) {
		if n == maxPhrases {
			return
		}
		q := quote(inPartition(part, phrase))
		if prefix {
			q += "*"
		}
		if seen[q] {
			return
		}
		seen[q] = true
		if n > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(q)
		n++
	}
	// Every term gets its main phrase before any term's extra bigrams, so a
	// long run cannot use up the budget meant for the other terms.
	for _, t := range ts {
		switch runes := utf8.RuneCountInString(t.text); {
		case !t.cjk:
			add(t.text, false)
		case runes == 1:
			add(t.text, true)
		default:
			add(strings.Join(bigrams(t.text), " "), false)
		}
	}
	for _, t := range ts {
		if t.cjk && utf8.RuneCountInString(t.text) >= 3 {
			for _, bg := range bigrams(t.text) {
				add(bg, false)
			}
		}
	}
	return b.String()
}

// quote makes s an FTS5 string: inside double quotes FTS5 reads nothing as
// syntax, and a double quote is written twice.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// bigrams returns the overlapping character pairs of s, which has at least
// two runes.
func bigrams(s string) []string {
	var out []string
	_, prev := utf8.DecodeRuneInString(s)
	for i := prev; i < len(s); {
		_, size := utf8.DecodeRuneInString(s[i:])
		out = append(out, s[i-prev:i+size])
		prev = size
		i += size
	}
	return out
}

// terms splits query into terms, dropping stopwords unless that leaves none.
func terms(query string) []term {
	if ts := split(query, true); len(ts) > 0 {
		return ts
	}
	return split(query, false)
}

// split scans query into terms. It stops once it has maxTerms distinct terms,
// so a huge query costs no more than a long one.
func split(query string, dropStop bool) []term {
	s := splitter{dropStop: dropStop, seen: make(map[string]bool)}
	s.scan(query)
	return s.terms
}

// scan reads query into s.terms, until s is full.
func (s *splitter) scan(query string) {
	for i := 0; i < len(query) && !s.full(); {
		r, size := utf8.DecodeRuneInString(query[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			s.endGroup()
		case chars.IsCJK(r):
			s.endGroup()
			i = s.run(query, i)
			continue
		case isWordRune(r):
			s.word.WriteRune(r)
			s.hasLetter = s.hasLetter || !unicode.Is(unicode.M, r)
		case isJoiner(r):
			s.endWord()
		default:
			s.endGroup()
		}
		i += size
	}
	s.endGroup()
}

type splitter struct {
	dropStop  bool
	verbs     bool // add a run's last character with the 了 after it (term.verb)
	unbounded bool // no maxTerms: Understand bounds by weight instead
	terms     []term
	runs      []string // each CJK run whole, before it is cut at function words
	seen      map[string]bool
	word      strings.Builder // the word being read
	hasLetter bool            // word has more than combining marks
	group     []string        // finished words of the current word group
}

func (s *splitter) full() bool { return !s.unbounded && len(s.terms) >= maxTerms }

func (s *splitter) add(t term, stop bool) {
	if s.full() || (stop && s.dropStop) || s.seen[t.key] {
		return
	}
	s.seen[t.key] = true
	s.terms = append(s.terms, t)
}

// endWord finishes the word being read; the group it belongs to goes on.
func (s *splitter) endWord() {
	if s.word.Len() > 0 && s.hasLetter {
		s.group = append(s.group, s.word.String())
	}
	s.word.Reset()
	s.hasLetter = false
}

// endGroup finishes the current word group, as a term of at most maxWords
// words (longer groups become several terms).
func (s *splitter) endGroup() {
	s.endWord()
	for len(s.group) > 0 {
		n := min(len(s.group), maxWords)
		words := s.group[:n]
		s.group = s.group[n:]
		stop := true
		for _, w := range words {
			stop = stop && isStopword(strings.ToLower(w))
		}
		text := strings.Join(words, " ")
		s.add(term{key: strings.ToLower(text), text: text}, stop)
	}
}

// run reads the CJK run starting at query[i], adds its terms and returns the
// offset just past it. Combining marks inside the run are dropped, as Index
// drops them.
func (s *splitter) run(query string, i int) int {
	var rb strings.Builder
	for i < len(query) {
		r, size := utf8.DecodeRuneInString(query[i:])
		if chars.IsCJK(r) {
			rb.WriteString(query[i : i+size])
		} else if !isMark(r) {
			break
		}
		i += size
	}
	run := rb.String()
	s.runs = append(s.runs, run)
	if !s.dropStop {
		s.addCJK(run, false)
		return i
	}
	// Cut the run at function words. A word from cjkKeep is read whole first,
	// so that 了解 is not cut at 了.
	start := 0
	for j := 0; j < len(run); {
		if w := prefixIn(run[j:], cjkKeep); w != "" {
			j += len(w)
			continue
		}
		if w := prefixIn(run[j:], cjkStop); w != "" {
			s.addCJK(run[start:j], false)
			if s.verbs && w == "了" && j > start {
				_, size := utf8.DecodeLastRuneInString(run[start:j])
				s.add(term{key: run[j-size : j+len(w)], text: run[j-size : j+len(w)], cjk: true, verb: true}, false)
			}
			s.addCJK(w, true)
			j += len(w)
			start = j
			continue
		}
		_, size := utf8.DecodeRuneInString(run[j:])
		j += size
	}
	s.addCJK(run[start:], false)
	return i
}

// addCJK adds a CJK word, cut into pieces of at most maxCJKRunes runes that
// overlap by one rune.
func (s *splitter) addCJK(w string, stop bool) {
	for w != "" {
		end, n := 0, 0
		for end < len(w) && n < maxCJKRunes {
			_, size := utf8.DecodeRuneInString(w[end:])
			end += size
			n++
		}
		s.add(term{key: w[:end], text: w[:end], cjk: true}, stop)
		if end == len(w) {
			return
		}
		_, last := utf8.DecodeLastRuneInString(w[:end])
		w = w[end-last:]
	}
}

// prefixIn returns the first word of words that s starts with, or "".
func prefixIn(s string, words []string) string {
	for _, w := range words {
		if strings.HasPrefix(s, w) {
			return w
		}
	}
	return ""
}

// isJoiner reports whether r joins words into one group (c++, node.js,
// don't, user@example.com, content:x) rather than separating terms. A group is
// searched as a phrase, which is what a user who typed it means.
func isJoiner(r rune) bool {
	switch r {
	case '.', '-', '_', '\'', '\u2019', ':', '/', '\\', '@', '#', '+', '&', '~':
		return true
	}
	return false
}

// Informative reports whether query has a term that is not a stopword:
// a query of stopwords alone ("the", "to be", "什么") is still searchable
// (Match falls back to its stopwords) but says nothing a ranking by words
// can use, and matches nearly every row.
func Informative(query string) bool {
	return len(split(query, true)) > 0
}
