package locomo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestTokenizers(t *testing.T) {
	t.Parallel()
	in := "Hi Mel! Caroline's e-mail, 2022... — ok?"
	cases := []struct {
		name string
		fn   func(string) []string
		want []string
	}{
		{"Whitespace", Whitespace, []string{"hi", "mel!", "caroline's", "e-mail,", "2022...", "—", "ok?"}},
		{"WhitespaceTrimmed", WhitespaceTrimmed, []string{"hi", "mel", "caroline's", "e-mail", "2022", "ok"}},
		{"Words", Words, []string{"hi", "mel", "caroline", "s", "e", "mail", "2022", "ok"}},
	}
	for _, c := range cases {
		if got := c.fn(in); !slices.Equal(got, c.want) {
			t.Errorf("%s(%q)=%q, want %q", c.name, in, got, c.want)
		}
	}
}

func bm25Conversation() *Conversation {
	turns := []Turn{
		{DiaID: "D1:1", Speaker: "Alice", Text: "I adopted a puppy named Max."},
		{DiaID: "D1:2", Speaker: "Bob", Text: "Nice, dogs are the best."},
		{DiaID: "D1:3", Speaker: "Alice", Text: "Max chewed the shoes today, the puppy is wild."},
		{DiaID: "D1:4", Speaker: "Bob", Text: "My cat ignores the dog."},
		{DiaID: "D1:5", Speaker: "Alice", Text: "Shall we walk in the park on Sunday?"},
		{DiaID: "D1:6", Speaker: "Alice", Text: "Or Saturday, if it rains."},
	}
	for i := range turns {
		turns[i].Session, turns[i].Index = 1, i
	}
	return &Conversation{ID: "c", SpeakerA: "Alice", SpeakerB: "Bob", Sessions: []Session{{N: 1, Turns: turns}}}
}

func TestBM25Ranking(t *testing.T) {
	t.Parallel()
	conv := bm25Conversation()
	r := BM25Baseline()
	cases := []struct {
		question string
		want     []string
	}{
		// "max" is in D1:1 and D1:3 once each; the shorter turn wins.
		// Nothing else matches: "chew" is not "chewed".
		{"What did Max chew?", []string{"D1:1", "D1:3"}},
		// "cat" and "a" are each in one turn; D1:4 is shorter.
		{"Who has a cat?", []string{"D1:4", "D1:1"}},
		// Speaker names are indexed; equal scores keep conversation order.
		{"What did Bob say?", []string{"D1:2", "D1:4"}},
		// "the" is in four of six turns: its Okapi IDF is negative and
		// floored, so those turns still match, the one with two "the"
		// first and the longest of the others last.
		{"the", []string{"D1:3", "D1:2", "D1:4", "D1:5"}},
		{"Anything about zebras", nil},
	}
	for _, c := range cases {
		got, err := r(t.Context(), conv, QA{Question: c.question})
		if err != nil {
			t.Fatalf("retrieve %q: %v", c.question, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("retrieve %q = %q, want %q", c.question, got, c.want)
		}
	}
}

func TestBM25Concurrent(t *testing.T) {
	t.Parallel()
	convs := []*Conversation{bm25Conversation(), bm25Conversation()}
	r := BM25Baseline()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			got, err := r(t.Context(), convs[i%2], QA{Question: "Max"})
			if err != nil || !slices.Equal(got, []string{"D1:1", "D1:3"}) {
				t.Errorf("retrieve Max = %q, %v", got, err)
			}
		})
	}
	wg.Wait()
}

// The reference figures of the data README: plain BM25 over turns,
// recall@5/10/25/50 overall.
var referenceBM25 = map[int]float64{5: 0.458, 10: 0.529, 25: 0.634, 50: 0.697}

const locomoSHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"

// fullDataset loads locomo10.json from $LOCOMO or the shared data directory,
// or skips the test when it is absent or not the file the figures are for.
func fullDataset(t *testing.T) *Dataset {
	t.Helper()
	paths := []string{os.Getenv("LOCOMO")}
	if paths[0] == "" {
		paths = []string{"../../testdata/locomo/locomo10.json", "/work/shared/data/locomo/locomo10.json", "../../../shared/data/locomo/locomo10.json"}
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != locomoSHA256 {
			t.Skipf("%s is not locomo10.json at snap-research/LoCoMo 3eb6f2c (sha256 %x)", p, sum)
		}
		ds, err := Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("parse %s: %v", filepath.Clean(p), err)
		}
		return ds
	}
	t.Skipf("LoCoMo data not found in %q; set LOCOMO to locomo10.json", paths)
	return nil
}

func TestBM25BaselineFullDataset(t *testing.T) {
	t.Parallel()
	ds := fullDataset(t)

	s := ds.Stats
	if s.Conversations != 10 || s.Turns != 5882 || s.Questions != 1986 {
		t.Fatalf("stats=%+v, want 10 conversations, 5882 turns, 1986 questions", s)
	}
	for cat, n := range map[int]int{1: 282, 2: 321, 3: 96, 4: 841, 5: 446} {
		if s.PerCategory[cat] != n {
			t.Errorf("questions in category %d=%d, want %d", cat, s.PerCategory[cat], n)
		}
	}
	// The nine malformed evidence strings of the README: six rewritten
	// (into 15 ids), three dropped ("D", and D10:19 and D4:36 which name no
	// turn); plus one id listed twice.
	if s.Rewritten != 6 || s.Dropped != 3 || s.Duplicates != 1 || s.NoEvidence != 4 {
		t.Errorf("rewritten=%d dropped=%d duplicates=%d no-evidence=%d, want 6 3 1 4",
			s.Rewritten, s.Dropped, s.Duplicates, s.NoEvidence)
	}

	rep, err := Evaluate(t.Context(), ds, BM25Baseline(), DefaultKs)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	var buf bytes.Buffer
	if err := rep.Write(&buf); err != nil {
		t.Fatalf("Write: %v", err)
	}
	t.Logf("BM25 baseline:\n%s", buf.String())
	if got, want := rep.Overall.Questions, 1982; got != want {
		t.Errorf("questions scored=%d, want %d", got, want)
	}
	for _, k := range DefaultKs {
		if got, want := rep.Overall.Recall[k], referenceBM25[k]; math.Abs(got-want) > 0.01 {
			t.Errorf("recall@%d=%.4f, want %.3f ± 0.01", k, got, want)
		}
	}
}

// TestBM25Variants prints recall for the tokenisations and turn texts that
// were tried against the reference figures. It is a record, not a check:
// run it with LOCOMO_VARIANTS=1 go test -v -run BM25Variants.
func TestBM25Variants(t *testing.T) {
	t.Parallel()
	if os.Getenv("LOCOMO_VARIANTS") == "" {
		t.Skip("set LOCOMO_VARIANTS=1 to print the variant table")
	}
	ds := fullDataset(t)
	tokenizers := []struct {
		name string
		fn   func(string) []string
	}{{"whitespace", Whitespace}, {"whitespace-trimmed", WhitespaceTrimmed}, {"words", Words}}
	texts := []struct {
		name string
		fn   func(*Conversation, Turn) string
	}{
		{"text", func(c *Conversation, t Turn) string { return t.Text }},
		{"text+image", PlainTurnText},
		{"speaker+text", func(c *Conversation, t Turn) string { return t.Speaker + ": " + t.Text }},
		{"speaker+text+image", SpeakerTurnText},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "reference                                   %.3f %.3f %.3f %.3f\n",
		referenceBM25[5], referenceBM25[10], referenceBM25[25], referenceBM25[50])
	for _, tok := range tokenizers {
		for _, text := range texts {
			for _, idf := range []IDF{IDFOkapi, IDFLucene} {
				bm := NewBM25()
				bm.Tokenize, bm.Text, bm.IDF = tok.fn, text.fn, idf
				rep, err := Evaluate(t.Context(), ds, bm.Retriever(), DefaultKs)
				if err != nil {
					t.Fatalf("Evaluate: %v", err)
				}
				idfName := map[IDF]string{IDFOkapi: "okapi", IDFLucene: "lucene"}[idf]
				o := rep.Overall.Recall
				fmt.Fprintf(&b, "%-18s %-18s %-6s %.4f %.4f %.4f %.4f\n", tok.name, text.name, idfName, o[5], o[10], o[25], o[50])
			}
		}
	}
	t.Logf("recall@5/10/25/50 overall:\n%s", b.String())
}
