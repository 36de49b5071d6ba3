package app

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// agentConn connects to a's embedded NATS as the agent of namespace.
func agentConn(t *testing.T, a *App, namespace string) (*nats.Conn, chan error) {
	t.Helper()
	errs := make(chan error, 16)
	nc, err := stream.Connect(stream.ConnConfig{URL: a.NATSURL(), Name: "agent-" + namespace,
		NKey: (&stream.Auth{Dir: AuthDir(a.Config)}).SeedFile(stream.RoleAgent, namespace)},
		nats.CustomInboxPrefix(stream.AgentInboxPrefix(namespace)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		t.Fatalf("agent of %s: %v", namespace, err)
	}
	t.Cleanup(nc.Close)
	return nc, errs
}

func memoryLastSeq(t *testing.T, a *App) uint64 {
	t.Helper()
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// An agent on the bus gets HTTP ingest's validation and answer; nothing
// it sends reaches MEMORY unvalidated, and it cannot write MEMORY itself.
func TestBusInput(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.NATS.Listen = "127.0.0.1:0"
	// MEMORY's sequence counts what the bus stored: the rules' readings of
	// the turns would add engram's own events to it.
	cfg.Extract.RulesAtOnce = false
	a := startApp(t, cfg, RoleAll)
	if nc, err := nats.Connect(a.NATSURL(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("the embedded NATS let in a client without credentials")
	}
	nc, errs := agentConn(t, a, "default")
	ask := func(t *testing.T, subject string, hdr nats.Header, body string) *nats.Msg {
		t.Helper()
		m := &nats.Msg{Subject: subject, Header: hdr, Data: []byte(body)}
		reply, err := nc.RequestMsg(m, 10*time.Second)
		if err != nil {
			t.Fatalf("request %s: %v", subject, err)
		}
		return reply
	}
	start := memoryLastSeq(t, a)

	bad := []struct {
		name, body, code string
		hdr              nats.Header
	}{
		{"not json", `garbage{`, "invalid", nil},
		{"no user", `{"specversion":"1.0","id":"b1","source":"a","type":"turn.recorded","data":{"session_id":"s","turn_index":0,"role":"user","content":"x"}}`, "invalid", nil},
		{"bad role", `{"specversion":"1.0","id":"b2","source":"a","type":"turn.recorded","user":"ana","data":{"session_id":"s","turn_index":0,"role":"bot","content":"x"}}`, "invalid", nil},
		{"derived type", `{"specversion":"1.0","id":"b3","source":"a","type":"memory.extracted","user":"ana","data":{}}`, "invalid", nil},
		{"other namespace", `{"specversion":"1.0","id":"b4","source":"a","type":"turn.recorded","user":"ana","namespace":"acme","data":{"session_id":"s","turn_index":0,"role":"user","content":"x"}}`, "forbidden", nil},
		{"bad batch", `[{"specversion":"1.0","id":"b5","source":"a","type":"turn.recorded","user":"ana","data":{"session_id":"s","turn_index":0,"role":"user","content":"ok"}},{"id":"b6"}]`, "invalid",
			nats.Header{"Content-Type": {"application/cloudevents-batch+json"}}},
		{"binary without type", `{"session_id":"s","turn_index":0,"role":"user","content":"x"}`, "invalid",
			nats.Header{"Ce-Specversion": {"1.0"}, "Ce-Id": {"b7"}, "Ce-Source": {"a"}, "Ce-User": {"ana"}}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			reply := ask(t, stream.InputSubject("default"), c.hdr, c.body)
			if got := reply.Header.Get(micro.ErrorCodeHeader); got != c.code {
				t.Fatalf("error code %q, want %q: %s", got, c.code, reply.Data)
			}
			if got := reply.Header.Get(natsapi.StatusHeader); got == "202" {
				t.Fatalf("status %s for %s", got, c.name)
			}
		})
	}

	// Straight onto the stream, even a valid event is refused by NATS.
	if err := nc.Publish(stream.Subject("default", "ana", "turn.recorded"),
		[]byte(`{"specversion":"1.0","id":"x1","source":"a","type":"turn.recorded","data":{"session_id":"s","turn_index":0,"role":"user","content":"x"}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Fatalf("publish to mem.>: %v, want a permissions violation", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("publish to mem.> was not refused")
	}
	if got := memoryLastSeq(t, a); got != start {
		t.Fatalf("MEMORY went from seq %d to %d on refused input", start, got)
	}

	// A good event, with the namespace left to the subject, is stored
	// before the answer and then readable.
	reply := ask(t, stream.InputSubject("default"), nil,
		`{"specversion":"1.0","id":"g1","source":"a","type":"turn.recorded","user":"ana","data":{"session_id":"s","turn_index":0,"role":"user","content":"部署在杭州机房"}}`)
	if got := reply.Header.Get(natsapi.StatusHeader); got != "202" {
		t.Fatalf("status %q, want 202: %s", got, reply.Data)
	}
	var resp struct {
		Accepted int `json:"accepted"`
		Results  []struct {
			Seq uint64 `json:"seq"`
		} `json:"results"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil || resp.Accepted != 1 || len(resp.Results) != 1 {
		t.Fatalf("reply %s (%v)", reply.Data, err)
	}
	if got, want := memoryLastSeq(t, a), start+1; got != want || resp.Results[0].Seq != want {
		t.Fatalf("MEMORY at %d, reply seq %d, want %d", got, resp.Results[0].Seq, want)
	}
	waitProjected(t, a, resp.Results[0].Seq)
	if hits := searchHTTP(t, a, "default", "ana", "杭州"); len(hits) != 1 {
		t.Fatalf("found %d, want 1", len(hits))
	}
	// The same event again is a duplicate, not a second copy.
	reply = ask(t, stream.InputSubject("default"), nil,
		`{"specversion":"1.0","id":"g1","source":"a","type":"turn.recorded","user":"ana","data":{"session_id":"s","turn_index":0,"role":"user","content":"部署在杭州机房"}}`)
	if !strings.Contains(string(reply.Data), `"duplicates":1`) {
		t.Fatalf("resend: %s", reply.Data)
	}
	if got := memoryLastSeq(t, a); got != start+1 {
		t.Fatalf("MEMORY at %d after a duplicate, want %d", got, start+1)
	}
}
