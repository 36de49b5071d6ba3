package natsapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/retrieval"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// secretWord is in every request's body; it must never be logged.
const secretWord = "hunter2-payload"

// panicky panics on a request whose text says "boom" and answers the
// others.
type panicky struct{}

func (panicky) Search(_ context.Context, q memory.SearchQuery) ([]memory.SearchResult, error) {
	if strings.Contains(q.Text, "boom") {
		var m map[string]int
		m["x"]++ //nolint:staticcheck // a nil map on purpose: the kind of bug a handler may hide
	}
	return []memory.SearchResult{}, nil
}

func (panicky) Context(_ context.Context, req retrieval.Request) (*retrieval.Response, error) {
	if strings.Contains(req.Query, "boom") {
		panic("context: boom")
	}
	return &retrieval.Response{}, nil
}

// A handler that panics answers its request unavailable (503), saying
// which endpoint failed; the panic is logged with the subject and not
// the request's body; and the service answers the next request.
func TestPanickingHandlerAnswersAndServes(t *testing.T) {
	emb, err := stream.StartEmbedded(stream.EmbeddedConfig{StoreDir: t.TempDir(), Sync: "always"})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Shutdown()
	nc, err := nats.Connect("", emb.ConnectOption())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	core, logs := observer.New(zapcore.ErrorLevel)
	log := zap.New(core)
	digest := func(_ context.Context, _, msgID string, _ uint64) (string, bool, error) {
		if strings.Contains(msgID, "boom") {
			panic("digest: boom")
		}
		return "d", true, nil
	}
	svc, err := Serve(nc, panicky{}, panicky{}, digest, "0.0.1", log)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Do(svc.Stop)
	in, err := ServeInput(nc, func(_ context.Context, _ string, _ map[string][]string, body []byte) (int, []byte) {
		if strings.Contains(string(body), "boom") {
			panic("ingest: boom")
		}
		return 202, []byte(`{"accepted":1}`)
	}, "0.0.1", log)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Do(in.Stop)

	for _, tc := range []struct {
		endpoint, subject, boom, fine string
	}{
		{"search", SearchSubject("acme"), `{"user":"u","q":"boom ` + secretWord + `"}`, `{"user":"u","q":"tea"}`},
		{"context", ContextSubject("acme"), `{"user":"u","query":"boom ` + secretWord + `"}`, `{"user":"u","query":"tea"}`},
		{"events", stream.InputSubject("acme"), `{"boom":"` + secretWord + `"}`, `{}`},
		{"digest", stream.DigestSubject("acme"), `{"seq":1,"msg_id":"boom` + secretWord + `"}`, `{"seq":1,"msg_id":"m"}`},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			before := logs.Len()
			reply, err := nc.Request(tc.subject, []byte(tc.boom), 10*time.Second)
			if err != nil {
				t.Fatalf("a request whose handler panicked: %v", err)
			}
			if got, want := reply.Header.Get(micro.ErrorCodeHeader), memory.EUNAVAILABLE; got != want {
				t.Fatalf("%s = %q, want %q: %s", micro.ErrorCodeHeader, got, want, reply.Data)
			}
			if got := reply.Header.Get(StatusHeader); got != "503" {
				t.Fatalf("%s = %q, want 503", StatusHeader, got)
			}
			var body ErrorBody
			if err := json.Unmarshal(reply.Data, &body); err != nil || !strings.Contains(body.Error.Message, tc.endpoint+" failed") {
				t.Fatalf("body %s (%v), want a message saying %s failed", reply.Data, err, tc.endpoint)
			}
			entries := logs.All()[before:]
			if len(entries) != 1 || entries[0].Message != "request handler panicked" {
				t.Fatalf("logged %v, want the panic once", entries)
			}
			fields := entries[0].ContextMap()
			if fields["subject"] != tc.subject || !strings.HasPrefix(fields["error"].(string), "panic: ") || fields["stack"] == "" {
				t.Fatalf("logged %v, want the subject, the panic and its stack", fields)
			}
			for k, v := range fields {
				if s, ok := v.(string); ok && strings.Contains(s, secretWord) {
					t.Fatalf("the log's %s holds the request's body: %q", k, s)
				}
			}

			reply, err = nc.Request(tc.subject, []byte(tc.fine), 10*time.Second)
			if err != nil {
				t.Fatalf("the next request: %v", err)
			}
			if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
				t.Fatalf("the next request answered %s: %s", code, reply.Data)
			}
		})
	}
}
