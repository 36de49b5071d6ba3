package rules

import (
	"fmt"
	"strings"
)

// Error is one problem in a rule file, at the line and column (both from 1)
// of the YAML node it concerns. Line is 0 when the problem is the file as
// a whole (it cannot be read); Col is 0 when only the line is known.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e Error) Error() string {
	switch {
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Col == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
}

// Errors is every problem found in a load, in file and line order. Load and
// Parse return it (as error) so that a rule author sees all the mistakes
// at once rather than one per attempt.
type Errors []Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// err returns es as an error, or nil: a nil Errors in an error interface is
// not a nil error.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// suggest returns " (did you mean x?)" for the candidate closest to s, when
// one is close enough to be a likely typo, or "".
func suggest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := distance(strings.ToLower(s), c)
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(1, len(s)/3) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// distance is the edit distance between a and b, in bytes (the names
// compared are ASCII), counting a swap of two neighbours as one edit:
// "decya" is one typo away from "decay".
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		// A name this long is no typo of ours; skip the quadratic work.
		return max(len(a), len(b))
	}
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
