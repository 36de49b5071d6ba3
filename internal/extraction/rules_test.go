package extraction

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engramhq/engram/events"
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
