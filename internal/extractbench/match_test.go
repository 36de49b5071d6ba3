package extractbench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

func cand(kind memory.Kind, subject, pred, content string) memory.Candidate {
	return memory.Candidate{Kind: kind, Subject: subject, Predicate: pred, Content: content}
}

// The cases are data (testdata/matches.json), one a line: a gold memory, a
// candidate, and whether the candidate is that memory.
func TestMatches(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "matches.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name      string           `json:"name"`
		Gold      Gold             `json:"gold"`
		Candidate memory.Candidate `json:"candidate"`
		Want      bool             `json:"want"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 13 {
		t.Fatalf("%d cases in matches.json", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if got := Matches(tc.Gold, tc.Candidate); got != tc.Want {
				t.Fatalf("Matches(%+v, %q)=%v, want %v", tc.Gold, tc.Candidate.Content, got, tc.Want)
			}
		})
	}
}

func TestPairIsOneToOne(t *testing.T) {
	gold := []Gold{{Kind: "preference", Subject: "user", Predicate: "likes", Value: "Go"}, {Kind: "preference", Subject: "user", Predicate: "likes", Value: "Go"}}
	one := []memory.Candidate{cand(memory.KindPreference, "user", "likes", "User likes Go")}
	goldTo, taken := Pair(gold, one)
	if goldTo[0] != 0 || goldTo[1] != -1 || !taken[0] {
		t.Fatalf("Pair=%v %v, want [0 -1] [true]: one candidate matches one gold memory", goldTo, taken)
	}
}

func TestTokens(t *testing.T) {
	if got, want := strings.Join(Tokens("Python 3.10, next.js; 我住"), "|"), "python|3.10|next.js|我|住"; got != want {
		t.Fatalf("Tokens=%q, want %q", got, want)
	}
}

func TestScoreCounts(t *testing.T) {
	turns := []Turn{
		{ID: "a", Lang: "en", Role: "user", Content: "My name is Ana.", Gold: []Gold{{Kind: "identity", Subject: "user", Predicate: "name", Value: "Ana"}}},
		{ID: "b", Lang: "en", Role: "user", Content: "My wife likes sushi.", Gold: nil},
	}
	rep, err := Score(t.Context(), turns, func(_ context.Context, tu Turn) ([]memory.Candidate, error) {
		return []memory.Candidate{cand(memory.KindIdentity, "user", "name", "User's name is Ana")}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Lang["en"]
	if c.Gold != 1 || c.Found != 2 || c.Hits != 1 {
		t.Fatalf("counts=%+v, want gold 1, found 2, hits 1", c)
	}
	if got, want := c.Precision(), 0.5; got != want {
		t.Fatalf("precision=%v, want %v", got, want)
	}
	if len(rep.Misses) != 1 || rep.Misses[0].Turn.ID != "b" {
		t.Fatalf("misses=%+v, want turn b's extra candidate", rep.Misses)
	}
}

// The benchmark files parse, meet the sizes the issue asks for, and the
// held-out split is at least 30% of the turns written with it. Turns added
// to dev later to tune on (ids with "-dev", see testdata/extract/README.md)
// do not count: the held-out split was fixed before them.
func TestDataset(t *testing.T) {
	n := map[string]int{}
	total, test := 0, 0
	ids := map[string]bool{}
	for _, split := range Splits {
		turns, err := Load(filepath.Join("..", "..", "testdata", "extract", split+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, tu := range turns {
			if ids[tu.ID] {
				t.Fatalf("turn %s is in two places", tu.ID)
			}
			ids[tu.ID] = true
			n[tu.Lang]++
			if split != "dev" || !strings.Contains(tu.ID, "-dev") {
				total++
			}
		}
		if split == "test" {
			test = len(turns)
		}
	}
	if n["zh"] < 150 || n["en"] < 150 {
		t.Fatalf("turns per language=%v, want ≥ 150 each", n)
	}
	if float64(test) < 0.3*float64(total) {
		t.Fatalf("test split=%d of %d turns, want ≥ 30%%", test, total)
	}
}
