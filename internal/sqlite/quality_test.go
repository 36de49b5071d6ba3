package sqlite

import (
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// The quality figures of a known history: which memories were written,
// which were decided, and how soon after being written each was ignored or
// superseded — by event time, so the window is exact.
func TestQualityKnownHistory(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	day := 24 * time.Hour
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(a memory.Applied, ns string, d time.Duration) memory.Applied {
		a.Time = t0.Add(d)
		a.Scope.Namespace = ns
		return a
	}
	mem := func(seq uint64, id, pred, content string, conf float64) memory.Applied {
		return derived(seq, "ana", events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: id, Kind: "fact", Category: "identity",
			Subject: "user", Predicate: pred, Content: content, Importance: 0.5, Confidence: conf, Tier: 2})
	}
	decide := func(seq uint64, typ, id string) memory.Applied {
		return derived(seq, "ana", typ, &events.PendingDecision{MemoryID: id})
	}
	mustApply(t, s,
		at(turn(1, "ana", "s1", 0, "hello"), "ns", 0),
		at(mem(2, "m_loc1", "location", "lives in Beijing", 1), "ns", 0),
		at(mem(3, "m_loc2", "location", "lives in Shanghai", 1), "ns", day), // supersedes m_loc1 after 1 day: wrong
		at(mem(4, "m_job1", "employer", "works at Acme", 1), "ns", 0),
		at(mem(5, "m_job2", "employer", "works at Initech", 1), "ns", 10*day), // supersedes m_job1 after 10 days
		at(mem(6, "m_p1", "likes", "likes cats", 0.7), "ns", 0),
		at(mem(7, "m_p2", "likes", "likes hiking", 0.7), "ns", 0),
		at(mem(8, "m_p3", "likes", "likes tea", 0.7), "ns", 0),
		at(decide(9, events.TypePendingIgnored, "m_p1"), "ns", 2*day), // ignored after 2 days: wrong
		at(decide(10, events.TypePendingConfirmed, "m_p2"), "ns", day),
		at(decide(11, events.TypePendingConfirmed, "m_p3"), "ns", day),
		at(mem(12, "m_other", "likes", "likes coffee", 1), "other", 0),
		at(turn(13, "bob", "s2", 0, "hi"), "other", 0),
	)
	st, err := s.Quality(t.Context(), "ns", 0)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("users", st.Users, 1)
	check("turns", st.Turns, 1)
	check("episodes", st.Episodes, 0)
	check("active", st.Memories["active"], 4) // loc2, job2, p2, p3
	check("superseded", st.Memories["superseded"], 2)
	check("rejected", st.Memories["rejected"], 1)
	check("pending", st.Memories["pending"], 0)
	check("confirmed", st.Confirmed, 2)
	check("ignored", st.Ignored, 1)
	check("confirmation rate", st.ConfirmationRate, 2.0/3)
	check("window", st.WindowDays, 7.0)
	check("written", st.Written, 7)
	check("wrong writes", st.WrongWrites, 2) // m_loc1 (1 day), m_p1 (2 days); not m_job1 (10 days)
	check("wrong-write rate", st.WrongWriteRate, 2.0/7)

	wide, err := s.Quality(t.Context(), "ns", 30*day)
	if err != nil {
		t.Fatal(err)
	}
	check("wrong writes within 30 days", wide.WrongWrites, 3)
	narrow, err := s.Quality(t.Context(), "ns", 12*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	check("wrong writes within 12 hours", narrow.WrongWrites, 0)

	other, err := s.Quality(t.Context(), "other", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("other users", other.Users, 2) // ana (a memory) and bob (a turn)
	check("other written", other.Written, 1)
	check("other confirmed", other.Confirmed, 0)
	check("other confirmation rate", other.ConfirmationRate, 0.0)

	all, err := s.Quality(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("all written", all.Written, 8)
	check("all turns", all.Turns, 2)
}
