package rules

import (
	"os"
	"strings"
	"testing"

	"github.com/engramhq/engram/events"
)

// TestDocExample keeps the example rule authors read in doc.go valid.
func TestDocExample(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(src), "A full example:\n//\n")
	if !ok {
		t.Fatal("doc.go has no full example")
	}
	var yaml strings.Builder
	for line := range strings.Lines(after) {
		if line == "//\n" {
			yaml.WriteString("\n") // a blank line inside the example
			continue
		}
		text, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			break
		}
		yaml.WriteString(text)
	}
	rules, err := Parse("doc.go", []byte(yaml.String()), events.Types())
	if err != nil {
		t.Fatalf("the example in doc.go does not parse:\n%v\n%s", err, yaml.String())
	}
	if got, want := names(rules), "consolidate_on_session_end,weekly_dedupe"; got != want {
		t.Fatalf("example rules %s, want %s", got, want)
	}
	ev := event(t, events.TypeSessionEnded, map[string]any{"message_count": 4, "reason": "user_closed"})
	if ok, why := rules[0].When.Eval(ev); !ok {
		t.Fatalf("example rule does not fire: %s", why)
	}
}
