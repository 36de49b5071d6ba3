package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// Issue 10, confirmation (seed 004 §7): an ignored candidate is not
// proposed again for the same subject, predicate and value; a snoozed one
// reads "snoozed"; confidence rises when a fact is stated again.
func TestConfirmationIgnoreSnoozeAndRise(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	base := "http://" + a.HTTPAddr()
	add := func(body string) string {
		t.Helper()
		r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(body), nil)
		if r.Status != 202 {
			t.Fatalf("add: %d %s", r.Status, r.Raw)
		}
		return r.Body["memory_id"].(string)
	}
	get := func(id string) (memory.Memory, []memory.Change) {
		t.Helper()
		r := do(t, "GET", base+"/v1/memories/"+id+"?user=nora", "", nil, nil)
		if r.Status != 200 {
			t.Fatalf("get %s: %d %s", id, r.Status, r.Raw)
		}
		var out struct {
			Memory  memory.Memory
			History []memory.Change
		}
		if err := json.Unmarshal([]byte(r.Raw), &out); err != nil {
			t.Fatal(err)
		}
		return out.Memory, out.History
	}
	decide := func(id, action, body string) {
		t.Helper()
		if r := do(t, "POST", base+"/v1/pending/"+id+"/"+action+"?user=nora&wait=true", "application/json", []byte(body), nil); r.Status != 202 {
			t.Fatalf("%s %s: %d %s", action, id, r.Status, r.Raw)
		}
	}
	const cat = `{"user":"nora","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"用户喜欢猫","confidence":0.7}`

	ignored := add(cat)
	decide(ignored, "ignore", `{}`)
	again := add(cat)
	if m, hist := get(again); m.Status != memory.StatusRejected || len(hist) == 0 || !strings.Contains(hist[len(hist)-1].Note, "ignored by the user") {
		t.Fatalf("said again after ignore: status %s, history %+v; want rejected with the reason", m.Status, hist)
	}
	r := do(t, "GET", base+"/v1/pending?user=nora", "", nil, nil)
	if strings.Contains(r.Raw, again) || strings.Contains(r.Raw, "用户喜欢猫") {
		t.Fatalf("the ignored candidate is proposed again: %s", r.Raw)
	}

	snoozed := add(`{"user":"nora","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"用户喜欢爬山","confidence":0.7}`)
	decide(snoozed, "snooze", `{"until":"`+time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339)+`"}`)
	if m, _ := get(snoozed); m.Status != memory.StatusSnoozed {
		t.Fatalf("snoozed memory reads %q, want %q", m.Status, memory.StatusSnoozed)
	}
	decide(snoozed, "confirm", `{}`) // a snoozed memory can still be decided
	if m, _ := get(snoozed); m.Status != memory.StatusActive {
		t.Fatalf("snoozed then confirmed: %q, want active", m.Status)
	}

	first := add(`{"user":"nora","kind":"fact","category":"config","subject":"user","predicate":"note","content":"用户的车是蓝色的","confidence":0.7}`)
	add(`{"user":"nora","kind":"fact","category":"config","subject":"user","predicate":"note","content":"用户的车是蓝色的","confidence":0.7}`)
	m, _ := get(first)
	if m.Confidence <= 0.7 || m.Status != memory.StatusActive {
		t.Fatalf("stated twice: confidence %.2f, status %s; want it to rise past 0.85 and be active", m.Confidence, m.Status)
	}
}
