package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

// GET /v1/users lists a namespace's users with their counts, the most
// recently seen first; a token reaches only its own namespace's.
func TestUsersList(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.HTTP.Tokens = map[string]string{"token-a-0123456789": "a", "token-all-0123456789": "*"}
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	auth := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	var evs []any
	for i, u := range []struct{ ns, user, text string }{
		{"a", "ana", "I live in Lisbon"}, {"a", "ana", "I prefer dark mode"}, {"a", "bo", "hello"}, {"b", "cy", "I live in Porto"},
	} {
		ev := turnEvent("u-"+u.user+string(rune('0'+i)), u.user, "s-"+u.user, i, "user", u.text)
		ev["namespace"] = u.ns
		evs = append(evs, ev)
	}
	b, _ := json.Marshal(evs)
	mustAccept(t, do(t, "POST", base+"/v1/events?wait=memories", "application/cloudevents-batch+json", b, auth("token-all-0123456789")))

	var got struct {
		Namespace string
		Users     []struct {
			User                               string
			Memories, Pending, Sessions, Turns int
		}
	}
	r := do(t, "GET", base+"/v1/users?namespace=a", "", nil, auth("token-a-0123456789"))
	if r.Status != http.StatusOK || json.Unmarshal([]byte(r.Raw), &got) != nil {
		t.Fatalf("users of a: %d %s", r.Status, r.Raw)
	}
	if len(got.Users) != 2 || got.Users[0].User != "bo" || got.Users[1].User != "ana" {
		t.Fatalf("users of a, the latest seen first: %s", r.Raw)
	}
	if ana := got.Users[1]; ana.Memories != 2 || ana.Sessions != 1 || ana.Turns != 2 {
		t.Errorf("ana's counts: %+v, want 2 memories, 1 session, 2 turns", ana)
	}
	if strings.Contains(r.Raw, "cy") {
		t.Errorf("namespace b's user in a's list: %s", r.Raw)
	}
	if r := do(t, "GET", base+"/v1/users?namespace=b", "", nil, auth("token-a-0123456789")); r.Status != http.StatusForbidden {
		t.Errorf("a's token listing b's users: %d %s, want 403", r.Status, r.Raw)
	}
	if r := do(t, "GET", base+"/v1/users?namespace=a&prefix=an", "", nil, auth("token-a-0123456789")); !strings.Contains(r.Raw, `"ana"`) || strings.Contains(r.Raw, `"bo"`) {
		t.Errorf("prefix an: %s", r.Raw)
	}
	if r := do(t, "GET", base+"/v1/users?namespace=a&limit=0", "", nil, auth("token-a-0123456789")); r.Status != http.StatusBadRequest || !strings.Contains(r.Raw, "limit") {
		t.Errorf("limit=0: %d %s", r.Status, r.Raw)
	}
}

// The startup log says where the console, MCP and the OpenAPI document are.
func TestStartupLogsURLs(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	a := New(testConfig(t, t.TempDir()), RoleAll, zap.New(zapcore.NewTee(zaptest.NewLogger(t).Core(), core)))
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	base := "http://" + a.HTTPAddr()
	for _, want := range []string{base + "/console/", base + "/mcp", base + "/openapi.json"} {
		found := false
		for _, e := range logs.All() {
			if e.ContextMap()["url"] == want {
				found = true
			}
		}
		if !found {
			t.Errorf("no info line with url %s in the startup log", want)
		}
	}
}
