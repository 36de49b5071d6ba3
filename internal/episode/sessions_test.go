package episode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Sessions as agents record them (testdata/sessions.json, a turn a line):
// OpenAI-style (results in tool turns, named by id) and Anthropic-style
// (results in the next user turn), in English and Chinese.
//
//   - enFixDeploy: a failing tool, a fix, a final success, then a plan.
//   - zhFixDeploy: the same story in Chinese, Anthropic-style.
//   - enAbandoned, zhAbandoned: the user calls it off after a failure.
//   - enQA, zhQA: a question answered, no tools.
//   - enFailed: the last tool call fails and nothing succeeds after it.
//   - zhCompression: turns leaving the window, with the agent's own summary.

var t0 = time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

var sessions = sync.OnceValue(func() map[string]Input {
	raw, err := os.ReadFile(filepath.Join("testdata", "sessions.json"))
	if err != nil {
		panic(err)
	}
	var m map[string]Input
	if err := json.Unmarshal(raw, &m); err != nil {
		panic(err)
	}
	return m
})

// fixture returns a fresh copy of the named session: tests change what
// they are given.
func fixture(name string) Input {
	in, ok := sessions()[name]
	if !ok {
		panic("no session " + name + " in testdata/sessions.json")
	}
	raw, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	var out Input
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

func enFixDeploy() Input   { return fixture("enFixDeploy") }
func zhFixDeploy() Input   { return fixture("zhFixDeploy") }
func enAbandoned() Input   { return fixture("enAbandoned") }
func zhAbandoned() Input   { return fixture("zhAbandoned") }
func enQA() Input          { return fixture("enQA") }
func zhQA() Input          { return fixture("zhQA") }
func enFailed() Input      { return fixture("enFailed") }
func zhCompression() Input { return fixture("zhCompression") }

var goldenSessions = []struct {
	name string
	in   func() Input
}{
	{"en_fix_deploy", enFixDeploy},
	{"zh_fix_deploy", zhFixDeploy},
	{"en_abandoned", enAbandoned},
	{"zh_abandoned", zhAbandoned},
	{"en_qa", enQA},
	{"zh_qa", zhQA},
	{"en_failed", enFailed},
	{"zh_compression", zhCompression},
}
