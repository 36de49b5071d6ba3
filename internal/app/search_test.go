package app

import (
	"testing"
)

// GET /v1/search ranks turns as /v1/context does (issue 9, item 7: every
// path that recalls reads the query the same way): the answer after a
// question ranks first though it shares none of the question's words.
func TestSearchRanksTurnsAsContext(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	r := postBatch(t, a,
		turnEvent("q-0", "ana", "s1", 0, "user", "I took Monday off, it was a long week."),
		turnEvent("q-1", "ana", "s1", 1, "assistant", "What did you make at the pottery class?"),
		turnEvent("q-2", "ana", "s1", 2, "user", "A blue bowl, and a cup for my mum."),
		turnEvent("q-3", "ana", "s1", 3, "assistant", "Lovely. Shall we plan the trip to Lisbon now?"),
		turnEvent("q-4", "ana", "s1", 4, "user", "Yes, flights first, then the hotel."),
	)
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
	const q = "What did Ana make at the pottery class?"
	ctx := contextHTTP(t, a, map[string]any{"user": "ana", "query": q, "force": true})
	if len(ctx.Blocks.Turns) == 0 || ctx.Blocks.Turns[0].TurnIndex == nil || *ctx.Blocks.Turns[0].TurnIndex != 2 {
		t.Fatalf("context turns %+v: want the answer (turn 2) first", ctx.Blocks.Turns)
	}
	var turns []searchHit
	for _, h := range searchHTTP(t, a, "default", "ana", q) {
		if h.Kind == "turn" {
			turns = append(turns, h)
		}
	}
	if len(turns) == 0 || turns[0].ID != ctx.Blocks.Turns[0].ID {
		t.Fatalf("search turns %+v: want %s (the answer, first in /v1/context) first", turns, ctx.Blocks.Turns[0].ID)
	}
}
