package extractbench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/engramhq/engram/internal/quiet"
)

// Gold is one memory a careful person would write from a turn.
type Gold struct {
	Kind      string `json:"kind"`
	Subject   string `json:"subject"`
	Predicate string `json:"predicate"`
	Value     string `json:"value"`
	// Updates marks a memory that replaces what was known of its slot (a
	// move, a changed habit, a retired tool): only a candidate that says
	// it updates is it.
	Updates bool `json:"updates,omitempty"`
}

// ToolCall is a tool the agent called.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResult is what a tool returned. Name and Command stand in for the
// call when the turn carries the result alone (a "tool" turn).
type ToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	Name       string `json:"name,omitempty"`
	Command    string `json:"command,omitempty"`
	Content    string `json:"content"`
	IsError    bool   `json:"is_error"`
}

// Turn is one labelled message.
type Turn struct {
	ID          string       `json:"id"`
	Lang        string       `json:"lang"`
	Role        string       `json:"role"`
	Content     string       `json:"content"`
	Project     string       `json:"project,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	Gold        []Gold       `json:"gold"`
}

// Load reads one split: JSON Lines, one Turn a line.
func Load(path string) ([]Turn, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer quiet.Close(f) // only read
	var out []Turn
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var t Turn
		if err := json.Unmarshal([]byte(line), &t); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if t.ID == "" || t.Lang == "" || t.Role == "" {
			return nil, fmt.Errorf("%s:%d: id, lang and role are required", path, n)
		}
		for i, g := range t.Gold {
			if g.Kind == "" || g.Subject == "" || g.Predicate == "" || g.Value == "" {
				return nil, fmt.Errorf("%s:%d: gold[%d] needs kind, subject, predicate and value", path, n, i)
			}
		}
		out = append(out, t)
	}
	return out, sc.Err()
}
