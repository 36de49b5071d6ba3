package metrics

import (
	"strings"
	"testing"
)

func TestExposition(t *testing.T) {
	var r Registry
	r.Help("engram_things_total", "Things.")
	r.Inc("engram_things_total", "kind", "a")
	r.Add("engram_things_total", 2, "kind", "b")
	r.Inc("engram_things_total", "kind", "a")
	var b strings.Builder
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	want := "# HELP engram_things_total Things.\n# TYPE engram_things_total counter\n" +
		"engram_things_total{kind=\"a\"} 2\nengram_things_total{kind=\"b\"} 2\n"
	if got := b.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := r.Get("engram_things_total", "kind", "a"); got != 2 {
		t.Fatalf("Get = %d", got)
	}
}
