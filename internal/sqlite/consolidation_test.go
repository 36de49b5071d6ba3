package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

func derived(seq uint64, user, typ string, data any) memory.Applied {
	return memory.Applied{
		Envelope: memory.Envelope{Seq: seq, Source: "engram/consolidator", ID: fmt.Sprintf("c%d", seq), Type: typ,
			Scope: memory.Scope{Namespace: "ns", User: user}, Time: time.Unix(int64(seq), 0).UTC()},
		Data: data,
	}
}

func added(seq uint64, user, id, content string, importance float64) memory.Applied {
	return derived(seq, user, events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: id, Kind: "fact", Category: "event",
		Subject: "s-" + id, Predicate: "note", Content: content, Importance: importance, Confidence: 1, Tier: 2})
}

func TestEpisodeApplyAndRead(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ana, bob := memory.Scope{Namespace: "ns", User: "ana"}, memory.Scope{Namespace: "ns", User: "bob"}
	mustApply(t, s, turn(1, "ana", "s1", 0, "deploy billing"), turn(2, "ana", "s1", 1, "done"), turn(3, "ana", "s1", 2, "thanks"))
	ep := &events.Episode{ID: "ep_1", SessionID: "s1", Summary: "Deployed billing to Kubernetes.", Goal: "deploy billing",
		Outcome: "completed", Started: time.Unix(1, 0), Ended: time.Unix(3, 0), Importance: 0.4, Source: "session_end",
		Turns: []int{0, 1, 2}, Tools: []string{"shell"}, Actions: []events.ActionNode{{Tool: "shell", Params: "kubectl apply", Success: true, Turn: 1}}}
	comp := &events.Episode{ID: "ep_c", SessionID: "s1", Summary: "compressed part", Outcome: "ongoing",
		Started: time.Unix(1, 0), Ended: time.Unix(2, 0), Importance: 0.1, Source: "compression", Turns: []int{0, 1}}
	mustApply(t, s, derived(4, "ana", events.TypeEpisodeBuilt, ep), derived(5, "ana", events.TypeEpisodeBuilt, comp))

	got, err := s.Episodes(t.Context(), ana, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "ep_1" || got[0].Actions[0].Params != "kubectl apply" || len(got[0].Turns) != 3 {
		t.Fatalf("episodes = %+v", got)
	}
	// The session's own episode keeps its turns from a compression episode.
	turns, err := s.SessionTurns(t.Context(), ana, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tr := range turns {
		var id string
		if err := s.r.QueryRowContext(t.Context(), `SELECT episode_id FROM turns WHERE id = ?`, tr.ID).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if fmt.Sprint(ids) != "[ep_1 ep_1 ep_1]" {
		t.Fatalf("turns' episodes = %v", ids)
	}
	if hits, err := s.SearchEpisodes(t.Context(), ana, "Kubernetes", 10); err != nil || len(hits) != 1 || hits[0].ID != "ep_1" {
		t.Fatalf("search = %+v, %v", hits, err)
	}
	// Tenancy: bob sees none of it.
	if hits, _ := s.SearchEpisodes(t.Context(), bob, "Kubernetes", 10); len(hits) != 0 {
		t.Fatalf("bob found %+v", hits)
	}
	if eps, _ := s.Episodes(t.Context(), bob, "", 0); len(eps) != 0 {
		t.Fatalf("bob lists %+v", eps)
	}
	// Sessions with an episode of their own are consolidated.
	if ss, err := s.UnconsolidatedSessions(t.Context(), ana, time.Unix(100, 0), 3, 10); err != nil || len(ss) != 0 {
		t.Fatalf("unconsolidated = %v, %v", ss, err)
	}
	mustApply(t, s, turn(6, "ana", "s2", 0, "a"), turn(7, "ana", "s2", 1, "b"), turn(8, "ana", "s2", 2, "c"))
	if ss, _ := s.UnconsolidatedSessions(t.Context(), ana, time.Unix(100, 0), 3, 10); fmt.Sprint(ss) != "[s2]" {
		t.Fatalf("unconsolidated = %v, want [s2]", ss)
	}
	if ss, _ := s.UnconsolidatedSessions(t.Context(), ana, time.Unix(8, 0), 3, 10); len(ss) != 0 {
		t.Fatalf("a session still going is not swept: %v", ss)
	}
}

func TestScratchpadAndDailySummaries(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ana := memory.Scope{Namespace: "ns", User: "ana"}
	empty, err := s.Scratchpad(t.Context(), ana)
	if err != nil || empty.Content != "" || !empty.Updated.IsZero() {
		t.Fatalf("no scratchpad = %+v, %v", empty, err)
	}
	mustApply(t, s, derived(1, "ana", events.TypeScratchpadUpdated, &events.Scratchpad{Content: "## Focus\n- x",
		ActiveProjects: []string{"engram"}, CurrentFocus: "x", Source: "episode", EpisodeID: "ep_1"}))
	mustApply(t, s, derived(2, "ana", events.TypeScratchpadUpdated, &events.Scratchpad{Content: "mine", Source: "person"}))
	p, err := s.Scratchpad(t.Context(), ana)
	if err != nil || p.Content != "mine" || p.Source != "person" || len(p.ActiveProjects) != 0 || !p.Updated.Equal(time.Unix(2, 0)) {
		t.Fatalf("scratchpad = %+v, %v", p, err)
	}
	if other, _ := s.Scratchpad(t.Context(), memory.Scope{Namespace: "ns", User: "bob"}); other.Content != "" {
		t.Fatalf("bob sees %+v", other)
	}

	day := &events.DailySummary{Date: "2025-06-01", Channel: "myclaw", Summary: "talked", RawTokens: 10, Source: "migration"}
	mustApply(t, s, derived(3, "ana", events.TypeDailySummarized, day))
	ds, err := s.DailySummaries(t.Context(), ana, "2025-06-01")
	if err != nil || len(ds) != 1 || ds[0].Compressed {
		t.Fatalf("daily = %+v, %v", ds, err)
	}
	done := *day
	done.Source = "compression"
	mustApply(t, s, derived(4, "ana", events.TypeDailySummarized, &done), derived(5, "ana", events.TypeDailySummarized, day))
	if ds, _ := s.DailySummaries(t.Context(), ana, "2025-06-01"); len(ds) != 1 || !ds[0].Compressed {
		t.Fatalf("after compression and a re-migration = %+v, want compressed", ds)
	}
}

func TestMergeArchiveAndProfile(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ana := memory.Scope{Namespace: "ns", User: "ana"}
	mustApply(t, s, added(1, "ana", "m1", "likes green tea", 0.6), added(2, "ana", "m2", "likes green tea a lot", 0.9),
		added(3, "ana", "m3", "uses vim", 0.8), added(4, "bob", "b1", "bob's", 0.9))
	mustApply(t, s, derived(5, "ana", events.TypeMemoriesMerged, &events.MemoriesMerged{Into: "m2", Merged: []string{"m1", "gone"},
		Importance: 0.9, Content: new("likes green tea very much"), ClusterID: "c1"}))
	m1, _ := s.Memory(t.Context(), ana, "m1")
	m2, _ := s.Memory(t.Context(), ana, "m2")
	if m1.Status != memory.StatusSuperseded || m1.SupersededBy != "m2" || m2.Content != "likes green tea very much" || m2.Importance != 0.9 {
		t.Fatalf("after merge: m1 %+v, m2 %+v", m1, m2)
	}
	h, _ := s.History(t.Context(), ana, "m1")
	if len(h) == 0 || h[len(h)-1].Change != "merged" {
		t.Fatalf("m1 history = %+v", h)
	}
	// Another user's memory cannot be merged or archived through ana.
	mustApply(t, s, derived(6, "ana", events.TypeMemoriesArchived, &events.MemoriesArchived{MemoryIDs: []string{"m3", "b1"}, Reason: "decay"}))
	if m3, _ := s.Memory(t.Context(), ana, "m3"); m3.Status != memory.StatusArchived {
		t.Fatalf("m3 = %+v, want archived", m3)
	}
	if b1, _ := s.Memory(t.Context(), memory.Scope{Namespace: "ns", User: "bob"}, "b1"); b1.Status != memory.StatusActive {
		t.Fatalf("bob's memory = %+v, want untouched", b1)
	}

	mustApply(t, s, derived(7, "ana", events.TypeProfileRefreshed, &events.ProfileRefreshed{MemoryIDs: []string{"m2", "b1"}}))
	core, err := s.CoreMemories(t.Context(), ana)
	if err != nil || len(core) != 1 || core[0].ID != "m2" || core[0].Tier != 1 {
		t.Fatalf("core = %+v, %v", core, err)
	}
	mustApply(t, s, derived(8, "ana", events.TypeProfileRefreshed, &events.ProfileRefreshed{MemoryIDs: []string{}, Demoted: []string{"m2"}}))
	if core, _ := s.CoreMemories(t.Context(), ana); len(core) != 0 {
		t.Fatalf("core after demotion = %+v", core)
	}
	active, err := s.ActiveMemories(t.Context(), ana)
	if err != nil || len(active) != 1 || active[0].ID != "m2" || active[0].Tier != 2 {
		t.Fatalf("active = %+v, %v", active, err)
	}
	scopes, err := s.Scopes(t.Context())
	if err != nil || fmt.Sprint(scopes) != "[{ns ana} {ns bob}]" {
		t.Fatalf("scopes = %v, %v", scopes, err)
	}
}

func TestForgetUser(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ana := memory.Scope{Namespace: "ns", User: "ana"}
	mustApply(t, s, turn(1, "ana", "s1", 0, "secret plans"), turn(2, "bob", "s1", 0, "bob's plans"), added(3, "ana", "m1", "secret", 0.5),
		derived(4, "ana", events.TypeScratchpadUpdated, &events.Scratchpad{Content: "x", Source: "person"}))
	mustApply(t, s, derived(5, "ana", events.TypeUserForgotten, &events.UserForgotten{Reason: "request"}))
	if n, _ := s.CountTurns(t.Context(), ana); n != 0 {
		t.Fatalf("%d turns left", n)
	}
	if mems, _ := s.Memories(t.Context(), memory.MemoryQuery{Scope: ana, Status: "all"}); len(mems) != 0 {
		t.Fatalf("memories left: %+v", mems)
	}
	if p, _ := s.Scratchpad(t.Context(), ana); p.Content != "" {
		t.Fatalf("scratchpad left: %+v", p)
	}
	if n, _ := s.CountTurns(t.Context(), memory.Scope{Namespace: "ns", User: "bob"}); n != 1 {
		t.Fatalf("bob has %d turns, want 1", n)
	}
}

// A session's episode links the memories extracted from the session
// whichever the stream holds first: the episode (built by a consolidator
// whose read model had not yet applied the extraction, as one run apart
// may) or the extraction. Both orders end in the same read model.
func TestEpisodeLinksSessionMemoriesInEitherOrder(t *testing.T) {
	t.Parallel()
	turns := []memory.Applied{turn(1, "ana", "s1", 0, "我住在杭州"), turn(2, "ana", "s1", 1, "I prefer tea")}
	extracted := func(seq uint64) memory.Applied {
		a := derived(seq, "ana", events.TypeMemoryExtracted, &events.MemoryExtracted{RequestID: "r1", SessionID: "s1",
			Extractor: "rules", Turns: []int{0, 1}, Candidates: []events.Candidate{
				{Kind: "fact", Category: "identity", Subject: "user", Predicate: "location", Content: "住在杭州", Importance: 0.8, Confidence: 0.95},
				{Kind: "preference", Category: "identity", Subject: "user", Predicate: "prefers", Content: "tea", Importance: 0.7, Confidence: 0.9},
				{Kind: "preference", Category: "identity", Subject: "user", Predicate: "maybe", Content: "too unsure", Importance: 0.3, Confidence: 0.1},
			}})
		a.Source, a.ID = "engram/extractor", "x1" // the memory ids come from the event's source and id
		return a
	}
	episode := func(seq uint64, linked []string) memory.Applied {
		return derived(seq, "ana", events.TypeEpisodeBuilt, &events.Episode{ID: "ep_1", SessionID: "s1", Summary: "tea in Hangzhou",
			Outcome: "completed", Started: time.Unix(1, 0), Ended: time.Unix(2, 0), Importance: 0.3, Source: events.SourceSessionEnd,
			Turns: []int{0, 1}, LinkedMemories: linked})
	}
	comp := derived(4, "ana", events.TypeEpisodeBuilt, &events.Episode{ID: "ep_c", SessionID: "s1", Summary: "part",
		Outcome: "ongoing", Started: time.Unix(1, 0), Ended: time.Unix(2, 0), Importance: 0.1, Source: events.SourceCompression, Turns: []int{0}})
	linked := func(s *Store) map[string]string {
		t.Helper()
		eps, err := s.Episodes(t.Context(), memory.Scope{Namespace: "ns", User: "ana"}, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, e := range eps {
			out[e.ID] = fmt.Sprint(e.LinkedMemories)
		}
		return out
	}

	extractedFirst := openTest(t)
	mustApply(t, extractedFirst, turns...)
	mustApply(t, extractedFirst, extracted(3), comp)
	ids, err := extractedFirst.SessionMemoryIDs(t.Context(), memory.Scope{Namespace: "ns", User: "ana"}, "s1", 10)
	if err != nil || len(ids) != 2 {
		t.Fatalf("session memories %v, %v; want the two confident ones", ids, err)
	}
	mustApply(t, extractedFirst, episode(5, ids))

	episodeFirst := openTest(t)
	mustApply(t, episodeFirst, turns...)
	mustApply(t, episodeFirst, episode(3, nil), comp)
	mustApply(t, episodeFirst, extracted(5))

	want := linked(extractedFirst)
	if got := linked(episodeFirst); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("episode first: linked %v; extraction first: %v", got, want)
	}
	if want["ep_c"] != "[]" {
		t.Fatalf("a compression episode links %s, want none (its turns came in the event)", want["ep_c"])
	}
}
