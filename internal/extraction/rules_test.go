package extraction

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/memory"
)

// A failed tool call whose result arrives in a later turn becomes an error
// memory named for the program the call ran (seed 003's ERROR kind).
func TestRulesNameAFailedToolFromItsCall(t *testing.T) {
	x := &Extractor{}
	got := x.rules([]events.ExtractionTurn{
		{TurnIndex: 1, Role: "assistant", Content: "Installing.",
			ToolCalls: []events.ToolCall{{ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"npm install"}`)}}},
		{TurnIndex: 2, Role: "tool",
			ToolResults: []events.ToolResult{{ToolCallID: "c1", IsError: true, Content: "npm ERR! code ERESOLVE"}}},
	})
	var found bool
	for _, c := range got {
		if c.Kind == memory.KindError && c.Subject == "npm" && strings.Contains(c.Content, "npm install") && strings.Contains(c.Content, "ERESOLVE") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no error memory for the failed npm install; got %+v", got)
	}
}

// A turn's reading is named by the turn, and the read model knows a
// reading's memories by its id's prefix.
func TestReadingEventID(t *testing.T) {
	scope := memory.Scope{Namespace: "default", User: "ana"}
	turn := events.ExtractionTurn{TurnIndex: 3, Role: "user", Content: "I live in Porto"}
	id := ReadingEventID(scope, "s1", turn)
	if !strings.HasPrefix(id, extractreq.ReadingEventPrefix) {
		t.Fatalf("reading id %q lacks the prefix %q", id, extractreq.ReadingEventPrefix)
	}
	if again := ReadingEventID(scope, "s1", turn); again != id {
		t.Fatalf("the same turn named twice: %q, %q", id, again)
	}
	other := turn
	other.Content = "I live in Lisbon"
	for _, differs := range []string{ReadingEventID(scope, "s1", other), ReadingEventID(scope, "s2", turn),
		ReadingEventID(memory.Scope{Namespace: "default", User: "bo"}, "s1", turn)} {
		if differs == id {
			t.Fatalf("another turn has the reading id %q", id)
		}
	}
}
