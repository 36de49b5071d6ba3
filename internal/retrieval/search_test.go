package retrieval

import (
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// In /v1/search a turn that says nothing ("Thanks for the update.") comes
// after one that says something, though its few words rank it first, at
// any limit: the check for filler stops early only where nothing after it
// could enter the list.
func TestSearchFillerAfterEvidence(t *testing.T) {
	f := newFixture(t)
	f.turns(user, "a", 3*time.Hour, "Thanks for the update.")
	f.turns(user, "b", 2*time.Hour, "The update moved billing to Postgres overnight, and the invoices now come from the new cluster.")
	e := NewEngine(f.st)
	e.Now = func() time.Time { return f.now }
	for _, limit := range []int{1, 2, 10} {
		res, err := e.Search(t.Context(), memory.SearchQuery{Scope: user, Text: "update", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res {
			got = append(got, r.Content)
		}
		if len(got) == 0 || got[0] != "The update moved billing to Postgres overnight, and the invoices now come from the new cluster." {
			t.Errorf("limit %d: results %q, want the billing turn first", limit, got)
		}
		if want := min(limit, 2); len(got) != want {
			t.Errorf("limit %d: %d results, want %d", limit, len(got), want)
		}
	}
}
