package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hand-written recall sets hold what FORMAT.md promises (check): a
// slip in a file written by hand would otherwise only show as a lower
// score.
func TestRecallSetsAreWellFormed(t *testing.T) {
	for _, split := range []string{"dev", "test"} {
		dir := filepath.Join("..", "..", "testdata", "recall", split)
		sets, err := LoadRecallSets(dir)
		if err != nil {
			t.Error(err)
			continue
		}
		xs, err := LoadCrossSets(dir, sets)
		if err != nil {
			t.Error(err)
		}
		if len(xs) == 0 {
			t.Errorf("%s: no cross-language sets in xlang/", split)
		}
	}
}

// A set that breaks the format is refused with every slip named, not
// loaded to fail at ingest or to score low.
func TestRecallSetSlipsAreNamed(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recall", "dev", "en-dave.json"))
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(src), `"category": "identity"`, `"category": "context"`, 1)
	broken = strings.Replace(broken, `"gold": [`, `"gold": ["s99#0",`, 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "en-dave.json"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadRecallSets(dir)
	if err == nil {
		t.Fatal("a broken set was loaded")
	}
	for _, want := range []string{"en-dave.json", "category \"context", "gold s99#0 is neither a memory nor a turn"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
