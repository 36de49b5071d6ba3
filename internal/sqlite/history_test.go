package sqlite

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// Every kind of change leaves a history entry of one shape: old and new
// are plain-text contents (never a memory as JSON), fields the other
// fields that changed, note what else explains it.
func TestHistoryOneShape(t *testing.T) {
	s := openTest(t)
	ana := memory.Scope{Namespace: "ns", User: "ana"}
	str := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	until := time.Unix(100, 0).UTC()
	pendingOne := func(seq uint64, id, content string) memory.Applied {
		return derived(seq, "ana", events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: id, Kind: "fact", Category: "event",
			Subject: "s-" + id, Predicate: "note", Content: content, Importance: 0.5, Confidence: 0.7})
	}
	lives := func(seq uint64, id, city string) memory.Applied {
		return derived(seq, "ana", events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: id, Kind: "identity", Category: "identity",
			Subject: "user", Predicate: "location", Content: "lives in " + city, Importance: 0.8, Confidence: 1})
	}
	mustApply(t, s,
		added(1, "ana", "m1", "likes green tea", 0.6),
		derived(2, "ana", events.TypeMemoryUpdated, &events.MemoryUpdated{MemoryID: "m1", Content: str("likes jasmine tea"),
			Kind: str("preference"), Importance: f(0.8)}),
		derived(3, "ana", events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: "m1-again", Kind: "preference", Category: "event",
			Subject: "s-m1", Predicate: "note", Content: "likes jasmine tea", Importance: 0.5, Confidence: 1}), // merges into m1
		lives(4, "home1", "Lisbon"), lives(5, "home2", "Porto"), // supersedes
		pendingOne(6, "p1", "may move to Berlin"), derived(7, "ana", events.TypePendingConfirmed, &events.PendingDecision{MemoryID: "p1"}),
		pendingOne(8, "p2", "has a cat"), derived(9, "ana", events.TypePendingIgnored, &events.PendingDecision{MemoryID: "p2"}),
		pendingOne(10, "p3", "plays chess"), derived(11, "ana", events.TypePendingSnoozed, &events.PendingDecision{MemoryID: "p3", Until: &until}),
		added(12, "ana", "a1", "uses vim", 0.5),
		derived(13, "ana", events.TypeMemoriesArchived, &events.MemoriesArchived{MemoryIDs: []string{"a1"}, Reason: "decay"}),
		added(14, "ana", "k1", "knows Go", 0.5), added(15, "ana", "k2", "knows Go well", 0.5),
		derived(16, "ana", events.TypeMemoriesMerged, &events.MemoriesMerged{Into: "k2", Merged: []string{"k1"}, Importance: 0.7,
			Content: str("knows Go very well"), ClusterID: "c1"}),
		derived(17, "ana", events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: "low", Kind: "fact", Category: "event",
			Subject: "user", Predicate: "note", Content: "maybe likes jazz", Importance: 0.5, Confidence: 0.3}),
		added(18, "ana", "d1", "secret plan", 0.5),
		derived(19, "ana", events.TypeMemoryDeleted, &events.MemoryDeleted{MemoryID: "d1", Reason: "asked to forget"}),
	)
	want := map[string][]memory.Change{
		"m1": {
			{Change: "created", New: "likes green tea"},
			{Change: "updated", Old: "likes green tea", New: "likes jasmine tea",
				Fields: map[string]memory.Delta{"kind": {Old: "fact", New: "preference"}, "importance": {Old: "0.6", New: "0.8"}}},
			// Said again, the preference of 0.8 joins the core profile.
			{Change: "merged", Old: "likes jasmine tea", New: "likes jasmine tea", Note: "said again: likes jasmine tea",
				Fields: map[string]memory.Delta{"tier": {Old: "2", New: "1"}}},
		},
		"home1": {
			{Change: "created", New: "lives in Lisbon"},
			{Change: "superseded", Old: "lives in Lisbon", New: "lives in Lisbon", Note: "superseded by home2",
				Fields: map[string]memory.Delta{"status": {Old: "active", New: "superseded"}}},
		},
		"p1": {
			{Change: "created", New: "may move to Berlin"},
			{Change: "confirmed", Old: "may move to Berlin", New: "may move to Berlin",
				Fields: map[string]memory.Delta{"status": {Old: "pending", New: "active"}}},
		},
		"p2": {
			{Change: "created", New: "has a cat"},
			{Change: "ignored", Old: "has a cat", New: "has a cat", Fields: map[string]memory.Delta{"status": {Old: "pending", New: "rejected"}}},
		},
		"p3": {
			{Change: "created", New: "plays chess"},
			{Change: "snoozed", Old: "plays chess", New: "plays chess", Note: "until 1970-01-01T00:01:40Z",
				Fields: map[string]memory.Delta{"snoozed_until": {Old: "", New: "1970-01-01T00:01:40Z"}}},
		},
		"a1": {
			{Change: "created", New: "uses vim"},
			{Change: "archived", Old: "uses vim", New: "uses vim", Note: "decay", Fields: map[string]memory.Delta{"status": {Old: "active", New: "archived"}}},
		},
		"k1": {
			{Change: "created", New: "knows Go"},
			{Change: "merged", Old: "knows Go", New: "knows Go", Note: "merged into k2", Fields: map[string]memory.Delta{"status": {Old: "active", New: "superseded"}}},
		},
		"k2": {
			{Change: "created", New: "knows Go well"},
			{Change: "merged", Old: "knows Go well", New: "knows Go very well", Note: "absorbed 1 (cluster c1)",
				Fields: map[string]memory.Delta{"importance": {Old: "0.5", New: "0.7"}}},
		},
		"low": {{Change: "dropped", New: "maybe likes jazz", Note: "confidence 0.30 < 0.60"}},
		"d1":  {{Change: "deleted", Note: "asked to forget"}},
	}
	for id, changes := range want {
		got, err := s.History(t.Context(), ana, id)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if strings.HasPrefix(got[i].Old, "{") || strings.HasPrefix(got[i].New, "{") {
				t.Errorf("%s %s: a memory as JSON in the history: %+v", id, got[i].Change, got[i])
			}
			got[i].MemoryID, got[i].Cause, got[i].Time, got[i].SaidAt = "", "", time.Time{}, time.Time{}
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(changes)
		if string(g) != string(w) {
			t.Errorf("history of %s:\n got %s\nwant %s", id, g, w)
		}
	}
}

// A read model from before migration 13 has its history rewritten into
// the one shape: an update's JSON snapshots become contents and fields,
// notes leave the content columns.
func TestHistoryShapeMigration(t *testing.T) {
	s := openTest(t)
	ana := memory.Scope{Namespace: "ns", User: "ana"}
	mustApply(t, s, added(1, "ana", "m1", "likes jasmine tea", 0.8), added(2, "ana", "m2", "lives in Lisbon", 0.5))
	old, _ := json.Marshal(map[string]any{"content": "likes green tea", "kind": "fact", "importance": 0.6, "updated": "x"})
	cur, _ := json.Marshal(map[string]any{"content": "likes jasmine tea", "kind": "preference", "importance": 0.8, "updated": "x"})
	for _, row := range [][]string{
		{"m1", "updated", string(old), string(cur)},
		{"m2", "superseded", "lives in Lisbon", "superseded by m9"},
		{"m2", "archived", "", "decay"},
	} {
		if _, err := s.w.ExecContext(t.Context(), `INSERT INTO memory_history (memory_id, namespace, user_id, change, old, new, cause, time)
			VALUES (?, 'ns', 'ana', ?, ?, ?, 'old', 1)`, row[0], row[1], row[2], row[3]); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := s.w.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fillHistoryShape(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	h, _ := s.History(t.Context(), ana, "m1")
	if got := h[len(h)-1]; got.Old != "likes green tea" || got.New != "likes jasmine tea" ||
		got.Fields["kind"] != (memory.Delta{Old: "fact", New: "preference"}) || got.Fields["importance"] != (memory.Delta{Old: "0.6", New: "0.8"}) {
		t.Errorf("the update after migration: %+v", got)
	}
	h, _ = s.History(t.Context(), ana, "m2")
	if got := h[len(h)-2]; got.Old != "lives in Lisbon" || got.New != "lives in Lisbon" || got.Note != "superseded by m9" {
		t.Errorf("the supersede after migration: %+v", got)
	}
	if got := h[len(h)-1]; got.New != "lives in Lisbon" || got.Note != "decay" {
		t.Errorf("the archive after migration: %+v", got)
	}
}
