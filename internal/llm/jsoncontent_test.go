package llm_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/llm"
)

func TestJSONContent(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"bare object", `{"a":1}`, `{"a":1}`},
		{"bare array", ` [1, 2] `, `[1, 2]`},
		{"fenced", "```json\n{\"a\": 1}\n```", `{"a": 1}`},
		{"fenced without language", "```\n[{\"a\":1}]\n```", `[{"a":1}]`},
		{"prose around", "Sure! Here is the JSON:\n{\"facts\": []}\nLet me know if you need more.", `{"facts": []}`},
		{"think block", "<think>The user wants {facts}. I'll use {\"x\":0}.</think>\n{\"facts\":[\"tea\"]}", `{"facts":["tea"]}`},
		{"think then fence", "<think>\nhmm\n</think>\n\n```json\n{\"ok\":true}\n```", `{"ok":true}`},
		{"closing tag only", "reasoning {\"no\":1} left open by the template</think>{\"yes\":1}", `{"yes":1}`},
		{"thinking tag", "<thinking>{\"no\":1}</thinking>{\"yes\":2}", `{"yes":2}`},
		{"bracket in prose", "Step [1]: the answer is {\"facts\":[\"a\",\"b\"]}", `{"facts":["a","b"]}`},
		{"brace in prose", "Use {name} as a key: {\"name\":\"x\"}", `{"name":"x"}`},
		{"longest wins", `[1] {"a":{"b":[1,2,3]}} {"c":1}`, `{"a":{"b":[1,2,3]}}`},
		{"trailing commas", "{\"a\": [1, 2,], \"b\": {\"c\": 1,},}", `{"a": [1, 2], "b": {"c": 1}}`},
		{"comma inside string kept", `{"a": "x,}", "b": [1,],}`, `{"a": "x,}", "b": [1]}`},
		{"think tag inside the JSON", `{"note":"<think>hidden</think> shown"}`, `{"note":"<think>hidden</think> shown"}`},
		{"closing tag inside a string", `{"note":"a </think> b"}`, `{"note":"a </think> b"}`},
		{"two leading blocks", "<think>a</think>\n<reasoning>{\"no\":1}</reasoning>{\"yes\":1}", `{"yes":1}`},
		{"chinese", "好的，结果如下：\n```json\n{\"事实\": [\"用户喜欢绿茶\"]}\n```", `{"事实": ["用户喜欢绿茶"]}`},
		{"unclosed fence", "```json\n{\"a\":1}", `{"a":1}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := llm.JSONContent(tc.in)
			if err != nil {
				t.Fatalf("JSONContent(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("JSONContent(%q)=%q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestJSONContentNone(t *testing.T) {
	for _, in := range []string{
		"",
		"I could not find any facts.",
		`"just a string"`,
		"42",
		"<think>{\"a\":1}</think> nothing here", // the only JSON is reasoning
		"<think>{\"a\":1} and then the model ran out of tokens",
		`{"a": 1`,
		`{"a": 'single'}`,
	} {
		if got, err := llm.JSONContent(in); !errors.Is(err, llm.ErrNoJSON) {
			t.Errorf("JSONContent(%q)=%q, %v, want ErrNoJSON", in, got, err)
		}
	}
}

func TestJSONContentErrorDoesNotQuoteReply(t *testing.T) {
	_, err := llm.JSONContent("my secret is hunter2")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err=%v, want ErrNoJSON without the reply", err)
	}
}

func TestJSONContentManyBracketsIsQuick(t *testing.T) {
	// Every '{' starts a value that never ends: without the bound on
	// attempts this is quadratic.
	in := strings.Repeat("{", 1<<20)
	if _, err := llm.JSONContent(in); !errors.Is(err, llm.ErrNoJSON) {
		t.Fatalf("err=%v, want ErrNoJSON", err)
	}
}

func FuzzJSONContent(f *testing.F) {
	// More seeds live in testdata/fuzz/FuzzJSONContent.
	f.Add(`{"facts":[]}`)
	f.Add("<think>x</think>```json\n[1,]\n```")
	f.Fuzz(func(t *testing.T, in string) {
		out, err := llm.JSONContent(in)
		if err != nil {
			if !errors.Is(err, llm.ErrNoJSON) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !json.Valid([]byte(out)) {
			t.Fatalf("JSONContent(%q)=%q, not valid JSON", in, out)
		}
		if out[0] != '{' && out[0] != '[' {
			t.Fatalf("JSONContent(%q)=%q, want an object or array", in, out)
		}
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("json.Unmarshal(%q): %v", out, err)
		}
	})
}
