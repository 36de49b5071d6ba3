package dedupe

import (
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

// Issue 24's paraphrase pairs have one key; facts that differ in what
// they say (a negation, another number, another noun) do not come near.
func TestKeyParaphrases(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"The user has two cats", "The user has 2 cats", true},
		{"The user plays tennis on weekends", "The user plays tennis at weekends", true},
		{"The user drinks coffee every morning", "The user drinks coffee mornings", true},
		{"The user currently lives in Lisbon.", "the user lives in lisbon", true},
		{"The user has two cats", "The user has two dogs", false},
		{"The user has 2 cats", "The user has 3 cats", false},
		{"The user drinks coffee", "The user does not drink coffee", false},
		{"The user drinks coffee", "The user doesn't drink coffee", false},
		{"用户喜欢喝咖啡", "用户不喜欢喝咖啡", false},
		{"The user plays tennis on weekends", "The user plays golf on weekends", false},
	} {
		sim := memory.Similarity(Key(c.a), Key(c.b))
		if got := sim > 0.9; got != c.same {
			t.Errorf("%q ~ %q: similarity of keys %q, %q = %.2f, want same=%v", c.a, c.b, Key(c.a), Key(c.b), sim, c.same)
		}
	}
}
