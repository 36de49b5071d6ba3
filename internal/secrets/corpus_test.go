package secrets_test

import (
	"testing"

	"github.com/engramhq/engram/internal/secrets"
	"github.com/engramhq/engram/internal/secrets/corpus"
)

// The corpus bar: precision and recall of at least 0.95 each, and masking
// a second time changes nothing.
func TestCorpus(t *testing.T) {
	t.Parallel()
	var m secrets.Masker
	mask := func(s string) string { out, _ := m.Mask(s); return out }
	if n, k := len(corpus.Secrets()), len(corpus.NotSecrets()); n < 100 || k < 100 {
		t.Fatalf("corpus has %d secrets and %d look-alikes, want at least 100 of each", n, k)
	}
	s := corpus.Evaluate(mask)
	for _, l := range s.Misses {
		t.Log("missed:", l)
	}
	for _, l := range s.FalseAlarms {
		t.Log("false alarm:", l)
	}
	t.Logf("precision %.3f, recall %.3f (TP %d, FN %d, FP %d, TN %d)", s.Precision(), s.Recall(), s.TP, s.FN, s.FP, s.TN)
	if p, r := s.Precision(), s.Recall(); p < 0.95 || r < 0.95 {
		t.Errorf("precision %.3f, recall %.3f; want ≥ 0.95 each (TP %d, FN %d, FP %d)", p, r, s.TP, s.FN, s.FP)
	}
	for _, c := range append(corpus.Secrets(), corpus.NotSecrets()...) {
		once := mask(c.Text)
		if twice := mask(once); twice != once {
			t.Errorf("line %d: masking twice changed %q to %q", c.Line, once, twice)
		}
	}
}
