package prefilter

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// Decision says whether to look up memories for a message, and why.
type Decision struct {
	Retrieve bool
	// Reason is "rule" or "rule:what matched" (see the package doc), for
	// logs and metrics; skip reasons start with "skip:".
	Reason string
}

// Rule names, the part of a Reason before any ':'.
const (
	RuleForced     = "forced"
	RulePronoun    = "pronoun"
	RuleTime       = "time"
	RuleProject    = "project"
	RulePreference = "preference"
	RuleQuestion   = "question"
	RuleDefault    = "default"
	RuleSkip       = "skip"
)

// Skip reasons.
const (
	SkipEmpty = "skip:empty"
	SkipAck   = "skip:ack"
	SkipCode  = "skip:code"
	SkipShort = "skip:short"
)

// MinLength is how long a message with no trigger must be to be retrieved
// for anyway: CJK characters count two, other visible characters one, so
// four Han characters or eight letters. Seed 001 skips below 5 bytes.
const MinLength = 8

// Forced is the decision for a request that asks for retrieval outright.
func Forced() Decision { return Decision{Retrieve: true, Reason: RuleForced} }

// ShouldRetrieve applies the rules in the package doc to query.
// knownProjects are the user's project names.
func ShouldRetrieve(query string, knownProjects []string) Decision {
	if isBlank(query) {
		return Decision{Reason: SkipEmpty}
	}
	if len(query) <= maxAck && isAck(query) {
		return Decision{Reason: SkipAck}
	}
	prose, hadCode := stripCode(query)
	if hadCode && isBlank(prose) || !hadCode && looksLikeCode(query) {
		return Decision{Reason: SkipCode}
	}

	text := lower(clip(prose))
	words := englishWords(text)
	found := findTriggers(text, words)
	for rule, what := range found[:trigQuestion] {
		if what != "" {
			return retrieve(triggerNames[rule], what)
		}
		if rule == trigTime {
			// Projects rank between time references and preferences.
			if p := matchProject(text, knownProjects); p != "" {
				return retrieve(RuleProject, p)
			}
		}
	}
	if found[trigQuestion] != "" || isQuestion(text, words) {
		return Decision{Retrieve: true, Reason: RuleQuestion}
	}
	if isLong(prose) {
		return Decision{Retrieve: true, Reason: RuleDefault}
	}
	return Decision{Reason: SkipShort}
}

func retrieve(rule, what string) Decision {
	return Decision{Retrieve: true, Reason: rule + ":" + what}
}

// isBlank reports whether s has nothing a reader would see.
func isBlank(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) && !isInvisible(r) {
			return false
		}
	}
	return true
}

func isInvisible(r rune) bool {
	switch {
	case r < utf8.RuneSelf:
		return r < 0x20 || r == 0x7F
	case r >= 0x4E00 && r <= 0x9FFF:
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.IsControl(r) ||
		r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0 // Hangul fillers
}

func isASCIIAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// isLong reports whether s weighs at least MinLength: a Han character
// carries about as much as a short word, so it counts two.
func isLong(s string) bool {
	n := 0
	for _, r := range s {
		switch {
		case unicode.IsSpace(r) || isInvisible(r):
		case chars.IsCJK(r):
			n += 2
		default:
			n++
		}
		if n >= MinLength {
			return true
		}
	}
	return false
}

// lower lowercases s, skipping the case tables for ASCII and Han text,
// and without allocating when nothing changes (most Chinese messages).
func lower(s string) string {
	for _, r := range s {
		if lowerRune(r) != r {
			return strings.Map(lowerRune, s)
		}
	}
	return s
}

func lowerRune(r rune) rune {
	switch {
	case r >= 'A' && r <= 'Z':
		return r + 'a' - 'A'
	case r < utf8.RuneSelf || r >= 0x3000 && r <= 0x9FFF:
		return r
	}
	return unicode.ToLower(r)
}

// clip keeps the head and the tail of a long message for the trigger
// rules: references and questions sit at the start or the end of a long
// paste, and scanning all of it would cost time on every turn for a
// message the default rule retrieves for anyway.
func clip(s string) string {
	if len(s) <= maxScan {
		return s
	}
	return chars.CutBytes(s, maxScan/2) + " " + chars.TailBytes(s, maxScan/2)
}

// maxScan bounds, in bytes, how much of a message the trigger rules read.
const maxScan = 1024

// maxAck bounds, in bytes, a message that can be all acknowledgements.
const maxAck = 128

// isAck reports whether s is nothing but acknowledgements, separated by
// spaces, punctuation or emoji modifiers.
func isAck(s string) bool {
	matched := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isAckSeparator(r) {
			i += n
			continue
		}
		m := ackPrefix(s[i:])
		if m == 0 {
			return false
		}
		i += m
		matched = true
	}
	return matched
}

func isAckSeparator(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r) || isInvisible(r) || unicode.Is(unicode.Mn, r) ||
		unicode.IsSymbol(r) && (r < 0x2100 || r >= 0xFF00 && r <= 0xFFEF) ||
		r >= 0x1F3FB && r <= 0x1F3FF // skin-tone modifiers
}

// ackPrefix returns the length of the acknowledgement s starts with, or 0,
// ignoring case. A Latin acknowledgement must end at a word boundary ("no"
// is not "now").
func ackPrefix(s string) int {
	for _, a := range acks {
		if len(s) < len(a) || !strings.EqualFold(s[:len(a)], a) {
			continue
		}
		if isASCIIAlnum(a[len(a)-1]) && len(s) > len(a) && isASCIIAlnum(s[len(a)]) {
			continue
		}
		return len(a)
	}
	return 0
}

// englishWords turns lowercased text into " word word … ": letters, digits
// and apostrophes make words, anything else separates them, so a phrase is
// found with strings.Contains(words, " did i ").
func englishWords(lower string) string {
	b := make([]byte, 0, len(lower)+2)
	b = append(b, ' ')
	for i := 0; i < len(lower); {
		c := lower[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '\'':
			b = append(b, c)
			i++
			continue
		case strings.HasPrefix(lower[i:], "’"):
			b = append(b, '\'')
			i += len("’")
			continue
		}
		if b[len(b)-1] != ' ' {
			b = append(b, ' ')
		}
		if c < utf8.RuneSelf {
			i++
		} else {
			_, n := utf8.DecodeRuneInString(lower[i:])
			i += n
		}
	}
	if b[len(b)-1] != ' ' {
		b = append(b, ' ')
	}
	return string(b)
}

// MentionedProject returns the first of projects that query names as a
// word (so project "go" is not found in "google"), or "".
func MentionedProject(query string, projects []string) string {
	return matchProject(strings.ToLower(query), projects)
}

// matchProject returns the first known project named in lower.
func matchProject(lower string, projects []string) string {
	for _, p := range projects {
		name := strings.ToLower(strings.TrimSpace(p))
		if name == "" {
			continue
		}
		for off := 0; off < len(lower); {
			i := strings.Index(lower[off:], name)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(name)
			if wordEdge(lower, start, end, name) {
				return strings.TrimSpace(p)
			}
			_, n := utf8.DecodeRuneInString(lower[start:])
			off = start + n
		}
	}
	return ""
}

// wordEdge reports whether name, found at lower[start:end], is not part of
// a longer Latin word or number.
func wordEdge(lower string, start, end int, name string) bool {
	if isASCIIAlnum(name[0]) && start > 0 && isASCIIAlnum(lower[start-1]) {
		return false
	}
	if isASCIIAlnum(name[len(name)-1]) && end < len(lower) && isASCIIAlnum(lower[end]) {
		return false
	}
	return true
}

func isQuestion(lower, words string) bool {
	if strings.Contains(lower, "？") {
		return true
	}
	// A '?' followed by a letter or digit is a URL's query string.
	for i := 0; i < len(lower); i++ {
		if lower[i] == '?' && (i+1 == len(lower) || !isASCIIAlnum(lower[i+1])) {
			return true
		}
	}
	trimmed := strings.TrimRightFunc(lower, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) || isInvisible(r)
	})
	for _, end := range questionEndZH {
		if strings.HasSuffix(trimmed, end) {
			return true
		}
	}
	for _, w := range whWords {
		if strings.HasPrefix(words, w) {
			return true
		}
	}
	return false
}
