package llmextract

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks the promises Parse makes on any reply: it never panics,
// returns candidates only without an error, at most maxItems of them, each
// with a valid kind and category, non-empty subject, predicate and content,
// valid UTF-8 within the byte caps, and scores in [0, 1]. The seed corpus in
// testdata/fuzz/FuzzParse holds replies as real models write them.
func FuzzParse(f *testing.F) {
	f.Add(`{"facts":[` + tea + `]}`)
	f.Fuzz(func(t *testing.T, reply string) {
		got, _, err := Parse(reply)
		if err != nil && got != nil {
			t.Fatalf("candidates returned with error %v", err)
		}
		if len(got) > maxItems {
			t.Fatalf("%d candidates, cap %d", len(got), maxItems)
		}
		for _, c := range got {
			if !c.Kind.Valid() || !c.Category.Valid() {
				t.Fatalf("invalid kind/category %q/%q in %+v", c.Kind, c.Category, c)
			}
			if c.Subject == "" || c.Predicate == "" || c.Content == "" {
				t.Fatalf("empty field in %+v", c)
			}
			for _, s := range []string{c.Subject, c.Predicate, c.Content, c.Project, c.Topic} {
				if !utf8.ValidString(s) {
					t.Fatalf("invalid UTF-8 %q in %+v", s, c)
				}
			}
			if len(c.Content) > maxContentBytes || len(c.Subject) > maxSubjectBytes || len(c.Predicate) > maxPredicateBytes ||
				len(c.Project) > maxLabelBytes || len(c.Topic) > maxLabelBytes {
				t.Fatalf("field over its cap in %+v", c)
			}
			if !(c.Importance >= 0 && c.Importance <= 1 && c.Confidence >= 0 && c.Confidence <= 1) {
				t.Fatalf("importance %v / confidence %v out of [0,1]", c.Importance, c.Confidence)
			}
		}
	})
}

// FuzzPrompt checks that no turn text can break the prompt's structure:
// the data block is opened and closed exactly once, the prompt is valid
// UTF-8, and it stays within its token budget whenever more than the
// newest turn was sent. The seed corpus is in testdata/fuzz/FuzzPrompt.
func FuzzPrompt(f *testing.F) {
	f.Fuzz(func(t *testing.T, content, toolInput, toolResult string, budget int) {
		turns := []Turn{
			{Index: 1, Role: "user", Content: content},
			{Index: 2, Role: "assistant", Content: content, ToolCalls: []ToolCall{{Name: "bash", Input: toolInput}},
				ToolResults: []ToolResult{{Content: toolResult}}},
			{Index: 3, Role: "user", Content: toolResult},
		}
		budget = int(uint(budget)%8000) + 1
		msgs, omitted := build(turns, []Known{{Subject: content, Predicate: toolInput, Content: toolResult}}, Options{Summary: content, MaxInputTokens: budget})
		if msgs == nil {
			return
		}
		user := msgs[1].Content
		if !utf8.ValidString(user) {
			t.Fatalf("prompt is not valid UTF-8")
		}
		lower := strings.ToLower(user)
		if strings.Count(lower, "<data") != 1 || strings.Count(lower, "</data") != 1 {
			t.Fatalf("data tags appear more than once:\n%s", user)
		}
		if len(omitted) < len(turns)-1 {
			if total := EstimateTokens(msgs[0].Content) + EstimateTokens(user); total > budget {
				t.Fatalf("prompt is %d tokens, budget %d", total, budget)
			}
		}
	})
}
