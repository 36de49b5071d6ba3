package retrieval

import (
	"testing"
	"time"

	"github.com/engramhq/engram/internal/textseg"
)

// The turn after a question is its answer, and seldom repeats the
// question's words: it inherits more from a question than the turn after
// a statement does (issue 9: answers follow the turn that holds the
// query's words).
func TestAnswerFollowsQuestion(t *testing.T) {
	f := newFixture(t)
	f.turns(user, "asked", 48*time.Hour, "What was the poetry reading about?", "It was about trans people telling their own stories.")
	f.turns(user, "told", 24*time.Hour, "The poetry reading was long.", "I had pasta for dinner after that.")
	turns, err := RankTurns(t.Context(), f.st, user, textseg.Understand("What was the poetry reading about?"), DefaultTurnOptions())
	if err != nil {
		t.Fatal(err)
	}
	score := map[string]float64{}
	for _, tr := range turns {
		if tr.TurnIndex == 1 {
			score[tr.SessionID] = tr.Score
		}
	}
	if score["asked"] <= score["told"] {
		t.Fatalf("scores of the second turns %v: want the answer to the question above the turn after a statement", score)
	}
}

// A turn that ends by asking holds what was asked, not what was told: it
// ranks below a turn that says the same words.
func TestAskingTurnRanksBelowTelling(t *testing.T) {
	f := newFixture(t)
	f.turns(user, "asks", 48*time.Hour, "So you went to the pottery class on Friday?")
	f.turns(user, "tells", 24*time.Hour, "So you went to the pottery class on Friday.")
	turns, err := RankTurns(t.Context(), f.st, user, textseg.Understand("pottery class"), DefaultTurnOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) < 2 || turns[0].SessionID != "tells" {
		t.Fatalf("turns %+v: want the one that tells first", turns)
	}
}
