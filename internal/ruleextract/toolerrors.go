package ruleextract

import (
	"encoding/json"
	"strings"
)

// toolError turns a failed tool call into an error memory (seed 003's
// ERROR kind): what ran and how it failed, so the next session that runs it
// knows. The subject is the program the call ran ("npm", "go", "psql"),
// else the tool's own name ("read_file"), so failures of one program
// gather under one subject. It is observed, not claimed, so an assistant
// turn's cap does not apply; it is still only a hint (pending), because
// one failure is not yet a lesson.
func (x *extractor) toolError(r ToolResult, calls []ToolCall) {
	call := r.Call
	if call.Name == "" && call.Input == "" {
		for _, c := range calls {
			if c.ID != "" && c.ID == r.ToolCallID {
				call = c
				break
			}
		}
	}
	msg := errorLines(strings.ToValidUTF8(r.Content, " "))
	if msg == "" {
		return
	}
	command := commandOf(call.Input)
	subject := programOf(command)
	what := command
	if subject == "" {
		subject = strings.ToLower(strings.TrimSpace(call.Name))
		what = call.Name
	}
	if subject == "" {
		subject, what = "tool", "a tool"
	}
	x.add(fact{pred: PredError, subject: subject, content: capRunes(what, 80) + " failed: " + msg,
		conf: confClear, scoped: true, observed: true})
}

// commandOf reads the shell command out of a tool's input: a JSON object's
// command, cmd or script field, a JSON string, or the raw text.
func commandOf(input string) string {
	input = strings.TrimSpace(input)
	if input == "" {
		return ""
	}
	var obj map[string]any
	if json.Unmarshal([]byte(input), &obj) == nil {
		for _, k := range []string{"command", "cmd", "script", "shell"} {
			switch v := obj[k].(type) {
			case string:
				return collapseSpace(strings.TrimSpace(v))
			case []any:
				var parts []string
				for _, p := range v {
					if s, ok := p.(string); ok {
						parts = append(parts, s)
					}
				}
				return strings.Join(parts, " ")
			}
		}
		return ""
	}
	var s string
	if json.Unmarshal([]byte(input), &s) == nil {
		return collapseSpace(s)
	}
	if strings.HasPrefix(input, "{") || strings.HasPrefix(input, "[") {
		return ""
	}
	return collapseSpace(input)
}

// programOf is the program a shell command runs: its first word, past
// sudo, env assignments and a path ("sudo /usr/bin/npm i" → "npm").
func programOf(command string) string {
	for _, w := range strings.Fields(command) {
		switch {
		case w == "sudo" || w == "env" || w == "time" || w == "exec" || w == "nohup":
			continue
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
			continue
		}
		if i := strings.LastIndexByte(w, '/'); i >= 0 {
			w = w[i+1:]
		}
		w = strings.ToLower(strings.Trim(w, `"'();&|`))
		if w == "" || len(w) > 40 {
			return ""
		}
		return w
	}
	return ""
}

// errorLines keeps what says how a tool failed: the lines that read as an
// error, else the first lines, at most three and 200 runes.
func errorLines(out string) string {
	var all, errs []string
	for line := range strings.Lines(out) {
		line = collapseSpace(strings.TrimSpace(line))
		if line == "" {
			continue
		}
		all = append(all, line)
		if errorLike(lowerASCII(line)) && !containsString(errs, line) {
			errs = append(errs, line)
		}
		if len(all) > 200 {
			break
		}
	}
	pick := errs
	if len(pick) == 0 {
		pick = all
	}
	if len(pick) > 3 {
		pick = pick[:3]
	}
	return capRunes(strings.Join(pick, " | "), maxContentRunes)
}

func errorLike(low string) bool {
	return containsAny(low, "error", "err!", "fatal", "fail", "denied", "refused", "not found", "no such",
		"undefined", "exception", "traceback", "panic", "rejected", "cannot", "can't", "unable", "invalid",
		"timed out", "timeout", "错误", "失败")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
