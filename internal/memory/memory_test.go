package memory

import (
	"strings"
	"testing"
)

func TestSimilarity(t *testing.T) {
	for _, tc := range []struct {
		a, b   string
		merges bool
	}{
		{"User's name is Ana", "User's name is Ana.", true},
		{"用户喜欢喝美式咖啡", "用户喜欢喝美式咖啡。", true},
		{"Project uses Python 3.10", "Project uses Python 3.12", false},
		{"用户喜欢喝美式咖啡", "用户喜欢爬山", false},
		{"", "", true},
	} {
		if got := Similarity(tc.a, tc.b) > MergeSimilarity; got != tc.merges {
			t.Errorf("Similarity(%q, %q) = %.2f, merges=%v, want %v", tc.a, tc.b, Similarity(tc.a, tc.b), got, tc.merges)
		}
	}
}

func TestRoute(t *testing.T) {
	for c, want := range map[float64]Status{0.95: StatusActive, 0.85: StatusActive, 0.84: StatusPending, 0.6: StatusPending, 0.59: StatusRejected} {
		if got := Route(c); got != want {
			t.Errorf("Route(%v) = %s, want %s", c, got, want)
		}
	}
}

// A turn is scored by the text it was indexed by: its attachments' names
// and descriptions, never the JSON they are kept as (whose keys and mime
// types made every turn with a file longer and matched "image").
func TestTurnHitText(t *testing.T) {
	h := TurnHit{Speaker: "Mel", Content: "look at this",
		Attachments: `[{"name":"lake.jpg","mime":"image/jpeg","url":"https://x.test/a.jpg","description":"a painting of a sunset over a lake"}]`}
	got := h.Text()
	for _, want := range []string{"Mel: look at this", "lake.jpg", "a painting of a sunset over a lake"} {
		if !strings.Contains(got, want) {
			t.Errorf("Text() = %q, want it to hold %q", got, want)
		}
	}
	for _, not := range []string{"mime", "image/jpeg", "description", "x.test", "{"} {
		if strings.Contains(got, not) {
			t.Errorf("Text() = %q, holds %q", got, not)
		}
	}
	if got := (TurnHit{Content: "plain"}).Text(); got != "plain" {
		t.Errorf("Text() = %q, want %q", got, "plain")
	}
}
