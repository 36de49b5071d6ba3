package retrieval

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/textseg"
)

// The turn after a question is its answer, and seldom repeats the
// question's words: it inherits more from a question than the turn after
// a statement does (issue 9: answers follow the turn that holds the
// query's words).
func TestAnswerFollowsQuestion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "asked", 48*time.Hour, "What was the poetry reading about?", "It was about trans people telling their own stories.")
	f.turns(user, "told", 24*time.Hour, "The poetry reading was long.", "I had pasta for dinner after that.")
	turns, err := rankTurns(t.Context(), f.st, user, textseg.Understand("What was the poetry reading about?"), textseg.Query{}, nil, DefaultTurnOptions())
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
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "asks", 48*time.Hour, "So you went to the pottery class on Friday?")
	f.turns(user, "tells", 24*time.Hour, "So you went to the pottery class on Friday.")
	turns, err := rankTurns(t.Context(), f.st, user, textseg.Understand("pottery class"), textseg.Query{}, nil, DefaultTurnOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) < 2 || turns[0].SessionID != "tells" {
		t.Fatalf("turns %+v: want the one that tells first", turns)
	}
}

// A session's evidence counts only its best hits: one that repeats a
// query word in many turns does not outweigh one with a few turns that
// match well (issue 9: a question is usually about one conversation).
func TestSessionEvidenceCountsBestHits(t *testing.T) {
	t.Parallel()
	keys := []memory.TurnKey{{SessionID: "trip", TurnIndex: 0}, {SessionID: "trip", TurnIndex: 5}, {SessionID: "trip", TurnIndex: 9}}
	text := []float64{1, 0.9, 0.8}
	for i := range 40 {
		keys = append(keys, memory.TurnKey{SessionID: "gym", TurnIndex: i})
		text = append(text, 0.15)
	}
	s := sessionEvidence(keys, text, DefaultTurnOptions().SessionTop)
	if s["trip"] != 1 || s["gym"] >= s["trip"] {
		t.Fatalf("session evidence %v: want the session of the three strong hits strongest", s)
	}
}

// The session that holds every word of a question, spread over its turns,
// is the one the question is about: its turn that answers ranks above one
// that matches as well in a session repeating just one of the words.
func TestSessionCoveringTheQuestionFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "vet", 48*time.Hour, "We took Luna to the vet this morning.", "Oh no, what happened?", "She was limping after the park.", "Poor girl.", "Is she better now?", "Nothing broken, but her leg needs two weeks of rest.")
	f.turns(user, "beach", 24*time.Hour, "Luna loved the beach today.", "Luna chased every gull she saw.", "Then Luna swam out to the buoy!", "So cute.", "It was a long day.", "Nothing broken, but my leg is sore from all that running.")
	rank := func(opt TurnOptions) (vet, beach int) {
		turns, err := rankTurns(t.Context(), f.st, user, textseg.Understand("What did the vet say about Luna's leg?"), textseg.Query{}, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		vet, beach = -1, -1
		for i, tr := range turns {
			switch {
			case tr.TurnIndex != 5:
			case tr.SessionID == "vet":
				vet = i
			case tr.SessionID == "beach":
				beach = i
			}
		}
		if vet < 0 || beach < 0 {
			t.Fatalf("turns %+v: want both leg turns among them", turns)
		}
		return vet, beach
	}
	if vet, beach := rank(DefaultTurnOptions()); vet > beach {
		t.Fatalf("the vet's leg turn ranks %d, the beach's %d: want the vet's first", vet, beach)
	}
	// The beach's repeated name outweighs without the sessions' cover.
	opt := DefaultTurnOptions()
	opt.SessionCover = 0
	if vet, beach := rank(opt); vet < beach {
		t.Fatalf("without the sessions' cover the vet's leg turn ranks %d, the beach's %d: the case no longer needs the cover", vet, beach)
	}
}

// An answer a follow-up away from its question covers the question with
// it: the turn whose window holds every word asked ranks above turns that
// hold one of them.
func TestWindowReachesPastAFollowUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "trip", 72*time.Hour, "Did you see the meteor shower on the camping trip?", "Which night?", "The clear one. I felt tiny, in awe of the universe.", "Beautiful.")
	f.turns(user, "tv", 48*time.Hour, "I watched a meteor shower on TV.", "Sounds relaxing.", "It was. I felt sleepy by the end.", "Ha.")
	f.turns(user, "rain", 24*time.Hour, "A rain shower ruined our picnic.", "Oh no!", "We felt so silly, soaked to the bone.", "Ha.")
	turns, err := rankTurns(t.Context(), f.st, user, textseg.Understand("How did you feel about the meteor shower on the camping trip?"), textseg.Query{}, nil, DefaultTurnOptions())
	if err != nil {
		t.Fatal(err)
	}
	answer := slices.IndexFunc(turns, func(tr ScoredTurn) bool { return tr.SessionID == "trip" && tr.TurnIndex == 2 })
	if answer < 0 {
		t.Fatalf("turns %+v: want the answer among them", turns)
	}
	for i, tr := range turns[:answer] {
		if tr.SessionID != "trip" {
			t.Fatalf("turn %d of %q ranks %d, the answer %d: want the trip's turns first", tr.TurnIndex, tr.SessionID, i, answer)
		}
	}
}

// The best hits reach two turns away: an answer that comes after a
// follow-up ("What was it about?" — "Which one?" — "The one in May…")
// still inherits from the question, though it shares none of its words.
func TestBestHitsReachTwoTurns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "s", time.Hour, "Did you go to the poetry reading on Friday?", "Which one?", "The one downtown: it was about trans people telling their own stories.", "Sounds good.")
	f.turns(user, "other", 2*time.Hour, "Lunch was fine.")
	turns, err := rankTurns(t.Context(), f.st, user, textseg.Understand("Did you go to the poetry reading?"), textseg.Query{}, nil, DefaultTurnOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range turns {
		if tr.SessionID == "s" && tr.TurnIndex == 2 {
			if tr.Neighbor <= 0 {
				t.Fatalf("turn two after the question: neighbour score %v, want > 0", tr.Neighbor)
			}
			return
		}
	}
	t.Fatalf("turns %+v: want the turn two after the question among them", turns)
}

var _ TurnWindowReader = (*sqlite.Store)(nil)

// A question that names a day is about what was said that day, even where
// none of its words were (issue 9: time references among the cues): the
// session of that day opens with its news, and that opener is recalled
// among the best, though other days said the question's words.
func TestTurnsOfTheDayNamed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	day := time.Date(2022, 11, 9, 15, 0, 0, 0, time.UTC)
	f.turns(user, "that-day", f.now.Sub(day), "Hey, what a wild week! My tournament got pushed back, so I tried out some cooking: homemade coconut ice cream.", "Wow, that looks amazing!")
	f.turns(user, "later", f.now.Sub(day.AddDate(0, 1, 0)), "Any plans for the weekend?", "Not really, maybe a dish with friends.")
	f.turns(user, "earlier", f.now.Sub(day.AddDate(0, -1, 0)), "I love my turtles.", "That dish of theirs is so cute.")
	query := "What dish did Nate make on 9 November, 2022?"
	tw, err := askedWindow(t.Context(), f.st, user, query, f.now, SeedWeights().Time)
	if err != nil {
		t.Fatal(err)
	}
	turns, err := rankTurns(t.Context(), f.st, user, textseg.Understand(query), textseg.Query{}, tw, DefaultTurnOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range turns[:min(3, len(turns))] {
		if tr.SessionID == "that-day" && tr.TurnIndex == 0 {
			return
		}
	}
	t.Fatalf("turns %+v: want the opener of 9 November among the first three", turns)
}

// A question for several things ("what activities…") finds them in several
// conversations: past the best few, one session's neighbouring turns give
// way to the next best of another session (issue 9: multi-hop evidence is
// spread over sessions).
func TestListQuestionSpreadsOverSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "pottery", 72*time.Hour,
		"Pottery class was fun, we made bowls in the pottery class today.",
		"Pottery sounds fun! What did you make in the pottery class?",
		"Bowls, at the pottery class, and a cup: pottery is my thing.",
		"The pottery class teacher liked the bowls.",
		"More pottery next week at the class.",
		"Pottery class again on Friday!",
		"The pottery class is my favourite.",
		"We fired the pottery class bowls.",
		"Pottery class, pottery class, always the pottery class.")
	f.turns(user, "camping", 48*time.Hour, "We went camping with the kids and ate from the bowls we made at pottery.")
	rank := func(query string) int {
		turns, err := rankTurns(t.Context(), f.st, user, textseg.Understand(query), textseg.Query{}, nil, DefaultTurnOptions())
		if err != nil {
			t.Fatal(err)
		}
		for i, tr := range turns {
			if tr.SessionID == "camping" {
				return i
			}
		}
		return len(turns)
	}
	many, one := rank("What bowls and cups did we make in the pottery class?"), rank("What bowl did we make in the pottery class?")
	if many >= one || many > 5 {
		t.Fatalf("the camping turn ranks %d for a list question, %d for a question for one thing: want it higher for the list, among the first six", many, one)
	}
}
