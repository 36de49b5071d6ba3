package app

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go"
)

// A Chinese and an English turn go in over HTTP, through JetStream and the
// projector, and come back out of search by a two-character word and by a
// word; another user of the same namespace, and the same user in another
// namespace, see none of it — over HTTP and over NATS.
func TestEndToEndBilingualSearchAndIsolation(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	r := postBatch(t, a,
		turnEvent("zh-1", "alice", "s1", 0, "user", "我住在北京市朝阳区，每天早上喝美式咖啡。"),
		turnEvent("en-1", "alice", "s1", 1, "user", "I deployed the billing service to Kubernetes yesterday."),
		turnEvent("other-1", "bob", "s9", 0, "user", "北京 Kubernetes 北京 Kubernetes"),
	)
	mustAccept(t, r)
	// The same user id in another namespace is another tenant.
	ev := turnEvent("ns-1", "alice", "s1", 0, "user", "北京 Kubernetes in another namespace")
	ev["namespace"] = "acme"
	mustAccept(t, postEvent(t, a, ev))
	waitProjected(t, a, 4)

	for _, tc := range []struct{ q, want string }{
		{"北京", "zh-1"},
		{"咖啡", "zh-1"},
		{"朝阳区", "zh-1"},
		{"kubernetes", "en-1"},
		{"deploy", "en-1"}, // stemming: deployed
		{"Where did I deploy billing?", "en-1"},
	} {
		t.Run(tc.q, func(t *testing.T) {
			hits := searchHTTP(t, a, "default", "alice", tc.q)
			if len(hits) == 0 {
				t.Fatalf("no results for %q", tc.q)
			}
			wantContent := map[string]string{"zh-1": "北京市", "en-1": "billing"}[tc.want]
			if !strings.Contains(hits[0].Content, wantContent) {
				t.Fatalf("top hit for %q = %q, want the %s turn", tc.q, hits[0].Content, tc.want)
			}
			for _, h := range hits {
				if strings.Contains(h.Content, "北京 Kubernetes") {
					t.Fatalf("alice's search returned another tenant's turn %q", h.Content)
				}
			}
		})
	}

	t.Run("bob sees only his own", func(t *testing.T) {
		hits := searchHTTP(t, a, "default", "bob", "北京 咖啡 billing")
		if len(hits) != 1 || hits[0].Content != "北京 Kubernetes 北京 Kubernetes" {
			t.Fatalf("bob's results = %+v, want only his own turn", hits)
		}
	})
	t.Run("unknown user sees nothing", func(t *testing.T) {
		if hits := searchHTTP(t, a, "default", "mallory", "北京 Kubernetes"); len(hits) != 0 {
			t.Fatalf("mallory got %d results", len(hits))
		}
	})
	t.Run("namespace is a tenant boundary", func(t *testing.T) {
		hits := searchHTTP(t, a, "acme", "alice", "北京")
		if len(hits) != 1 || !strings.Contains(hits[0].Content, "another namespace") {
			t.Fatalf("acme/alice results = %+v", hits)
		}
	})
	t.Run("nats request-reply is scoped too", func(t *testing.T) {
		// Each tenant's turns and memories (what the rules read in the
		// turns); a search lists a hit's neighbours too (as /v1/context
		// does), never another tenant's.
		waitSettled(t, a)
		own := map[string][]string{
			"default/alice": {"我住在北京市朝阳区，每天早上喝美式咖啡。", "I deployed the billing service to Kubernetes yesterday."},
			"default/bob":   {"北京 Kubernetes 北京 Kubernetes"},
			"acme/alice":    {"北京 Kubernetes in another namespace"},
		}
		alice := 1
		for _, m := range listMemories(t, a, "alice", "") {
			own["default/alice"] = append(own["default/alice"], m.Content)
			if strings.Contains(m.Content, "北京") {
				alice++
			}
		}
		for _, tc := range []struct {
			ns, user string
			want     int
		}{{"default", "alice", alice}, {"default", "bob", 1}, {"default", "mallory", 0}, {"acme", "alice", 1}} {
			body, _ := json.Marshal(natsapi.SearchRequest{User: tc.user, Q: "北京"})
			msg, err := a.op.nc.Request(natsapi.SearchSubject(tc.ns), body, 5e9)
			if err != nil {
				t.Fatal(err)
			}
			var out struct{ Results []searchHit }
			if err := json.Unmarshal(msg.Data, &out); err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, h := range out.Results {
				if !slices.Contains(own[tc.ns+"/"+tc.user], h.Content) {
					t.Fatalf("%s/%s over NATS got %q, not its own", tc.ns, tc.user, h.Content)
				}
				if strings.Contains(h.Content, "北京") {
					found++
				}
			}
			if found != tc.want {
				t.Fatalf("%s/%s over NATS: %d results hold 北京, want %d", tc.ns, tc.user, found, tc.want)
			}
			if tc.want > 0 && !strings.Contains(out.Results[0].Content, "北京") {
				t.Fatalf("%s/%s over NATS: first result %q, want the one that holds 北京", tc.ns, tc.user, out.Results[0].Content)
			}
		}
	})
	t.Run("nats refuses a body namespace that is not the subject's", func(t *testing.T) {
		body, _ := json.Marshal(natsapi.SearchRequest{Namespace: "acme", User: "alice", Q: "北京"})
		msg, err := a.op.nc.Request(natsapi.SearchSubject("default"), body, 5e9)
		if err != nil {
			t.Fatal(err)
		}
		if got := msg.Header.Get("Nats-Service-Error-Code"); got != memory.EINVALID {
			t.Fatalf("error code %q, want %q (%s)", got, memory.EINVALID, msg.Data)
		}
	})
}

// An agent may publish straight to NATS, in structured or binary mode,
// leaving namespace and user to the subject.
func TestDirectNATSPublish(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	js := jsOf(a)

	m := nats.NewMsg(stream.Subject("default", "carol", "turn.recorded"))
	m.Header.Set("ce-specversion", "1.0")
	m.Header.Set("ce-id", "bin-1")
	m.Header.Set("ce-source", "agent/direct")
	m.Header.Set("ce-type", "turn.recorded")
	m.Header.Set("Content-Type", "application/json")
	m.Data = []byte(`{"session_id":"s1","turn_index":0,"role":"user","content":"我的猫叫小橘"}`)
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	structured, _ := json.Marshal(map[string]any{
		"specversion": "1.0", "id": "st-1", "source": "agent/direct", "type": "turn.recorded",
		"data": map[string]any{"session_id": "s1", "turn_index": 1, "role": "user", "content": "my cat is orange"},
	})
	ack, err := js.Publish(t.Context(), stream.Subject("default", "carol", "turn.recorded"), structured)
	if err != nil {
		t.Fatal(err)
	}
	waitProjected(t, a, ack.Sequence)
	if hits := searchHTTP(t, a, "default", "carol", "小橘"); len(hits) == 0 || hits[0].Content != "我的猫叫小橘" {
		t.Fatalf("binary-mode turn not found first: %+v", hits)
	}
	// "cat" also finds 猫 (the concept lexicon), below the turn that
	// holds both words.
	if hits := searchHTTP(t, a, "default", "carol", "orange cat"); len(hits) == 0 || hits[0].Content != "my cat is orange" {
		t.Fatalf("structured turn not found first: %+v", hits)
	}
}

// An event published straight to NATS that is malformed is not dropped: it
// lands in DEADLETTER with a reason naming what is wrong, and the
// projector moves on.
func TestMalformedDirectPublishIsDeadLettered(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	js := jsOf(a)
	subj := stream.Subject("default", "dave", "turn.recorded")
	bad, _ := json.Marshal(map[string]any{
		"specversion": "1.0", "id": "bad-1", "source": "agent/direct", "type": "turn.recorded",
		"data": map[string]any{"session_id": "s1", "turn_index": 0, "role": "robot", "content": "x"},
	})
	if _, err := js.Publish(t.Context(), subj, bad); err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(turnEvent("good-1", "dave", "s1", 1, "user", "still here"))
	ack, err := js.Publish(t.Context(), subj, good)
	if err != nil {
		t.Fatal(err)
	}
	waitProjected(t, a, ack.Sequence)
	dlq, err := js.Stream(t.Context(), stream.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	wait.Until(t, "dead letter", func() bool {
		m, err := dlq.GetLastMsgForSubject(t.Context(), "dlq.projector-local."+subj)
		if err != nil {
			return false
		}
		reason = m.Header.Get(stream.HeaderDLQReason)
		return true
	})
	if !strings.Contains(reason, "role") {
		t.Fatalf("dead letter headers do not name the bad field: %s", reason)
	}
	if hits := searchHTTP(t, a, "default", "dave", "still here"); len(hits) != 1 {
		t.Fatalf("the good event after the bad one was not projected")
	}
}
