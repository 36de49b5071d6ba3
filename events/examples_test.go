package events_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram/events"
)

// The events in examples/ (docs/cli.md tries rules on them) are what
// ingest accepts.
func TestExamplesAreValid(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("examples/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		e, _, err := events.DecodeStructured(b, 0)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got, want := e.Type()+".json", filepath.Base(p); got != want {
			t.Errorf("%s holds a %s event; name it for its type", p, e.Type())
		}
	}
}
