package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/engramhq/engram/internal/stream"
)

// A client of namespace A that sends the {source, id} of namespace B's
// next event must not make B's event a duplicate: CloudEvents identity is
// the tenant's, not the stream's.
func TestDedupIsScopedByTenant(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.HTTP.Tokens = map[string]string{"token-of-tenant-a-0001": "a", "token-of-tenant-b-0001": "b"}
	a := startApp(t, cfg, RoleAll)
	post := func(token, ns, user, content string) httpResult {
		ev := turnEvent("turn-0001", user, "s1", 0, "user", content)
		ev["namespace"] = ns
		b, _ := json.Marshal(ev)
		return do(t, "POST", "http://"+a.HTTPAddr()+"/v1/events", "application/cloudevents+json", b,
			map[string]string{"Authorization": "Bearer " + token})
	}
	// The attacker goes first, with B's next event identity.
	r := post("token-of-tenant-a-0001", "a", "mallory", "attacker's turn")
	mustAccept(t, r)
	r = post("token-of-tenant-b-0001", "b", "bob", "bob's own words about kayaks")
	mustAccept(t, r)
	if got := r.Body["duplicates"].(float64); got != 0 {
		t.Fatalf("tenant b's event was taken for a duplicate of tenant a's: %s", r.Raw)
	}
	waitProjected(t, a, lastSeqOf(r))
	v := url.Values{"namespace": {"b"}, "user": {"bob"}, "q": {"kayaks"}}
	s := do(t, "GET", "http://"+a.HTTPAddr()+"/v1/search?"+v.Encode(), "", nil,
		map[string]string{"Authorization": "Bearer token-of-tenant-b-0001"})
	if s.Status != 200 || len(s.Body["results"].([]any)) != 1 {
		t.Fatalf("tenant b's turn is not in the read model: %d %s", s.Status, s.Raw)
	}
	// The same event sent again in its own tenant is still a duplicate.
	r = post("token-of-tenant-b-0001", "b", "bob", "bob's own words about kayaks")
	if r.Status != http.StatusAccepted || r.Body["duplicates"].(float64) != 1 {
		t.Fatalf("a resend within the tenant: %d %s, want one duplicate", r.Status, r.Raw)
	}
}

// A client memory_id is the tenant's name for its memory: the same id in
// another namespace is another memory, not a dead letter.
func TestMemoryIDIsScopedByTenant(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	base := "http://" + a.HTTPAddr()
	for _, ns := range []string{"a", "b"} {
		body := `{"namespace":"` + ns + `","user":"u","memory_id":"pref-1","kind":"preference","category":"config",` +
			`"subject":"user","predicate":"prefers","content":"tea in ` + ns + `","importance":0.9}`
		r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(body), nil)
		if r.Status != http.StatusAccepted {
			t.Fatalf("add pref-1 in %s: %d %s", ns, r.Status, r.Raw)
		}
	}
	waitSettled(t, a)
	for _, ns := range []string{"a", "b"} {
		r := do(t, "GET", base+"/v1/memories/pref-1?namespace="+ns+"&user=u", "", nil, nil)
		if r.Status != 200 {
			t.Fatalf("pref-1 in %s: %d %s", ns, r.Status, r.Raw)
		}
		if got, want := r.Body["memory"].(map[string]any)["content"], "tea in "+ns; got != want {
			t.Fatalf("pref-1 in %s: content %v, want %q", ns, got, want)
		}
	}
	if dls, err := stream.ListDeadLetters(t.Context(), jsOf(a), stream.DLQFilter{}); err != nil || len(dls) != 0 {
		t.Fatalf("dead letters: %+v, %v", dls, err)
	}
}
