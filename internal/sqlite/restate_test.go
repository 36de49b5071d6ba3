package sqlite

import (
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// The model's wording of a fact the rules read in the same session's turn
// replaces the rules' reading; a reading the model did not restate stays,
// and so does one of another session.
func TestModelRestatesAReading(t *testing.T) {
	s := openTest(t)
	ana := memory.Scope{Namespace: "ns", User: "ana"}
	extracted := func(seq uint64, id, session, extractor, pass string, turns []int, contents ...string) memory.Applied {
		d := &events.MemoryExtracted{RequestID: id, SessionID: session, Extractor: extractor, Pass: pass, Turns: turns}
		for _, c := range contents {
			d.Candidates = append(d.Candidates, events.Candidate{Kind: "preference", Category: "config", Subject: "user",
				Predicate: "likes", Content: c, Importance: 0.6, Confidence: 0.9})
		}
		return memory.Applied{Envelope: memory.Envelope{Seq: seq, Source: "engram/extractor", ID: "extracted-" + id,
			Type: events.TypeMemoryExtracted, Scope: ana, Time: time.Unix(int64(seq), 0).UTC()}, Data: d}
	}
	mustApply(t, s,
		extracted(1, "read-1", "s1", "rules", events.PassTurn, []int{0}, "User likes green tea", "User likes chess"),
		extracted(2, "read-2", "s2", "rules", events.PassTurn, []int{0}, "User likes green tea a lot"),
		extracted(3, "req-1", "s1", "llm", "", []int{0}, "likes green tea"),
	)
	active, err := s.Memories(t.Context(), memory.MemoryQuery{Scope: ana})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range active {
		got[m.Content] = m.Source
	}
	want := map[string]string{"likes green tea": "llm", "User likes chess": "rules", "User likes green tea a lot": "rules"}
	if len(got) != len(want) {
		t.Fatalf("active memories %v, want %v", got, want)
	}
	for c, src := range want {
		if got[c] != src {
			t.Errorf("active %q from %q, want from %q (all: %v)", c, got[c], src, got)
		}
	}
	old, err := s.Memories(t.Context(), memory.MemoryQuery{Scope: ana, Status: "superseded"})
	if err != nil || len(old) != 1 || old[0].Content != "User likes green tea" || old[0].SupersededBy == "" {
		t.Fatalf("superseded: %+v, %v", old, err)
	}
}
