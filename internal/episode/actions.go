package episode

import (
	"encoding/json"
	"strings"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
)

// call is one tool call and, once paired, its result.
type call struct {
	pos    int // position of its turn in session.turns
	turn   int // the turn's Index
	c      ToolCall
	res    *ToolResult
	resPos int // position of the result's turn
}

type pendingResult struct {
	pos int
	r   ToolResult
}

// pair collects the tool calls of turns in order and pairs each result
// with its call: first by ToolCallID (a result answers a call at or
// before its own turn), then, for results with no id or an id no call
// has, with the oldest call still unanswered at or before the result.
// A second result naming an already answered call is a duplicate and is
// dropped. A tool turn with text and no ToolResults is one result, an
// error when it starts like one (looksFailed).
func pair(turns []Turn) []call {
	var calls []call
	var results []pendingResult
	for pos, t := range turns {
		for _, c := range t.ToolCalls {
			calls = append(calls, call{pos: pos, turn: t.Index, c: c})
		}
		for _, r := range t.ToolResults {
			results = append(results, pendingResult{pos, r})
		}
		if len(t.ToolResults) == 0 && normRole(t.Role) == roleTool && strings.TrimSpace(t.Content) != "" {
			results = append(results, pendingResult{pos, ToolResult{Content: t.Content, IsError: looksFailed(t.Content)}})
		}
	}
	ids := map[string]bool{}
	for _, c := range calls {
		if c.c.ID != "" {
			ids[c.c.ID] = true
		}
	}
	var byPosition []pendingResult
	for _, r := range results {
		if r.r.ToolCallID == "" || !ids[r.r.ToolCallID] {
			byPosition = append(byPosition, r)
			continue
		}
		for i := range calls {
			c := &calls[i]
			if c.res == nil && c.c.ID == r.r.ToolCallID && c.pos <= r.pos {
				c.res, c.resPos = &r.r, r.pos
				break
			}
		}
	}
	for _, r := range byPosition {
		for i := range calls {
			c := &calls[i]
			if c.res == nil && c.pos <= r.pos {
				c.res, c.resPos = &r.r, r.pos
				break
			}
		}
	}
	return calls
}

// errorHeads start the output of a failed command or call.
var errorHeads = []string{"error", "fatal", "traceback", "exception", "panic:", "failed", "failure", "错误", "失败", "异常"}

// looksFailed reads a bare tool turn (role tool, text only, no flag) as
// an error when its first line starts like one: agents that record
// results this way have nowhere to say so.
func looksFailed(content string) bool {
	first := strings.ToLower(errorLine(content))
	for _, h := range errorHeads {
		if strings.HasPrefix(first, h) {
			return true
		}
	}
	return false
}

// node makes the action node of a call.
func (c *call) node() memory.ActionNode {
	n := memory.ActionNode{
		Tool:   toolName(c.c.Name),
		Params: params(c.c.Input),
		Turn:   c.turn,
	}
	if c.res == nil {
		return n
	}
	n.Result = chars.ClipMiddle(clean(c.res.Content), MaxResultRunes)
	n.Success = !c.res.IsError
	if c.res.IsError {
		n.Error = errorLine(c.res.Content)
	}
	return n
}

func toolName(name string) string {
	name = chars.ClipHead(clean(name), maxToolNameRunes)
	if name == "" {
		return "unknown"
	}
	return name
}

// errorLine is the first line of an error with something in it.
func errorLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = clean(line); line != "" {
			return chars.ClipHead(line, MaxErrorRunes)
		}
	}
	return ""
}

// keyParams are the input fields that say most about a call, best first.
var keyParams = []string{
	"path", "file_path", "filepath", "file", "filename", "command", "cmd", "query", "q", "url", "uri",
	"pattern", "regex", "glob", "sql", "name", "target", "dir", "directory", "cwd", "branch", "repo",
}

const (
	maxParams      = 3
	fallbackParams = 2
	maxValueRunes  = 80
)

// params abbreviates a call's input. A JSON object becomes "key=value"
// for its most telling fields (keyParams, at most three), or its first
// two plain fields when it has none of them; anything else is kept as
// text. Either way it is cut to MaxParamsRunes.
func params(input string) string {
	in := strings.TrimSpace(input)
	fields, ok := objectFields(in)
	if !ok {
		return chars.ClipHead(clean(in), MaxParamsRunes)
	}
	var parts []string
	for _, k := range keyParams {
		for _, f := range fields {
			if strings.EqualFold(f.key, k) && f.value != "" {
				parts = append(parts, f.key+"="+f.value)
				break
			}
		}
		if len(parts) == maxParams {
			break
		}
	}
	if len(parts) == 0 {
		for _, f := range fields {
			if f.plain && f.value != "" {
				parts = append(parts, f.key+"="+f.value)
			}
			if len(parts) == fallbackParams {
				break
			}
		}
	}
	return chars.ClipHead(strings.Join(parts, " "), MaxParamsRunes)
}

type inputField struct {
	key, value string
	plain      bool // a string, number or boolean
}

// objectFields reads the top-level fields of a JSON object in the order
// written (a map would lose it).
func objectFields(in string) ([]inputField, bool) {
	if !strings.HasPrefix(in, "{") || !json.Valid([]byte(in)) {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(in))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var out []inputField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		f := inputField{key: chars.ClipHead(clean(key), 40)}
		var s string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			f.value, f.plain = s, true
		case len(raw) > 0 && (raw[0] == '{' || raw[0] == '['):
			f.value = string(raw)
		default:
			f.value, f.plain = string(raw), string(raw) != "null"
			if string(raw) == "null" {
				f.value = ""
			}
		}
		f.value = chars.ClipHead(clean(f.value), maxValueRunes)
		out = append(out, f)
	}
	return out, true
}
