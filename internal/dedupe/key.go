package dedupe

import (
	"strings"
	"unicode"

	"github.com/engramhq/engram/internal/textseg"
)

// Key is what the weekly dedupe compares of a memory: the words that say
// something, so that a paraphrase which only says a thing another way is
// the same key. Words are lowercased and stemmed as the search index
// stems them ("mornings" and "morning" are one word), numbers are written
// in digits ("two" is "2"), and stopwords ("on", "at", "the") and
// frequency words ("every", "usually") go. What changes a fact's meaning
// stays: a negation is a word of its own ("does not drink coffee" is not
// "drinks coffee"), and so is every other number, name and noun. Chinese
// keeps its characters (as bigrams, through Similarity's shingles).
func Key(text string) string {
	var kept []string
	negated := false
	for _, w := range words(text) {
		lw := strings.ToLower(w)
		switch {
		case negations[lw] || strings.HasSuffix(lw, "n't"):
			negated = true
		case numberWords[lw] != "":
			kept = append(kept, numberWords[lw])
		case textseg.IsStopword(lw) || neutralWords[lw]:
		default:
			kept = append(kept, w)
		}
	}
	if strings.ContainsAny(text, "不没别无未") {
		negated = true
	}
	toks := textseg.Tokens(strings.Join(kept, " "))
	if negated {
		toks = append(toks, "not")
	}
	return strings.Join(toks, " ")
}

// words splits text at what is neither a letter, a digit, an apostrophe
// nor a dot inside a number, keeping CJK runs whole for textseg.
func words(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' || r == '.')
	})
}

// negations turn a statement around; "not" and "no" are stopwords to a
// query, but never to a fact.
var negations = setOf("not", "no", "never", "nor", "neither", "none", "cannot", "without", "stopped", "quit")

// numberWords are numbers spelled out, as digits.
var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
	"eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20",
}

// neutralWords say how often or how much without changing what a fact is
// about: "drinks coffee every morning" is "drinks coffee mornings".
var neutralWords = setOf("every", "each", "always", "usually", "normally", "often", "typically", "generally",
	"regularly", "really", "also", "still", "currently", "now", "mostly")

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}
