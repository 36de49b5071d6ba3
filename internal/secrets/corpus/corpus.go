// Package corpus is the measured bar of secret masking: a few hundred
// texts with a secret in them (each marked) and as many look-alikes that
// are not secrets (commit ids, hashes, UUIDs, code, prose about keys), with
// the precision and recall of any masker on them.
//
// The texts live in testdata/ and are embedded here, not in the secrets
// package, so the engram binary does not carry them: only tests and
// engram-bench import this package. Every key in them is random and fake.
package corpus

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed testdata/secrets.txt testdata/notsecrets.txt
var files embed.FS

// Case is one text; Secret is empty for a look-alike.
type Case struct {
	Line   int
	Text   string
	Secret string
	// Before and After are the text around the secret, which masking must
	// keep as it is.
	Before, After string
}

// Secrets returns the texts that hold a secret.
func Secrets() []Case { return load("testdata/secrets.txt", true) }

// NotSecrets returns the look-alikes.
func NotSecrets() []Case { return load("testdata/notsecrets.txt", false) }

func load(name string, marked bool) []Case {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	var out []Case
	for i, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.ReplaceAll(line, `\n`, "\n")
		c := Case{Line: i + 1, Text: line}
		if marked {
			before, rest, ok1 := strings.Cut(line, "⟦")
			secret, after, ok2 := strings.Cut(rest, "⟧")
			if !ok1 || !ok2 || secret == "" {
				panic(fmt.Sprintf("%s:%d: no ⟦secret⟧", name, i+1))
			}
			c = Case{Line: i + 1, Text: before + secret + after, Secret: secret, Before: before, After: after}
		}
		out = append(out, c)
	}
	return out
}

// Score is how a masker did on the corpus.
type Score struct {
	TP, FN, FP, TN int
	// Misses and FalseAlarms describe what went wrong, one line each.
	Misses, FalseAlarms []string
}

// Precision is TP / (TP + FP).
func (s Score) Precision() float64 {
	if s.TP+s.FP == 0 {
		return 0
	}
	return float64(s.TP) / float64(s.TP+s.FP)
}

// Recall is TP / (TP + FN).
func (s Score) Recall() float64 {
	if s.TP+s.FN == 0 {
		return 0
	}
	return float64(s.TP) / float64(s.TP+s.FN)
}

// Evaluate runs mask over the corpus. A secret counts as found when no
// part of it of 8 bytes or more is left and the text around it is intact
// (a masker that eats the sentence around a key has not done its job); a
// look-alike counts as a false alarm when mask changes it at all.
func Evaluate(mask func(string) string) Score {
	var s Score
	for _, c := range Secrets() {
		got := mask(c.Text)
		switch {
		case leaks(got, c.Secret):
			s.FN++
			s.Misses = append(s.Misses, fmt.Sprintf("secrets.txt:%d: left %q", c.Line, got))
		case !strings.HasPrefix(got, c.Before) || !strings.HasSuffix(got, c.After):
			s.FP++
			s.FalseAlarms = append(s.FalseAlarms, fmt.Sprintf("secrets.txt:%d: text around the secret changed: %q", c.Line, got))
		default:
			s.TP++
		}
	}
	for _, c := range NotSecrets() {
		if got := mask(c.Text); got != c.Text {
			s.FP++
			s.FalseAlarms = append(s.FalseAlarms, fmt.Sprintf("notsecrets.txt:%d: %q → %q", c.Line, c.Text, got))
		} else {
			s.TN++
		}
	}
	return s
}

// leaks reports whether out still holds the secret, or 8 bytes of it in a
// row (a masker that keeps "the last four" is fine; one that keeps half
// is not).
func leaks(out, secret string) bool {
	const window = 8
	if len(secret) <= window {
		return strings.Contains(out, secret)
	}
	for i := 0; i+window <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+window]) {
			return true
		}
	}
	return false
}
