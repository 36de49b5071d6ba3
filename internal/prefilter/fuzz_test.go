package prefilter

import (
	"strings"
	"testing"
)

func FuzzShouldRetrieve(f *testing.F) {
	for _, m := range benchMessages {
		f.Add(m, "engram")
	}
	f.Fuzz(func(t *testing.T, query, project string) {
		d := ShouldRetrieve(query, []string{project, "北极星"})
		if d.Reason == "" {
			t.Fatalf("ShouldRetrieve(%q) has no reason", query)
		}
		if got, want := strings.HasPrefix(d.Reason, RuleSkip+":"), !d.Retrieve; got != want {
			t.Fatalf("ShouldRetrieve(%q) = %+v: skip reason %v, want %v", query, d, got, want)
		}
		if again := ShouldRetrieve(query, []string{project, "北极星"}); again != d {
			t.Fatalf("ShouldRetrieve(%q) gave %+v then %+v", query, d, again)
		}
		if rule, what, ok := strings.Cut(d.Reason, ":"); ok && rule == RuleProject &&
			!strings.Contains(strings.ToLower(query), strings.ToLower(what)) {
			t.Fatalf("ShouldRetrieve(%q) = %+v names a project the query does not hold", query, d)
		}
	})
}
