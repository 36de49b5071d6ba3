package extractbench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

func cand(kind memory.Kind, subject, pred, content string) memory.Candidate {
	return memory.Candidate{Kind: kind, Subject: subject, Predicate: pred, Content: content}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    Gold
		c    memory.Candidate
		want bool
	}{
		{"template wording around the value", Gold{Kind: "identity", Subject: "user", Predicate: "location", Value: "北京市朝阳区"},
			cand(memory.KindIdentity, "user", "location", "用户住在北京市朝阳区"), true},
		{"subject spelled another way", Gold{Kind: "fact", Subject: "VS Code", Predicate: "uses", Value: "VS Code"},
			cand(memory.KindFact, "vscode", "uses", "用户使用 VS Code"), true},
		{"value cut short", Gold{Kind: "fact", Subject: "vscode", Predicate: "uses", Value: "VS Code"},
			cand(memory.KindFact, "vscode", "uses", "用户使用 VS"), false},
		{"rule cut short", Gold{Kind: "rule", Subject: "user", Predicate: "rule", Value: "never push directly to main; open a pull request"},
			cand(memory.KindRule, "user", "rule", "Rule: Never push directly to main"), false},
		{"rule kept whole", Gold{Kind: "rule", Subject: "user", Predicate: "rule", Value: "never push directly to main; open a pull request"},
			cand(memory.KindRule, "user", "rule", "Rule: Never push directly to main; open a pull request."), true},
		{"another version", Gold{Kind: "fact", Subject: "python", Predicate: "version", Value: "Python 3.10"},
			cand(memory.KindFact, "python", "version", "Project uses Python 3.12"), false},
		{"a plan is not a version", Gold{Kind: "context", Subject: "project", Predicate: "plan", Value: "升级到 Next.js 15"},
			cand(memory.KindFact, "next.js", "version", "项目 星河商城 已升级到 Next.js 15"), false},
		{"another kind", Gold{Kind: "preference", Subject: "user", Predicate: "likes", Value: "Rust"},
			cand(memory.KindFact, "user", "likes", "User likes Rust"), false},
		{"another predicate", Gold{Kind: "preference", Subject: "user", Predicate: "likes", Value: "Rust"},
			cand(memory.KindPreference, "user", "prefers", "User prefers Rust"), false},
		{"another subject", Gold{Kind: "fact", Subject: "python", Predicate: "version", Value: "3.12"},
			cand(memory.KindFact, "node", "version", "Node 3.12"), false},
		{"case and punctuation", Gold{Kind: "fact", Subject: "next.js", Predicate: "version", Value: "Next.js 15"},
			cand(memory.KindFact, "nextjs", "version", "The project upgraded to NEXT.JS 15."), true},
		{"an update that does not say so", Gold{Kind: "preference", Subject: "user", Predicate: "likes", Value: "tea", Updates: true},
			cand(memory.KindPreference, "user", "likes", "User switched to tea"), false},
		{"an update that says so", Gold{Kind: "preference", Subject: "user", Predicate: "likes", Value: "tea", Updates: true},
			memory.Candidate{Kind: memory.KindPreference, Subject: "user", Predicate: "likes", Content: "User switched to tea", Updates: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Matches(tc.g, tc.c); got != tc.want {
				t.Fatalf("Matches(%+v, %q)=%v, want %v", tc.g, tc.c.Content, got, tc.want)
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
