package extractreq

import (
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// Stored turns become one request per session and chunk, in turn order,
// named as the batcher names the same turns.
func TestRequests(t *testing.T) {
	ana := memory.Scope{Namespace: "default", User: "ana"}
	bob := memory.Scope{Namespace: "default", User: "bob"}
	var turns []memory.Turn
	for _, i := range []int{2, 0, 1} {
		turns = append(turns, memory.Turn{Scope: ana, SessionID: "s1", TurnIndex: i, Agent: "a1", Role: "user", Content: "x",
			ToolCalls: `[{"id":"c1","name":"bash"}]`})
	}
	turns = append(turns, memory.Turn{Scope: bob, SessionID: "s1", TurnIndex: 0})
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	out := Requests(turns, events.ReasonSweep, "", 2, now)
	if len(out) != 3 {
		t.Fatalf("%d requests, want 3 (ana's 3 turns in chunks of 2, bob's 1)", len(out))
	}
	first := out[0].Data.(*events.ExtractionRequested)
	if first.Turns[0].TurnIndex != 0 || first.Turns[1].TurnIndex != 1 || first.Reason != events.ReasonSweep ||
		len(first.Turns[0].ToolCalls) != 1 || first.Turns[0].ToolCalls[0].Name != "bash" {
		t.Fatalf("first request = %+v", first)
	}
	if out[0].ID != RequestID(ana, "s1", first.Turns) || out[0].ID != first.RequestID || out[0].Agent != "a1" || out[2].Scope != bob {
		t.Fatalf("ids and scopes: %+v", out)
	}
	if again := Requests(turns, events.ReasonSweep, "", 2, now.Add(time.Hour)); again[1].ID != out[1].ID {
		t.Fatal("the same turns asked again got another id")
	}
	if p := Requests(turns, events.ReasonManual, "gen-", 0, now); len(p) != 2 || p[0].ID != "gen-"+RequestID(ana, "s1", p[0].Data.(*events.ExtractionRequested).Turns) {
		t.Fatalf("prefixed, default chunk: %+v", p)
	}
}
