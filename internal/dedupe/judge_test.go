package dedupe

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llm/llmtest"
)

func judgeItems() ([]Item, map[string]Item) {
	texts := map[string]string{
		"a": "The user works at Acme", "b": "The user is employed by Acme", "c": "The user has two cats",
		"d": "The user has 2 cats", "e": "The user has two dogs",
	}
	var items []Item
	byID := map[string]Item{}
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		it := Item{ID: id, Text: texts[id], Key: Key(texts[id]), Importance: 0.5 + float64(i)/10, Updated: time.Unix(0, 0), Partition: "p"}
		items = append(items, it)
		byID[id] = it
	}
	return items, byID
}

// The model's groups join what the words alone join; a member it names
// twice, a number out of range and a one-member group are ignored; a
// failed call leaves the words to decide.
func TestJudgeAndDecide(t *testing.T) {
	srv := llmtest.New(t)
	client, err := llm.New(srv.Config(), srv.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	items, byID := judgeItems()
	cl := newCluster("p", slices.Clone(items))
	// Members come most important first: e, d, c, b, a.
	srv.Enqueue(llmtest.OK(`{"merges":[{"members":[4,5],"content":"The user works at Acme"},{"members":[5,9]},{"members":[1]}]}`))
	verdicts, _, err := Judge{Client: client}.Judge(t.Context(), cl, byID)
	if err != nil {
		t.Fatal(err)
	}
	if len(verdicts) != 1 || !slices.Equal(verdicts[0].Members, []string{"a", "b"}) || verdicts[0].Content != "The user works at Acme" {
		t.Fatalf("verdicts = %+v", verdicts)
	}
	got := Decide(cl, byID, 0.9, verdicts)
	if len(got) != 2 {
		t.Fatalf("decisions = %+v, want the model's group and the words' group", got)
	}
	for _, d := range got {
		switch {
		case slices.Contains(d.Cluster.Members, "a"):
			if !d.ByModel || d.Content == "" || len(d.Cluster.Members) != 2 {
				t.Errorf("the model's group = %+v", d)
			}
		case slices.Contains(d.Cluster.Members, "c"):
			if d.ByModel || !slices.Equal(d.Cluster.Members, []string{"d", "c"}) {
				t.Errorf("the words' group = %+v, want d (more important) and c", d)
			}
		default:
			t.Errorf("unexpected group %+v", d)
		}
	}

	srv.Enqueue(llmtest.Status(500, "down"))
	if _, _, err := (Judge{Client: client}).Judge(t.Context(), cl, byID); err == nil {
		t.Fatal("a failed call gave no error")
	}
	if got := Decide(cl, byID, 0.9, nil); len(got) != 1 || got[0].ByModel {
		t.Fatalf("without verdicts: %+v, want the words' group alone", got)
	}
}
