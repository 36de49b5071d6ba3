package rules

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
)

// FuzzParse checks that no rule file, however broken, panics the parser,
// that every error has a position inside the file, and that what parses
// can be evaluated. The seed corpus holds the shipped rules and the broken
// files of the parse tests.
func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	f.Fuzz(func(t *testing.T, data []byte) {
		rules, err := Parse("fuzz.yaml", data, events.Types())
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v (%T), want Errors", err, err)
			}
			// YAML breaks lines at \n, \r, and (as yaml.v3 reads
			// it) NEL, LS and PS; counting each gives an upper bound.
			lines := 1 + strings.Count(string(data), "\n") + strings.Count(string(data), "\r") +
				strings.Count(string(data), "\u0085") + strings.Count(string(data), "\u2028") + strings.Count(string(data), "\u2029")
			for _, e := range es {
				if e.File != "fuzz.yaml" || e.Msg == "" || e.Line < 0 || e.Line > lines || e.Col < 0 {
					t.Fatalf("bad error %+v in a file of %d lines", e, lines)
				}
			}
			return
		}
		ev, _ := ParseEvent([]byte(sample))
		for _, r := range rules {
			if r.Name == "" || len(r.Do) == 0 || (r.On == "") == (r.Schedule == nil) {
				t.Fatalf("rule parsed incomplete: %+v", r)
			}
			if r.When != nil {
				r.When.Eval(ev)
				r.When.Eval(Event{})
			}
			for _, a := range r.Do {
				_ = a.String()
			}
			if r.Schedule != nil && r.Schedule.Next(fuzzStart).IsZero() {
				t.Fatalf("schedule %s never fires", r.Schedule.Spec)
			}
		}
	})
}

var fuzzStart = mustTime("2026-03-08T06:59:00Z")

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
