package episode

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// TestLimitsFitEvents checks the package's limits against the events it
// feeds, in bytes: a rune is at most 4.
func TestLimitsFitEvents(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		bytes, max int
	}{
		{"summary", MaxSummaryRunes * utf8.UTFMax, events.MaxEpisodeSummaryBytes},
		{"goal", MaxGoalRunes * utf8.UTFMax, events.MaxNoteBytes},
		{"params", MaxParamsRunes * utf8.UTFMax, events.MaxNoteBytes},
		{"result", MaxResultRunes * utf8.UTFMax, events.MaxNoteBytes},
		{"error", MaxErrorRunes * utf8.UTFMax, events.MaxNoteBytes},
		{"entity", maxEntityBytes, events.MaxIDBytes},
		{"tool name", maxToolNameRunes * utf8.UTFMax, events.MaxIDBytes},
		{"scratchpad item", maxItemRunes * utf8.UTFMax, events.MaxNoteBytes},
		{"project", maxProjectRunes * utf8.UTFMax, events.MaxIDBytes},
		{"scratchpad", memory.ScratchpadMaxChars * utf8.UTFMax, events.MaxScratchpadBytes},
		{"actions", MaxActions, events.MaxEpisodeActions},
		{"entities", MaxEntities, events.MaxEpisodeEntities},
		{"tools", MaxTools, events.MaxEpisodeEntities},
		{"linked", MaxLinked, events.MaxEpisodeActions},
		{"projects", MaxActiveProjects, events.MaxScratchpadItems},
	} {
		if c.bytes > c.max {
			t.Errorf("%s: %d > %d", c.name, c.bytes, c.max)
		}
	}
}

// checkEvent fails unless ep is valid episode.built data.
func checkEvent(t *testing.T, ep memory.Episode) {
	t.Helper()
	data := events.Episode{
		ID: ep.ID, SessionID: ep.SessionID, Summary: ep.Summary, Goal: ep.Goal, Outcome: ep.Outcome,
		Started: ep.Started, Ended: ep.Ended, Entities: ep.Entities, Tools: ep.Tools,
		LinkedMemories: ep.LinkedMemories, Importance: ep.Importance, Source: ep.Source, Turns: ep.Turns,
	}
	for _, a := range ep.Actions {
		data.Actions = append(data.Actions, events.ActionNode(a))
	}
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.DecodeData(events.TypeEpisodeBuilt, b); err != nil {
		t.Fatalf("not valid %s data: %v\n%s", events.TypeEpisodeBuilt, err, b)
	}
}

func checkScratchpadEvent(t *testing.T, pad memory.Scratchpad, episodeID string) {
	t.Helper()
	b, err := json.Marshal(events.Scratchpad{
		Content: pad.Content, ActiveProjects: pad.ActiveProjects, CurrentFocus: pad.CurrentFocus,
		OpenQuestions: pad.OpenQuestions, NextSteps: pad.NextSteps, Source: pad.Source, EpisodeID: episodeID,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.DecodeData(events.TypeScratchpadUpdated, b); err != nil {
		t.Fatalf("not valid %s data: %v\n%s", events.TypeScratchpadUpdated, err, b)
	}
}

func TestEpisodesAreValidEvents(t *testing.T) {
	t.Parallel()
	var pad memory.Scratchpad
	for i, tc := range goldenSessions {
		t.Run(tc.name, func(t *testing.T) {
			ep := Extractive(tc.in())
			checkEvent(t, ep)
			pad = UpdateScratchpad(pad, ep, day(i))
			checkScratchpadEvent(t, pad, ep.ID)
		})
	}
}
