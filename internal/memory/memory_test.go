package memory

import "testing"

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
