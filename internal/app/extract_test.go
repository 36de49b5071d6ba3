package app

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
)

func endEvent(id, user, session string, n int) map[string]any {
	return map[string]any{"specversion": "1.0", "id": id, "source": "test/agent", "type": "session.ended", "user": user,
		"data": map[string]any{"session_id": session, "message_count": n, "reason": "done"}}
}

func listMemories(t *testing.T, a *App, user, query string) []memory.Memory {
	t.Helper()
	r := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/memories?namespace=default&user="+url.QueryEscape(user)+query, "", nil, nil)
	if r.Status != 200 {
		t.Fatalf("list memories: %d %s", r.Status, r.Raw)
	}
	var out struct{ Memories []memory.Memory }
	if err := json.Unmarshal([]byte(r.Raw), &out); err != nil {
		t.Fatal(err)
	}
	return out.Memories
}

func find(mems []memory.Memory, subject, predicate string) []memory.Memory {
	var out []memory.Memory
	for _, m := range mems {
		if m.Subject == subject && m.Predicate == predicate {
			out = append(out, m)
		}
	}
	return out
}

// With no LLM configured, the rule extractor turns what users say into
// memories with subject and predicate, in Chinese and in English.
func TestExtractionWithoutLLM(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	mustAccept(t, postBatch(t, a,
		turnEvent("zh-0", "lilei", "s1", 0, "user", "我叫李雷，我喜欢喝美式咖啡"),
		endEvent("zh-end", "lilei", "s1", 1),
		turnEvent("en-0", "ana", "s1", 0, "user", "My name is Ana and I prefer dark mode"),
		endEvent("en-end", "ana", "s1", 1),
	))
	waitSettled(t, a)

	zh := listMemories(t, a, "lilei", "")
	if n := find(zh, "user", "name"); len(n) != 1 || !strings.Contains(n[0].Content, "李雷") {
		t.Fatalf("lilei's name: %+v", zh)
	}
	if p := find(zh, "user", "likes"); len(p) != 1 || !strings.Contains(p[0].Content, "美式咖啡") || p[0].Kind != memory.KindPreference {
		t.Fatalf("lilei's preference: %+v", zh)
	}
	en := listMemories(t, a, "ana", "")
	if n := find(en, "user", "name"); len(n) != 1 || !strings.Contains(n[0].Content, "Ana") || n[0].Source != "rules" {
		t.Fatalf("ana's name: %+v", en)
	}
	if p := find(en, "user", "prefers"); len(p) != 1 || !strings.Contains(p[0].Content, "dark mode") {
		t.Fatalf("ana's preference: %+v", en)
	}
	// Tenancy: one user's memories never reach another.
	for _, m := range listMemories(t, a, "ana", "&status=all") {
		if strings.Contains(m.Content, "李雷") {
			t.Fatalf("ana sees lilei's memory %q", m.Content)
		}
	}
	if hits := searchHTTP(t, a, "default", "lilei", "咖啡"); len(hits) == 0 || hits[0].Kind != memory.ResultMemory {
		t.Fatalf("search 咖啡: want the memory first, got %+v", hits)
	}
	// Every turn ended extracted.
	if n := countUnextracted(t, a); n != 0 {
		t.Fatalf("%d turns never extracted", n)
	}
}

func countUnextracted(t *testing.T, a *App) int {
	t.Helper()
	n := 0
	for _, st := range readStores(a) {
		turns, err := st.Unextracted(t.Context(), time.Now().Add(time.Hour), 1000)
		if err != nil {
			t.Fatal(err)
		}
		n += len(turns)
	}
	return n
}

// A changed fact supersedes the old one, in each language: the active
// memory says the new value; the old one is kept, found through status,
// history and as_of.
func TestUpdatesSupersede(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	for _, tc := range []struct {
		user, before, after, subject, predicate, oldWord, newWord string
	}{
		{"en", "We use Python 3.10 for the backend", "We upgraded to Python 3.12 last week", "python", "version", "3.10", "3.12"},
		{"zh", "我们用的是 Python 3.10", "我们升级到 Python 3.12 了", "python", "version", "3.10", "3.12"},
		{"zh2", "我住在上海", "我住在北京", "user", "location", "上海", "北京"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			first := turnEvent(tc.user+"-0", tc.user, "s1", 0, "user", tc.before)
			mustAccept(t, postBatch(t, a, first, endEvent(tc.user+"-e1", tc.user, "s1", 1)))
			waitSettled(t, a)
			between := time.Now().UTC()
			second := turnEvent(tc.user+"-1", tc.user, "s2", 0, "user", tc.after)
			second["time"] = time.Now().UTC().Add(time.Second).Format(time.RFC3339Nano)
			end := endEvent(tc.user+"-e2", tc.user, "s2", 1)
			mustAccept(t, postBatch(t, a, second, end))
			waitSettled(t, a)

			active := find(listMemories(t, a, tc.user, ""), tc.subject, tc.predicate)
			if len(active) != 1 || !strings.Contains(active[0].Content, tc.newWord) {
				t.Fatalf("active %s/%s = %+v, want one saying %s", tc.subject, tc.predicate, active, tc.newWord)
			}
			old := find(listMemories(t, a, tc.user, "&status=superseded"), tc.subject, tc.predicate)
			if len(old) != 1 || !strings.Contains(old[0].Content, tc.oldWord) || old[0].SupersededBy != active[0].ID {
				t.Fatalf("superseded = %+v, want the %s memory, superseded by %s", old, tc.oldWord, active[0].ID)
			}
			if active[0].Supersedes != old[0].ID {
				t.Fatalf("new memory supersedes %q, want %q", active[0].Supersedes, old[0].ID)
			}
			past := find(listMemories(t, a, tc.user, "&as_of="+url.QueryEscape(between.Format(time.RFC3339Nano))), tc.subject, tc.predicate)
			if len(past) != 1 || past[0].ID != old[0].ID {
				t.Fatalf("as_of before the update = %+v, want the old value", past)
			}
			r := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/memories/"+old[0].ID+"?user="+tc.user, "", nil, nil)
			if r.Status != 200 || !strings.Contains(r.Raw, `"superseded"`) {
				t.Fatalf("history of the old memory: %d %s", r.Status, r.Raw)
			}
		})
	}
}

// Manual memories go through the stream like everything else: add, patch,
// delete, and the pending queue's confirm / ignore / snooze.
func TestManualMemoriesAndPending(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	base := "http://" + a.HTTPAddr()
	add := func(body string) string {
		r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(body), nil)
		if r.Status != 202 {
			t.Fatalf("add: %d %s", r.Status, r.Raw)
		}
		return r.Body["memory_id"].(string)
	}
	id := add(`{"user":"kim","kind":"preference","category":"config","subject":"user","predicate":"prefers","content":"回答用中文","importance":0.9}`)
	mems := listMemories(t, a, "kim", "")
	if len(mems) != 1 || mems[0].ID != id || mems[0].Source != "manual" {
		t.Fatalf("after add: %+v", mems)
	}
	if r := do(t, "PATCH", base+"/v1/memories/"+id+"?user=kim&wait=true", "application/json", []byte(`{"content":"回答一律用简体中文"}`), nil); r.Status != 202 {
		t.Fatalf("patch: %d %s", r.Status, r.Raw)
	}
	if got := listMemories(t, a, "kim", "")[0].Content; got != "回答一律用简体中文" {
		t.Fatalf("after patch: %q", got)
	}
	if r := do(t, "PATCH", base+"/v1/memories/"+id+"?user=someone-else", "application/json", []byte(`{"content":"x"}`), nil); r.Status != 404 {
		t.Fatalf("patch of another user's memory: %d, want 404", r.Status)
	}
	if r := do(t, "DELETE", base+"/v1/memories/"+id+"?user=kim&wait=true", "", nil, nil); r.Status != 202 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	if mems := listMemories(t, a, "kim", "&status=all"); len(mems) != 0 {
		t.Fatalf("after delete: %+v", mems)
	}

	// Confidence 0.7 routes to pending; 0.4 is dropped but recorded.
	p1 := add(`{"user":"kim","kind":"fact","category":"event","subject":"user","predicate":"note","content":"下周三去杭州出差","confidence":0.7}`)
	p2 := add(`{"user":"kim","kind":"fact","category":"event","subject":"user","predicate":"note","content":"周末可能去爬山","confidence":0.7}`)
	p3 := add(`{"user":"kim","kind":"fact","category":"event","subject":"user","predicate":"note","content":"也许喜欢猫","confidence":0.7}`)
	add(`{"user":"kim","kind":"fact","category":"event","subject":"user","predicate":"note","content":"maybe something","confidence":0.4}`)
	pending := func() []string {
		r := do(t, "GET", base+"/v1/pending?user=kim", "", nil, nil)
		var out struct{ Pending []memory.Memory }
		if err := json.Unmarshal([]byte(r.Raw), &out); err != nil {
			t.Fatalf("pending: %v in %s", err, r.Raw)
		}
		var ids []string
		for _, m := range out.Pending {
			ids = append(ids, m.ID)
		}
		return ids
	}
	if got := pending(); len(got) != 3 {
		t.Fatalf("pending = %v, want 3", got)
	}
	if n := len(listMemories(t, a, "kim", "&status=rejected")); n != 1 {
		t.Fatalf("rejected (dropped) = %d, want 1", n)
	}
	for id, action := range map[string]string{p1: "confirm", p2: "ignore", p3: "snooze"} {
		if r := do(t, "POST", base+"/v1/pending/"+id+"/"+action+"?user=kim&wait=true", "application/json", []byte(`{}`), nil); r.Status != 202 {
			t.Fatalf("%s: %d %s", action, r.Status, r.Raw)
		}
	}
	if got := pending(); len(got) != 0 {
		t.Fatalf("pending after decisions = %v (snoozed must be hidden)", got)
	}
	active := listMemories(t, a, "kim", "")
	if len(active) != 1 || active[0].ID != p1 {
		t.Fatalf("active after confirm = %+v", active)
	}
	if r := do(t, "POST", base+"/v1/pending/"+p1+"/confirm?user=kim", "application/json", nil, nil); r.Status != 409 {
		t.Fatalf("confirming an active memory: %d, want 409", r.Status)
	}
}

// Every memory written with importance ≥ 0.8 is announced on the stream.
func TestImportantMemoryEvent(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	mustAccept(t, postBatch(t, a, turnEvent("i-0", "lu", "s1", 0, "user", "我叫陆明"), endEvent("i-e", "lu", "s1", 1)))
	waitSettled(t, a)
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(t.Context(), stream.Subject("default", "lu", "memory.write.important"))
	if err != nil {
		t.Fatalf("no memory.write.important: %v", err)
	}
	name := find(listMemories(t, a, "lu", ""), "user", "name")
	if len(name) != 1 || !strings.Contains(string(m.Data), name[0].ID) {
		t.Fatalf("important event %s does not name the memory %+v", m.Data, name)
	}
}
