package events_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
)

func TestDecodeConsolidationValues(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		name, eventType, body string
		want                  any
	}{
		{"episode", events.TypeEpisodeBuilt,
			episodeWith(`"goal":"g"`, `"actions":[{"tool":"shell","params":"p","result":"r","success":true,"error":"e","decision":"d","turn":2e0}]`,
				`"entities":["a"]`, `"tools":["shell"]`, `"linked_memories":["m1"]`),
			&events.Episode{ID: "ep-1", SessionID: "s1", Summary: "The user set up the build.", Goal: "g", Outcome: events.OutcomeCompleted,
				Started: at("2025-06-01T09:30:00Z"), Ended: at("2025-06-01T09:45:00Z"),
				Actions:  []events.ActionNode{{Tool: "shell", Params: "p", Result: "r", Success: true, Error: "e", Decision: "d", Turn: 2}},
				Entities: []string{"a"}, Tools: []string{"shell"}, LinkedMemories: []string{"m1"},
				Importance: 0.6, Source: events.SourceSessionEnd, Turns: []int{0, 1, 2}}},
		{"scratchpad", events.TypeScratchpadUpdated,
			`{"content":"c","active_projects":["p"],"current_focus":"f","open_questions":["q"],"next_steps":["s"],"source":"episode","episode_id":"ep-1"}`,
			&events.Scratchpad{Content: "c", ActiveProjects: []string{"p"}, CurrentFocus: "f", OpenQuestions: []string{"q"},
				NextSteps: []string{"s"}, Source: events.SourceEpisode, EpisodeID: "ep-1"}},
		{"empty profile", events.TypeProfileRefreshed, `{"memory_ids":[]}`, &events.ProfileRefreshed{MemoryIDs: []string{}}},
		{"profile", events.TypeProfileRefreshed, `{"memory_ids":["m1"],"demoted":["m2"]}`,
			&events.ProfileRefreshed{MemoryIDs: []string{"m1"}, Demoted: []string{"m2"}}},
		{"daily", events.TypeDailySummarized, `{"date":"2025-06-01","channel":"c","summary":"s","raw_tokens":12,"source":"migration"}`,
			&events.DailySummary{Date: "2025-06-01", Channel: "c", Summary: "s", RawTokens: 12, Source: events.SourceMigration}},
		{"merged", events.TypeMemoriesMerged, `{"into":"m1","merged":["m2","m3"],"importance":0.75,"content":"c","cluster_id":"k"}`,
			&events.MemoriesMerged{Into: "m1", Merged: []string{"m2", "m3"}, Importance: 0.75, Content: new("c"), ClusterID: "k"}},
		{"archived", events.TypeMemoriesArchived, `{"memory_ids":["m1"],"reason":"cap"}`,
			&events.MemoriesArchived{MemoryIDs: []string{"m1"}, Reason: events.ArchiveCap}},
		{"accessed", events.TypeMemoriesAccessed, `{"accesses":[{"memory_id":"m1","count":3,"last":"2025-06-01T17:30:00+08:00"}]}`,
			&events.MemoriesAccessed{Accesses: []events.Access{{MemoryID: "m1", Count: 3, Last: at("2025-06-01T17:30:00+08:00")}}}},
		{"degraded", events.TypeRetrievalDegraded, `{"from":"vectors","to":"fts","reason":"r"}`,
			&events.RetrievalDegraded{From: "vectors", To: "fts", Reason: "r"}},
		{"forgotten", events.TypeUserForgotten, `{"reason":"asked"}`, &events.UserForgotten{Reason: "asked"}},
	} {
		t.Run(c.name, func(t *testing.T) { decodesTo(t, c.eventType, c.body, c.want) })
	}
}

// Workers publish these types with NewDerived from Go values: each must
// make a valid event, with the session as subject only for an episode,
// that DecodeStructured reads back as the same data.
func TestNewDerivedConsolidation(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 6, 1, 3, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		typ     string
		data    any
		subject string
	}{
		{events.TypeEpisodeBuilt, events.Episode{ID: "ep-1", SessionID: "s-42", Summary: "s", Outcome: events.OutcomePartial,
			Started: at.Add(-time.Hour), Ended: at, Importance: 0.5, Source: events.SourceCompression, Turns: []int{3, 4},
			Actions: []events.ActionNode{{Decision: "stop", Turn: 4}}}, "s-42"},
		{events.TypeScratchpadUpdated, events.Scratchpad{Content: "## 当前项目", Source: events.SourcePerson}, ""},
		{events.TypeProfileRefreshed, events.ProfileRefreshed{}, ""},
		{events.TypeDailySummarized, events.DailySummary{Date: "2025-05-31", Channel: "web", Summary: "s", RawTokens: 9, Source: events.SourceCompression}, ""},
		{events.TypeMemoriesMerged, events.MemoriesMerged{Into: "m1", Merged: []string{"m2"}, Importance: 0.9, ClusterID: "k"}, ""},
		{events.TypeMemoriesArchived, events.MemoriesArchived{MemoryIDs: []string{"m1"}, Reason: events.ArchiveDecay}, ""},
		{events.TypeMemoriesAccessed, events.MemoriesAccessed{Accesses: []events.Access{{MemoryID: "m1", Count: 2, Last: at}}}, ""},
		{events.TypeRetrievalDegraded, events.RetrievalDegraded{From: "fts", To: "recent", Reason: "locked"}, ""},
		{events.TypeUserForgotten, events.UserForgotten{}, ""},
	} {
		t.Run(c.typ, func(t *testing.T) {
			e, err := events.NewDerived("urn:engram:consolidator", c.typ, "id-"+c.typ, "acme", "alice", at, c.data)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Subject(); got != c.subject {
				t.Fatalf("Subject=%q, want %q", got, c.subject)
			}
			if got, want := events.SessionID(c.data), c.subject; got != want {
				t.Fatalf("SessionID=%q, want %q", got, want)
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			_, data, err := events.DecodeStructured(b, 0)
			if err != nil {
				t.Fatalf("DecodeStructured(%s): %v", b, err)
			}
			if got, want := normalize(t, data), normalize(t, c.data); !reflect.DeepEqual(got, want) {
				t.Fatalf("data=%s\nwant %s", got, want)
			}
		})
	}
}

func TestConsolidationMessages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ typ, body, want string }{
		{events.TypeEpisodeBuilt, episodeWith(`"ended":"2025-06-01T09:00:00Z"`), "data.ended: is before started"},
		{events.TypeEpisodeBuilt, episodeWith(`"actions":[{"turn":0}]`), "data.actions[0].tool: required: an action needs a tool or a decision"},
		{events.TypeEpisodeBuilt, episodeWith(`"turns":[` + intList(events.MaxEpisodeTurns+1) + `]`), "data.turns: holds more than 2000 turn indices"},
		{events.TypeProfileRefreshed, `{"memory_ids":["m1"],"demoted":["m1"]}`, `data.demoted[0]: "m1" is also in memory_ids`},
		{events.TypeMemoriesMerged, `{"into":"m1","merged":["m1"],"importance":1,"cluster_id":"c"}`, `data.merged[0]: "m1" is the memory merged into`},
		{events.TypeMemoriesArchived, `{"memory_ids":["m1","m1"],"reason":"cap"}`, `data.memory_ids[1]: "m1" is listed twice`},
		{events.TypeMemoriesAccessed, strings.Replace(accesses(2), `"m1"`, `"m0"`, 1), `data.accesses[1].memory_id: "m0" is also accesses[0]`},
		{events.TypeRetrievalDegraded, `{"from":"fts","to":"fts","reason":"x"}`, `data.to: must be recent after from "fts", not "fts"`},
		{events.TypeDailySummarized, `{"date":"2025-02-30","channel":"c","summary":"x","raw_tokens":1,"source":"migration"}`, `data.date: is not a real date`},
		{events.TypeScratchpadUpdated, `{"content":"x","source":"person","episode_id":"e"}`, `data.episode_id: is only for source episode`},
	} {
		_, err := events.DecodeData(c.typ, []byte(c.body))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: err=%v, want it to start %q", c.typ, err, c.want)
		}
	}
}

// The extraction limit still holds after decodeIndexes took a limit.
func TestExtractionTurnLimitUnchanged(t *testing.T) {
	t.Parallel()
	_, err := events.DecodeData(events.TypeExtractionFailed,
		[]byte(`{"request_id":"r1","session_id":"s1","reason":"x","attempts":1,"turns":[`+intList(events.MaxExtractionTurns+1)+`]}`))
	if want := "data.turns: holds more than 500 turn indices"; err == nil || err.Error() != want {
		t.Fatalf("err=%v, want %q", err, want)
	}
}
