package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/wait"
)

// Issue 10 item 12: a person's edit of MEMORY.md becomes memory events — a
// line edited, one added, one deleted — and the card is not reverted.
func TestMemoryCardEditedByHand(t *testing.T) {
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
	tea := add(`{"user":"ed","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"User likes green tea","importance":0.8}`)
	emoji := add(`{"user":"ed","kind":"rule","category":"config","subject":"user","predicate":"rule","content":"Rule: never use emoji","importance":0.8}`)
	name := add(`{"user":"ed","kind":"identity","category":"identity","subject":"user","predicate":"name","content":"User's name is Ed","importance":0.9}`)

	path := filepath.Join(consolidation.CardsPath(a.Config.CardsPath(), memory.Scope{Namespace: "default", User: "ed"}), consolidation.MemoryCard)
	read := func() string {
		b, _ := os.ReadFile(path)
		return string(b)
	}
	wait.Until(t, "MEMORY.md with the three memories", func() bool {
		s := read()
		return strings.Contains(s, "green tea <!-- "+tea+" -->") && strings.Contains(s, emoji) && strings.Contains(s, name)
	})
	card := read()
	edited := strings.Replace(card, "User likes green tea <!--", "User likes oolong tea <!--", 1)
	edited = strings.Replace(edited, "- Rule: never use emoji <!-- "+emoji+" -->\n", "", 1)
	edited = strings.Replace(edited, "## Identity\n", "## Identity\n- User works at Globex\n", 1)
	if edited == card || strings.Contains(edited, emoji) {
		t.Fatalf("setup: the edit did not apply to\n%s", card)
	}
	if err := os.WriteFile(path, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}

	active := func() map[string]string {
		r := do(t, "GET", base+"/v1/memories?user=ed", "", nil, nil)
		var out struct{ Memories []memory.Memory }
		_ = json.Unmarshal([]byte(r.Raw), &out)
		m := map[string]string{}
		for _, mem := range out.Memories {
			m[mem.Content] = mem.ID
		}
		return m
	}
	deadline := time.Now().Add(20 * time.Second)
	for m := active(); !(m["User likes oolong tea"] == tea && m["Rule: never use emoji"] == ""); m = active() {
		if time.Now().After(deadline) {
			last, _ := os.ReadFile(filepath.Join(filepath.Dir(path), ".MEMORY.md.engram"))
			t.Fatalf("the edit did not reach the memories: %v\nMEMORY.md:\n%s\nlast written:\n%s", m, read(), last)
		}
		time.Sleep(5 * time.Millisecond)
	}
	wait.Until(t, "the edit to reach the memories", func() bool {
		m := active()
		_, globex := m["User works at Globex"]
		return m["User likes oolong tea"] == tea && globex && m["Rule: never use emoji"] == "" && m["User's name is Ed"] == name
	})
	r := do(t, "GET", base+"/v1/memories/"+emoji+"?user=ed", "", nil, nil)
	if r.Status != 404 {
		t.Errorf("the deleted line's memory: %d %s", r.Status, r.Raw)
	}
	globex := active()["User works at Globex"]
	if r := do(t, "GET", base+"/v1/memories/"+globex+"?user=ed", "", nil, nil); r.Status != 200 || r.Body["memory"].(map[string]any)["kind"] != "identity" {
		t.Errorf("the added line's memory: %d %s", r.Status, r.Raw)
	}
	// The card is re-rendered with the edit, ids and all, never reverted.
	wait.Until(t, "MEMORY.md re-rendered with the edit", func() bool {
		s := read()
		return strings.Contains(s, "User likes oolong tea <!-- "+tea+" -->") && strings.Contains(s, "User works at Globex <!-- "+globex+" -->")
	})
	if s := read(); strings.Contains(s, "green tea") || strings.Contains(s, "emoji") {
		t.Fatalf("the card was reverted:\n%s", s)
	}
	// A later change renders the card again, still with the edit.
	add(`{"user":"ed","kind":"fact","category":"event","subject":"user","predicate":"note","content":"User adopted a cat","importance":0.8}`)
	wait.Until(t, "MEMORY.md with the new memory", func() bool { return strings.Contains(read(), "User adopted a cat") })
	if s := read(); !strings.Contains(s, "oolong") || strings.Contains(s, "green tea") || strings.Contains(s, "emoji") {
		t.Fatalf("after another change:\n%s", s)
	}

	// USER.md both ways too: a basic-info line edited, a preference
	// added, a line deleted.
	userPath := filepath.Join(filepath.Dir(path), consolidation.UserCard)
	readUser := func() string {
		b, _ := os.ReadFile(userPath)
		return string(b)
	}
	wait.Until(t, "USER.md with the edit", func() bool {
		s := readUser()
		return strings.Contains(s, "User's name is Ed <!-- "+name+" -->") && strings.Contains(s, "User works at Globex <!-- "+globex+" -->") &&
			strings.Contains(s, "## Preferences\n")
	})
	user := readUser()
	editedUser := strings.Replace(user, "User's name is Ed <!--", "User's name is Eddie <!--", 1)
	editedUser = strings.Replace(editedUser, "- User works at Globex <!-- "+globex+" -->\n", "", 1)
	editedUser = strings.Replace(editedUser, "## Preferences\n", "## Preferences\n- User prefers tabs over spaces\n", 1)
	if err := os.WriteFile(userPath, []byte(editedUser), 0o640); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the USER.md edit to reach the memories", func() bool {
		m := active()
		_, tabs := m["User prefers tabs over spaces"]
		return m["User's name is Eddie"] == name && m["User works at Globex"] == "" && tabs
	})
	wait.Until(t, "USER.md re-rendered with the edit", func() bool {
		s := readUser()
		return strings.Contains(s, "User's name is Eddie <!-- "+name+" -->") && strings.Contains(s, "User prefers tabs over spaces <!--")
	})
	if s := readUser(); strings.Contains(s, "Globex") || strings.Contains(s, "name is Ed <") {
		t.Fatalf("USER.md was reverted:\n%s", s)
	}
}
