package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// The quality figures of a known history: which memories were written,
// which were decided, and how soon after being written each was
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
	st, err := s.Quality(t.Context(), "ns", "", 0)
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
	check("wrong writes", st.WrongWrites, 1)          // m_p1, rejected
	check("wrong-write rate", st.WrongWriteRate, 0.5) // seed 004 §9: rejected / confirmed
	check("superseded soon", st.SupersededSoon, 1)    // m_loc1 (1 day); not m_job1 (10 days)

	wide, err := s.Quality(t.Context(), "ns", "", 30*day)
	if err != nil {
		t.Fatal(err)
	}
	check("superseded within 30 days", wide.SupersededSoon, 2)
	check("wrong writes, whatever the window", wide.WrongWrites, 1)
	narrow, err := s.Quality(t.Context(), "ns", "", 12*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	check("superseded within 12 hours", narrow.SupersededSoon, 0)

	other, err := s.Quality(t.Context(), "other", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("other users", other.Users, 2) // ana (a memory) and bob (a turn)
	check("other written", other.Written, 1)
	check("other confirmed", other.Confirmed, 0)
	check("other confirmation rate", other.ConfirmationRate, 0.0)

	all, err := s.Quality(t.Context(), "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("all written", all.Written, 8)
	check("all turns", all.Turns, 2)
}

// Seed 004 §9's wrong-write rate is rejected / confirmed: a user who moved
// and upgraded Python replaced memories that were right when written, so
// their rate is 0 of 1 confirmed; another user's rejection is theirs, and
// a user's figures are their own.
func TestWrongWriteRateCountsUpdatesAsRight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { quiet.Close(s) })
	day := 24 * time.Hour
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(a memory.Applied, d time.Duration) memory.Applied {
		a.Time = t0.Add(d)
		return a
	}
	mem := func(seq uint64, user, id, kind, pred, content string, conf float64) memory.Applied {
		return derived(seq, user, events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: id, Kind: kind, Category: "identity",
			Subject: "user", Predicate: pred, Content: content, Importance: 0.6, Confidence: conf, Tier: 2,
			SaidAt: t0.Add(time.Duration(seq) * day)})
	}
	decide := func(seq uint64, user, typ, id string) memory.Applied {
		return derived(seq, user, typ, &events.PendingDecision{MemoryID: id})
	}
	mustApply(t, s,
		at(turn(1, "ana", "s1", 0, "我住在北京，平时用 Python 3.10 写脚本"), 0),
		at(mem(2, "ana", "m_city1", "fact", "location", "用户住在北京", 0.9), 0),
		at(mem(3, "ana", "m_py1", "skill", "uses", "用户用 Python 3.10", 0.9), 0),
		at(mem(4, "ana", "m_city2", "fact", "location", "用户搬到了上海", 0.9), day),         // moved
		at(mem(5, "ana", "m_py2", "skill", "uses", "用户升级到了 Python 3.12", 0.9), 2*day), // upgraded
		at(mem(6, "ana", "m_tea", "preference", "likes", "用户喜欢喝茶", 0.7), 0),
		at(decide(7, "ana", events.TypePendingConfirmed, "m_tea"), day),
		at(mem(8, "bob", "m_dog", "preference", "likes", "用户喜欢狗", 0.7), 0),
		at(decide(9, "bob", events.TypePendingIgnored, "m_dog"), day),
	)
	ana, err := s.Quality(t.Context(), "ns", "ana", 0)
	if err != nil {
		t.Fatal(err)
	}
	if ana.Memories["superseded"] != 2 {
		t.Fatalf("setup: superseded %d, want the move and the upgrade", ana.Memories["superseded"])
	}
	if ana.WrongWriteRate != 0 || ana.WrongWrites != 0 || ana.Confirmed != 1 || ana.User != "ana" {
		t.Errorf("ana: wrong-write rate %v (%d rejected of %d confirmed), user %q; want 0, 0 of 1, ana",
			ana.WrongWriteRate, ana.WrongWrites, ana.Confirmed, ana.User)
	}
	if ana.SupersededSoon != 2 || ana.Users != 1 {
		t.Errorf("ana: superseded soon %d, users %d; want 2, 1", ana.SupersededSoon, ana.Users)
	}
	bob, err := s.Quality(t.Context(), "ns", "bob", 0)
	if err != nil {
		t.Fatal(err)
	}
	// bob has memories but no turn: still a user.
	if bob.WrongWrites != 1 || bob.Confirmed != 0 || bob.WrongWriteRate != 0 || bob.Users != 1 {
		t.Errorf("bob: %d rejected of %d confirmed, rate %v, users %d; want 1 of 0, 0, 1",
			bob.WrongWrites, bob.Confirmed, bob.WrongWriteRate, bob.Users)
	}
	all, err := s.Quality(t.Context(), "ns", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if all.WrongWriteRate != 1 || all.Users != 2 {
		t.Errorf("namespace: rate %v, users %d; want 1 (bob's one rejected per ana's one confirmed), 2", all.WrongWriteRate, all.Users)
	}
	rs, err := ReadStats(t.Context(), path, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if rs.Users != 2 {
		t.Errorf("engram stats: users %d, want 2 (bob has memories, no turns)", rs.Users)
	}
}
