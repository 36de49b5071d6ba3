package app

import (
	"testing"
)

// Issue 10: identity, rules and strong preferences reach the core profile
// (tier 1) when they are written, not at the weekly refresh; a passing
// like does not.
func TestCoreProfileAtWrite(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	mustAccept(t, postBatch(t, a,
		turnEvent("p-0", "mei", "s1", 0, "user", "我叫林梅。以后回答都用中文。"),
		turnEvent("p-1", "mei", "s1", 1, "user", "I prefer dark mode. I like hiking."),
		endEvent("p-e", "mei", "s1", 2)))
	waitSettled(t, a)
	tiers := map[string]int{}
	for _, m := range listMemories(t, a, "mei", "") {
		tiers[m.Predicate+" "+m.Content] = m.Tier
	}
	for key, want := range map[string]int{
		"name 用户叫林梅":                     1,
		"rule 规则：以后回答都用中文":               1,
		"prefers User prefers dark mode": 1,
		"likes User likes hiking":        2,
	} {
		if got, ok := tiers[key]; !ok || got != want {
			t.Errorf("%q: tier %d (found %v), want %d; all: %v", key, got, ok, want, tiers)
		}
	}
}
