package bench

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hand-written recall sets hold what FORMAT.md promises: enough
// memories and turns, every gold id a memory or a turn that exists, every
// time before the set's now. A slip in a file written by hand would
// otherwise only show as a lower score.
func TestRecallSetsAreWellFormed(t *testing.T) {
	types := map[string]bool{"direct": true, "paraphrase": true, "dialogue": true, "long": true, "emotional": true,
		"time": true, "single_char": true, "cross_lingual": true, "multi": true}
	kinds := map[string]bool{"fact": true, "preference": true, "rule": true, "skill": true, "error": true, "context": true, "identity": true}
	categories := map[string]bool{"identity": true, "config": true, "credential": true, "decision": true, "solution": true,
		"event": true, "conversation": true, "temp": true, "debug": true}
	for _, split := range []string{"dev", "test"} {
		sets, err := LoadRecallSets(filepath.Join("..", "..", "testdata", "recall", split))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sets {
			t.Run(split+"/"+s.File, func(t *testing.T) {
				if len(s.Memories) < 50 {
					t.Errorf("%d memories, want ≥ 50", len(s.Memories))
				}
				turns := map[string]bool{}
				n := 0
				for _, sess := range s.Sessions {
					for i := range sess.Turns {
						turns[fmt.Sprintf("%s#%d", sess.ID, i)] = true
						n++
					}
					if !sess.Time.Before(s.Now) {
						t.Errorf("session %s at %v, not before now %v", sess.ID, sess.Time, s.Now)
					}
				}
				if len(s.Sessions) < 6 || n < 80 {
					t.Errorf("%d sessions, %d turns; want ≥ 6 and ≥ 80", len(s.Sessions), n)
				}
				mems := map[string]bool{}
				for _, m := range s.Memories {
					if mems[m.ID] {
						t.Errorf("memory %s twice", m.ID)
					}
					mems[m.ID] = true
					if !kinds[m.Kind] || !categories[m.Category] {
						t.Errorf("memory %s: kind %q, category %q", m.ID, m.Kind, m.Category)
					}
					if m.Time.IsZero() || !m.Time.Before(s.Now.Add(time.Second)) {
						t.Errorf("memory %s at %v, not before now %v", m.ID, m.Time, s.Now)
					}
				}
				for _, c := range s.Cases {
					if !types[c.Type] || strings.TrimSpace(c.Query) == "" || len(c.Gold) == 0 {
						t.Errorf("case %s: type %q, query %q, gold %v", c.ID, c.Type, c.Query, c.Gold)
					}
					for _, g := range c.Gold {
						if !mems[g] && !turns[g] {
							t.Errorf("case %s: gold %s is neither a memory nor a turn of the set", c.ID, g)
						}
					}
				}
			})
		}
	}
}
