package memory

import (
	"errors"
	"runtime"
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

// Recovered returns f's own error, or the panic as a *PanicError that
// says where it happened and unwraps to the value when it is an error.
func TestRecovered(t *testing.T) {
	plain := errors.New("plain")
	if err := Recovered(func() error { return plain }); err != plain { //nolint:errorlint // the very error, not one that wraps it
		t.Fatalf("Recovered(returns plain) = %v", err)
	}
	err := Recovered(func() error { panicHere(); return nil })
	var p *PanicError
	if !errors.As(err, &p) {
		t.Fatalf("Recovered(panics) = %#v, want a *PanicError", err)
	}
	if got := err.Error(); !strings.HasPrefix(got, "panic: runtime error: index out of range") || !strings.Contains(got, "memory.panicHere memory_test.go:") {
		t.Errorf("Error() = %q, want the panic and where", got)
	}
	if !strings.HasPrefix(p.Stack, "github.com/engramhq/engram/internal/memory.panicHere") || strings.Contains(p.Stack, "memory.Recovered ") {
		t.Errorf("Stack = %q, want it to start at the panic and stop at Recovered", p.Stack)
	}
	var re runtime.Error
	if !errors.As(err, &re) {
		t.Error("a runtime error's panic does not unwrap to it")
	}
	if ErrorCode(Recovered(func() error { panic("x") })) != EINTERNAL {
		t.Error("a panic is not EINTERNAL")
	}
}

func panicHere() {
	var s []int
	_ = s[3]
}
