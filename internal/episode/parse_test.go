package episode

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/memory"
)

func TestParseEpisodeReply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reply string
		want        episodeReply
	}{
		{"plain", `{"summary":"s","goal":"g","outcome":"failed","entities":["a","b","a"],"decisions":[]}`,
			episodeReply{summary: "s", goal: "g", outcome: memory.OutcomeFailed, entities: []string{"a", "b"}}},
		{"chinese synonyms", `{"摘要":"修复了迁移","目标":"修好迁移","结果":"成功"}`,
			episodeReply{summary: "修复了迁移", goal: "修好迁移", outcome: memory.OutcomeCompleted}},
		{"keys in any case, unknown outcome dropped", `{"SUMMARY":"s","Outcome":"meh"}`, episodeReply{summary: "s"}},
		{"wrapped once", `{"episode":{"goal":"g","status":"in progress"}}`, episodeReply{goal: "g", outcome: memory.OutcomeOngoing}},
		{"decisions as strings and objects", `{"goal":"g","decisions":["use A",{"turn":"3","text":"use B"},{"turn":-1,"decision":"use C"},{"nothing":1}]}`,
			episodeReply{goal: "g", decisions: []decision{{text: "use A"}, {turn: 3, hasTurn: true, text: "use B"}, {text: "use C"}}}},
		{"whitespace folded, control characters gone", "{\"summary\":\"line one\\nline\\u0000 two\",\"goal\":\"\\t g \"}",
			episodeReply{summary: "line one line two", goal: "g"}},
		{"reasoning and fence", "<think>{\"summary\":\"no\"}</think>\n```json\n{\"summary\":\"yes\"}\n```", episodeReply{summary: "yes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseEpisodeReply(tc.reply)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	t.Run("cut to the limits", func(t *testing.T) {
		long := strings.Repeat("长", 1000)
		var list []string
		for i := range 50 {
			list = append(list, `"entity`+strings.Repeat("x", i)+`"`)
		}
		list = append(list, `"`+long+`"`)
		got, err := parseEpisodeReply(`{"summary":"` + long + `","goal":"` + long + `","entities":[` + strings.Join(list, ",") + `],"decisions":[` + strings.Repeat(`"`+long+`",`, 20) + `"x"]}`)
		if err != nil {
			t.Fatal(err)
		}
		if utf8.RuneCountInString(got.summary) != MaxSummaryRunes || utf8.RuneCountInString(got.goal) != MaxGoalRunes {
			t.Fatalf("summary %d, goal %d runes", utf8.RuneCountInString(got.summary), utf8.RuneCountInString(got.goal))
		}
		if len(got.entities) != MaxEntities || len(got.decisions) != MaxDecisions {
			t.Fatalf("%d entities, %d decisions", len(got.entities), len(got.decisions))
		}
		if n := utf8.RuneCountInString(got.decisions[0].text); n != MaxResultRunes {
			t.Fatalf("decision of %d runes", n)
		}
	})
	for _, bad := range []string{"", "nothing here", "{}", "[]", `{"facts":[]}`, `{"summary":""}`, `{"summary":null,"outcome":"weird"}`, `{"a":{"b":{"summary":"too deep"}}}`} {
		if got, err := parseEpisodeReply(bad); err == nil {
			t.Errorf("parse(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestParseScratchpadReply(t *testing.T) {
	t.Parallel()
	got, err := parseScratchpadReply(`{"projects":["a",{"name":"b"},"a"],"focus":"f","open_questions":[],"progress":"p"}`)
	if err != nil {
		t.Fatal(err)
	}
	want := scratchpadReply{projects: []string{"a", "b"}, questions: []string{}, steps: []string{}, focus: "f", progress: "p", hasProjects: true, hasQuestions: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	got, err = parseScratchpadReply(`{"next_steps":"one step"}`)
	if err != nil || !reflect.DeepEqual(got.steps, []string{"one step"}) || !got.hasSteps {
		t.Fatalf("single string list: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "{}", `{"summary_of_session":"x"}`, "[1,2]"} {
		if _, err := parseScratchpadReply(bad); err == nil {
			t.Errorf("parse(%q): want an error", bad)
		}
	}
}
