package episode

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/memory"
)

// FuzzExtractive checks the promises Extractive makes on any turns: it
// never panics, is deterministic, keeps every field within its limit, in
// valid UTF-8 with no control character, and gives valid episode.built
// data; the scratchpad it feeds stays within its limits too. The seed
// corpus is in testdata/fuzz/FuzzExtractive.
func FuzzExtractive(f *testing.F) {
	f.Add("Fix internal/auth/jwt.go please", "Done, deployed to https://x.io/a.", `{"path":"a.go"}`, "ok", "c1", false, "engram")
	f.Fuzz(func(t *testing.T, userText, assistantText, input, result, id string, isError bool, project string) {
		turns := []Turn{
			{Index: 1, Role: "user", Content: userText, Time: at(0), Project: project},
			{Index: 2, Role: "assistant", Content: assistantText, Time: at(1), Project: project,
				ToolCalls: []ToolCall{{ID: id, Name: input, Input: input}, {Name: result, Input: userText}}},
			{Index: 3, Role: "tool", Content: result, Time: at(2), ToolResults: []ToolResult{{ToolCallID: id, Content: result, IsError: isError}}},
			{Index: 4, Role: "tool", Content: assistantText, Time: at(3)},
			{Index: 5, Role: userText, Content: result, Time: at(4)},
			{Index: 6, Role: "assistant", Content: userText + "\n" + assistantText, Time: at(5)},
		}
		in := Input{SessionID: "s", Turns: turns, Summary: result, Memories: []string{id, project}}
		ep := Extractive(in)
		if again := Extractive(in); !reflect.DeepEqual(ep, again) {
			t.Fatalf("two runs differ:\n%+v\n%+v", ep, again)
		}
		checkLimits(t, ep)
		checkEvent(t, ep)

		pad := UpdateScratchpad(memory.Scratchpad{Source: ScratchpadFromPerson, Content: strings.ToValidUTF8(userText, "")}, ep, at(9))
		if n := utf8.RuneCountInString(pad.Content); n > memory.ScratchpadMaxChars || !utf8.ValidString(pad.Content) {
			t.Fatalf("scratchpad of %d runes, valid UTF-8 %v", n, utf8.ValidString(pad.Content))
		}
		checkScratchpadEvent(t, pad, ep.ID)
	})
}

// FuzzParse checks the promises the reply parsers make on any reply: they
// never panic, return an error or something usable, and keep every field
// within its limit in valid UTF-8. The merged episode still takes its tool
// actions from the turns. The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add(modelReply)
	base := Extractive(enFixDeploy())
	s := analyse(enFixDeploy())
	f.Fuzz(func(t *testing.T, reply string) {
		r, err := parseEpisodeReply(reply)
		if err == nil {
			if r.summary == "" && r.goal == "" && r.outcome == "" {
				t.Fatalf("no error and nothing usable: %+v", r)
			}
			ep := mergeReply(s, base, r)
			checkLimits(t, ep)
			var tools []memory.ActionNode
			for _, a := range ep.Actions {
				if a.Tool != "" {
					tools = append(tools, a)
				}
			}
			if !reflect.DeepEqual(tools, base.Actions) || !reflect.DeepEqual(ep.Tools, base.Tools) {
				t.Fatalf("tool actions changed by the reply")
			}
			checkEvent(t, ep)
		}
		p, err := parseScratchpadReply(reply)
		if err != nil {
			return
		}
		for _, l := range [][]string{p.projects, p.questions, p.steps, {p.focus, p.progress}} {
			for _, x := range l {
				if !utf8.ValidString(x) || utf8.RuneCountInString(x) > maxProgressRunes {
					t.Fatalf("bad item %q", x)
				}
			}
		}
		if len(p.projects) > MaxActiveProjects || len(p.questions) > MaxOpenQuestions || len(p.steps) > MaxNextSteps {
			t.Fatalf("too many items: %+v", p)
		}
	})
}
