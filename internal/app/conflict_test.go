package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/mcpserver"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/secrets/corpus"
	"github.com/engramhq/engram/internal/stream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
)

// A write whose id is stored with other content is answered as a
// conflict that names the stored event, over HTTP (one event, a batch),
// the bus and the write API; a retry of the same write stays a duplicate,
// even when the server stamps its time or masks its secrets. The single
// binary and an ingest run apart, which may not read MEMORY and asks a
// retriever for the stored event's digest, answer alike.
func TestConflictNamesTheStoredEvent(t *testing.T) {
	t.Parallel()
	t.Run("single binary", func(t *testing.T) {
		cfg := testConfig(t, t.TempDir())
		cfg.NATS.Listen = "127.0.0.1:0"
		a := startApp(t, cfg, RoleAll)
		nc, _ := agentConn(t, a, "default")
		conflictCases(t, a, a, nc)

		base := "http://" + a.HTTPAddr()
		add := func(content string) httpResult {
			body := `{"user":"cleo","kind":"fact","category":"event","subject":"user","predicate":"flies_to","content":"` + content + `"}`
			return do(t, "POST", base+"/v1/memories", "application/json", []byte(body), map[string]string{"Idempotency-Key": "k-1"})
		}
		r := add("flies to Osaka")
		if r.Status != http.StatusAccepted || r.Body["duplicate"] != false {
			t.Fatalf("add: %d %s", r.Status, r.Raw)
		}
		stored := uint64(r.Body["seq"].(float64))
		if again := add("flies to Osaka"); again.Status != http.StatusAccepted || again.Body["duplicate"] != true {
			t.Fatalf("the same add again: %d %s", again.Status, again.Raw)
		}
		other := add("flies to Kyoto")
		want := fmt.Sprintf("event api-add-k-1 from engram/api is stored (seq %d) with other content", stored)
		if other.Status != http.StatusConflict || errorCode(other) != "conflict" || !strings.Contains(other.Raw, want) {
			t.Fatalf("the write API, the same key with other content: %d %s, want 409 saying %q", other.Status, other.Raw, want)
		}
	})
	t.Run("ingest apart", func(t *testing.T) {
		bus := externalNATS(t)
		worker := func(roles Roles) *App {
			cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
			bus.use(&cfg)
			return startApp(t, cfg, roles)
		}
		ingest, retriever := worker(RoleIngest), worker(RoleRetriever)
		nc, err := stream.Connect(stream.ConnConfig{URL: bus.URL, Name: "agent-default",
			NKey: (&stream.Auth{Dir: bus.authDir}).SeedFile(stream.RoleAgent, "default")},
			nats.CustomInboxPrefix(stream.AgentInboxPrefix("default")))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		conflictCases(t, ingest, retriever, nc)
	})
	t.Run("ingest apart without a retriever", func(t *testing.T) {
		bus := externalNATS(t)
		cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
		bus.use(&cfg)
		ingest := startApp(t, cfg, RoleIngest)
		mustAccept(t, postEvent(t, ingest, turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Lisbon")))
		// Nothing can tell a retry from a reused id: not stored anew,
		// and not called a duplicate either; sent again, it is answered.
		r := postEvent(t, ingest, turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Porto"))
		if r.Status != http.StatusServiceUnavailable || r.Body["duplicates"] == float64(1) {
			t.Fatalf("a reused id with no retriever to compare: %d %s, want 503", r.Status, r.Raw)
		}
	})
}

// conflictCases sends writes to ingest (over HTTP, and over the bus as
// agent) that reuse a stored id, and checks what retriever then finds.
func conflictCases(t *testing.T, ingest, retriever *App, agent *nats.Conn) {
	t.Helper()
	first := turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Lisbon")
	r := postEvent(t, ingest, first)
	mustAccept(t, r)
	seq := lastSeqOf(r)

	wantConflict := func(t *testing.T, r httpResult, index int, id string) {
		t.Helper()
		if r.Status != http.StatusConflict || errorCode(r) != "conflict" {
			t.Fatalf("status %d, want 409 conflict: %s", r.Status, r.Raw)
		}
		msg := r.Body["error"].(map[string]any)["message"].(string)
		if want := fmt.Sprintf("event %s from test/agent is stored (seq %d) with other content", id, seq); !strings.Contains(msg, want) {
			t.Fatalf("message %q does not say %q", msg, want)
		}
		res := r.Body["results"].([]any)[index].(map[string]any)
		if res["status"] != "conflict" || res["seq"] != float64(seq) {
			t.Fatalf("result %d: %v, want status conflict at seq %d", index, res, seq)
		}
	}

	t.Run("one event", func(t *testing.T) {
		wantConflict(t, postEvent(t, ingest, turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Porto")), 0, "c-1")
	})
	t.Run("batch", func(t *testing.T) {
		r := postBatch(t, ingest, turnEvent("c-2", "cleo", "s1", 1, "assistant", "Noted."),
			turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Porto"))
		wantConflict(t, r, 1, "c-1")
		if res := r.Body["results"].([]any)[0].(map[string]any); res["status"] != "accepted" || r.Body["accepted"] != float64(1) {
			t.Fatalf("the other event of the batch: %v", r.Raw)
		}
	})
	t.Run("bus", func(t *testing.T) {
		b, _ := json.Marshal(turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Porto"))
		reply, err := agent.RequestMsg(&nats.Msg{Subject: stream.InputSubject("default"), Data: b}, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := reply.Header.Get(natsapi.StatusHeader); got != "409" {
			t.Fatalf("%s: %q, want 409: %s", natsapi.StatusHeader, got, reply.Data)
		}
		var body map[string]any
		_ = json.Unmarshal(reply.Data, &body)
		wantConflict(t, httpResult{Status: 409, Body: body, Raw: string(reply.Data)}, 0, "c-1")
	})
	t.Run("retries stay duplicates", func(t *testing.T) {
		same := turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Lisbon")
		unstamped := turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Lisbon")
		delete(unstamped, "time") // the server stamps it, later than the first
		traced := turnEvent("c-1", "cleo", "s1", 0, "user", "I live in Lisbon")
		traced["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		for i, ev := range []map[string]any{same, unstamped, traced} {
			r := postEvent(t, ingest, ev)
			if r.Status != http.StatusAccepted || r.Body["duplicates"] != float64(1) || lastSeqOf(r) != seq {
				t.Fatalf("retry %d: %d %s, want a duplicate of seq %d", i, r.Status, r.Raw, seq)
			}
		}
	})
	t.Run("masked secret", func(t *testing.T) {
		secret := corpus.Secrets()[0]
		ev := turnEvent("c-3", "cleo", "s1", 2, "user", secret.Text)
		mustAccept(t, postEvent(t, ingest, ev))
		if r := postEvent(t, ingest, ev); r.Status != http.StatusAccepted || r.Body["duplicates"] != float64(1) {
			t.Fatalf("the same event with a secret, again: %d %s", r.Status, r.Raw)
		}
	})
	waitProjected(t, retriever, memoryLastSeq(t, retriever))
	if hits := searchHTTP(t, retriever, "default", "cleo", "Porto"); len(hits) != 0 {
		t.Fatalf("a refused write is searchable: %v", hits)
	}
	if hits := searchHTTP(t, retriever, "default", "cleo", "Lisbon"); len(hits) == 0 {
		t.Fatalf("the stored turn: %v", hits)
	}
}

// The same MCP remember twice with different text: both are stored, and
// the same call again is a duplicate. A stored event under the id a
// remember makes, with other content, makes the tool answer an error
// that names it.
func TestMCPRememberNeverSilentlyDropped(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	cs := mcpClient(t, &mcp.StreamableClientTransport{Endpoint: "http://" + a.HTTPAddr() + "/mcp", DisableStandaloneSSE: true})
	remember := func(content string) map[string]any {
		out, _ := call(t, cs, "remember", map[string]any{"user": "dana", "session_id": "s1", "turn_index": 0, "content": content})
		return out
	}
	for _, text := range []string{"I moved to Lisbon", "My sister lives in Porto"} {
		if out := remember(text); out["accepted"] != float64(1) {
			t.Fatalf("remember %q: %v, want it stored", text, out)
		}
	}
	if out := remember("My sister lives in Porto"); out["duplicates"] != float64(1) {
		t.Fatalf("the same remember again: %v, want a duplicate", out)
	}

	id := mcpserver.TurnEventID("s2", 0, "user", "I drink oolong")
	planted := turnEvent(id, "dana", "s2", 0, "user", "I drink coffee")
	planted["source"] = "mcp"
	r := postEvent(t, a, planted)
	mustAccept(t, r)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remember",
		Arguments: map[string]any{"user": "dana", "session_id": "s2", "turn_index": 0, "content": "I drink oolong"}})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	want := fmt.Sprintf("event %s from mcp is stored (seq %d) with other content", id, lastSeqOf(r))
	if !res.IsError || !strings.Contains(text, want) {
		t.Fatalf("remember over another stored event: isError %v, %q; want an error saying %q", res.IsError, text, want)
	}
}
