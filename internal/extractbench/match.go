package extractbench

import (
	"strings"
	"unicode"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
)

// MinOverlap is the share of the gold value's tokens the candidate's
// content must hold. It is below 1 so a template's wording ("用户住在" for
// "住在") does not decide the match, and high enough that a value cut
// short ("Rule: Never push directly to main" for a rule that goes on with
// "open a pull request", "VS" for "VS Code") does not match.
const MinOverlap = 0.8

// Matches reports whether candidate c is the memory g: the same kind and
// predicate, the same subject once normalised (NormSubject), and a content
// that holds the value (ValueMatch); and if g updates, so does c.
func Matches(g Gold, c memory.Candidate) bool {
	return (!g.Updates || c.Updates) && strings.EqualFold(strings.TrimSpace(g.Kind), string(c.Kind)) &&
		strings.EqualFold(strings.TrimSpace(g.Predicate), strings.TrimSpace(c.Predicate)) &&
		NormSubject(g.Subject) == NormSubject(c.Subject) &&
		ValueMatch(g.Value, c.Content)
}

// NormSubject lowercases a subject and drops spaces and the punctuation
// people write tool names with, so "VS Code", "vscode" and "vs-code", or
// "Next.js" and "nextjs", are one subject.
func NormSubject(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch r {
		case ' ', '.', '-', '_':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Tokens splits text into what values are compared by: lowercased runs of
// letters and digits (keeping inner dots, so "3.10" and "next.js" are one
// token each) and single Han characters.
func Tokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		for len(cur) > 0 && cur[len(cur)-1] == '.' {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			out = append(out, string(cur))
		}
		cur = cur[:0]
	}
	for _, r := range strings.ToLower(s) {
		switch {
		case chars.IsHan(r):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '#' || r == '+':
			cur = append(cur, r)
		case r == '.' && len(cur) > 0:
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// ValueMatch reports whether content holds value: at least MinOverlap of
// the value's tokens appear in content, and every token with a digit does
// ("Python 3.10" is not "Python 3.12").
func ValueMatch(value, content string) bool {
	want := Tokens(value)
	if len(want) == 0 {
		return false
	}
	have := map[string]bool{}
	for _, t := range Tokens(content) {
		have[t] = true
	}
	hit := 0
	for _, t := range want {
		if have[t] {
			hit++
		} else if strings.ContainsFunc(t, unicode.IsDigit) {
			return false
		}
	}
	return float64(hit) >= MinOverlap*float64(len(want))
}

// Pair matches one turn's candidates to its gold memories, one to one, in
// order: each gold memory takes the first candidate not yet taken that
// matches it. It returns, per gold memory, the index of its candidate or
// -1, and per candidate whether it was taken.
func Pair(gold []Gold, cands []memory.Candidate) (goldTo []int, taken []bool) {
	goldTo = make([]int, len(gold))
	taken = make([]bool, len(cands))
	for i, g := range gold {
		goldTo[i] = -1
		for j, c := range cands {
			if !taken[j] && Matches(g, c) {
				goldTo[i], taken[j] = j, true
				break
			}
		}
	}
	return goldTo, taken
}
