package wait

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps a failure instead of ending the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

func TestForSaysWhatItLastSaw(t *testing.T) {
	r := &recorder{TB: t}
	n := 0
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		Within(r, 30*every, "three turns", func() error { n++; return Equal(min(n, 2), 3) })
	}()
	if !strings.Contains(r.failed, "three turns") || !strings.Contains(r.failed, "got 2, want 3") {
		t.Fatalf("failure %q does not say what was waited for and what was last seen", r.failed)
	}
}

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	n := 0
	For(t, "the third poll", func() error { n++; return Equal(n >= 3, true) })
	if n != 3 {
		t.Fatalf("polled %d times, want 3", n)
	}
}
