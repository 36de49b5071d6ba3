package llm

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
)

// ErrNoJSON means a model's reply held no JSON object or array.
var ErrNoJSON = errors.New("llm: no JSON object or array in the reply")

// maxStarts bounds how many '{' or '[' JSONContent tries, so that a reply
// full of brackets costs linear time, not quadratic.
const maxStarts = 64

// JSONContent returns the JSON object or array in a model's reply, ready for
// json.Unmarshal. Models wrap JSON in many ways even when asked not to:
// <think>…</think> reasoning first (Qwen, DeepSeek), ```json fences, a
// sentence before or after, a trailing comma. When the reply holds several
// JSON values the longest wins, so a bracketed aside in the prose does not
// hide the answer. The result is always valid JSON; the error never quotes
// the reply.
func JSONContent(s string) (string, error) {
	texts := []string{s}
	if answer, ok := stripReasoning(s); ok {
		texts = []string{answer}
	} else if answer, ok := afterOpenedReasoning(s); ok {
		// The closing tag may instead sit inside a JSON string; keep the
		// reply as sent as a second choice.
		texts = []string{answer, s}
	}
	var regions []string
	for _, t := range texts {
		regions = append(regions, fenced(t)...)
		regions = append(regions, t)
	}
	for _, repair := range []bool{false, true} {
		for _, r := range regions {
			if repair {
				r = dropTrailingCommas(r)
			}
			if out, ok := longestJSON(r); ok {
				return out, nil
			}
		}
	}
	return "", ErrNoJSON
}

var reasoningTags = []string{"think", "thinking", "reasoning"}

// stripReasoning removes the reasoning blocks a reply starts with. A block
// that never closes means the model ran out of tokens while thinking: there
// is no answer. ok is false when the reply does not start with a block.
func stripReasoning(s string) (answer string, ok bool) {
	for {
		rest := strings.TrimLeft(s, " \t\r\n")
		found := false
		for _, tag := range reasoningTags {
			open, end := "<"+tag+">", "</"+tag+">"
			if !strings.HasPrefix(rest, open) {
				continue
			}
			found, ok = true, true
			j := strings.Index(rest, end)
			if j < 0 {
				return "", true
			}
			s = rest[j+len(end):]
		}
		if !found {
			return s, ok
		}
	}
}

// afterOpenedReasoning returns what follows a closing reasoning tag that has
// no opening tag before it: chat templates that open the block in the prompt
// leave only the end of it in the reply.
func afterOpenedReasoning(s string) (string, bool) {
	for _, tag := range reasoningTags {
		open, end := "<"+tag+">", "</"+tag+">"
		j := strings.Index(s, end)
		if j >= 0 && !strings.Contains(s[:j], open) {
			return s[j+len(end):], true
		}
	}
	return "", false
}

// fenced returns the bodies of the ``` code blocks in s, in order.
func fenced(s string) []string {
	var blocks []string
	for {
		i := strings.Index(s, "```")
		if i < 0 {
			return blocks
		}
		s = s[i+3:]
		// Skip the info string ("json") up to the end of the line.
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[`") {
			s = s[nl+1:]
		}
		j := strings.Index(s, "```")
		if j < 0 {
			return append(blocks, s)
		}
		blocks = append(blocks, s[:j])
		s = s[j+3:]
	}
}

// longestJSON returns the longest complete JSON object or array in s.
func longestJSON(s string) (string, bool) {
	var best string
	tries := 0
	for i := 0; i < len(s) && tries < maxStarts; {
		k := strings.IndexAny(s[i:], "{[")
		if k < 0 {
			break
		}
		i += k
		tries++
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			i++
			continue
		}
		if len(raw) > len(best) {
			best = string(raw)
		}
		i += int(dec.InputOffset()) // values nested in this one are shorter
	}
	return best, best != ""
}

// dropTrailingCommas removes commas that directly precede a closing bracket,
// outside strings: the most common way small models break JSON.
func dropTrailingCommas(s string) string {
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',':
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// LowerKeys folds the case of a model-written object's keys, since models
// write "Subject" as readily as "subject". Where two keys fold to one, the
// one already in lower case wins, then the first in sorted order, so the
// result never depends on map order.
func LowerKeys(obj map[string]json.RawMessage) map[string]json.RawMessage {
	keys := slices.Sorted(maps.Keys(obj))
	out := make(map[string]json.RawMessage, len(obj))
	for _, exact := range []bool{true, false} {
		for _, k := range keys {
			lk := strings.ToLower(strings.TrimSpace(k))
			if _, dup := out[lk]; !dup && (k == lk) == exact {
				out[lk] = obj[k]
			}
		}
	}
	return out
}

// Field returns the first of keys present in f with a non-null value:
// models name the same thing several ways ("type", "kind").
func Field(f map[string]json.RawMessage, keys []string) (json.RawMessage, bool) {
	for _, k := range keys {
		if v, ok := f[k]; ok && string(v) != "null" {
			return v, true
		}
	}
	return nil, false
}
