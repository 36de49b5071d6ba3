package ruleextract

import (
	"testing"
	"unicode/utf8"
)

// FuzzExtract checks the promises Extract makes on any input: it never
// panics, and every candidate has a valid kind and category, a non-empty
// subject, predicate and content in valid UTF-8, and a confidence and
// importance in [0, 1]. The seed corpus is in testdata/fuzz/FuzzExtract.
func FuzzExtract(f *testing.F) {
	f.Fuzz(func(t *testing.T, role, content, project string) {
		in := Input{Role: role, Content: content, Project: project, ToolCalls: []ToolCall{{Name: "bash", Input: content}}}
		got := Extract(in)
		if len(got) > maxCandidates {
			t.Fatalf("got %d candidates, cap is %d", len(got), maxCandidates)
		}
		for _, c := range got {
			if !c.Kind.Valid() || !c.Category.Valid() {
				t.Fatalf("invalid kind/category %q/%q in %+v", c.Kind, c.Category, c)
			}
			if c.Subject == "" || c.Predicate == "" || c.Content == "" {
				t.Fatalf("empty field in %+v", c)
			}
			for _, s := range []string{c.Subject, c.Predicate, c.Content, c.Project} {
				if !utf8.ValidString(s) {
					t.Fatalf("invalid UTF-8 %q in %+v", s, c)
				}
			}
			if c.Confidence < 0 || c.Confidence > 1 || c.Importance < 0 || c.Importance > 1 {
				t.Fatalf("confidence %v / importance %v out of [0,1] in %+v", c.Confidence, c.Importance, c)
			}
			if _, ok := specs[c.Predicate]; !ok {
				t.Fatalf("predicate %q is not in the vocabulary", c.Predicate)
			}
		}
	})
}
