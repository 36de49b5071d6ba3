package extractbench

import (
	"path/filepath"
	"testing"
)

// The rules meet issue 10's goal on the dev split they are tuned on, in
// each language; a change that loses it fails here. The test split is only
// reported (make bench-extract), never asserted: it is not tuned on.
func TestRulesMeetTheGoalOnDev(t *testing.T) {
	turns, err := Load(filepath.Join("..", "..", "testdata", "extract", "dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Score(t.Context(), turns, Rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"zh", "en"} {
		c := rep.Lang[lang]
		if c.Precision() < 0.90 || c.Recall() < 0.70 {
			t.Errorf("%s: precision %.2f, recall %.2f on dev; goal ≥ 0.90 and ≥ 0.70", lang, c.Precision(), c.Recall())
		}
	}
}
