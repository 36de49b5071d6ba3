package events_test

import (
	"fmt"
	"strings"

	"github.com/engramhq/engram/events"
)

// episodeWith returns valid episode.built data with fields replaced,
// added (`"goal":"x"`) or dropped (`-goal`), as candidateWith does.
func episodeWith(changes ...string) string {
	return objectWith(`"id":"ep-1","session_id":"s1","summary":"The user set up the build.","outcome":"completed",`+
		`"started":"2025-06-01T09:30:00Z","ended":"2025-06-01T09:45:00Z","importance":0.6,"source":"session_end","turns":[0,1,2]`, changes...)
}

// objectWith builds a JSON object from members, then applies changes.
// Members must not hold `,"` inside a value.
func objectWith(fields string, changes ...string) string {
	members := strings.Split(fields, `,"`)
	for i := 1; i < len(members); i++ {
		members[i] = `"` + members[i]
	}
	for _, c := range changes {
		if name, ok := strings.CutPrefix(c, "-"); ok {
			members = filter(members, `"`+name+`":`)
			continue
		}
		name, _, _ := strings.Cut(c, ":")
		members = append(filter(members, name+":"), c)
	}
	return "{" + strings.Join(members, ",") + "}"
}

// idList returns n distinct quoted ids, comma-separated.
func idList(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"m%d"`, i)
	}
	return strings.Join(ids, ",")
}

func accesses(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"memory_id":"m%d","count":1,"last":"2025-06-01T09:30:00Z"}`, i)
	}
	return `{"accesses":[` + strings.Join(out, ",") + `]}`
}

const action = `{"tool":"shell","params":"go test ./...","result":"ok","success":true,"turn":1}`

var consolidationDataSamples = []sample{
	// episode.built
	{name: "episode", eventType: events.TypeEpisodeBuilt, body: episodeWith()},
	{name: "episode with every field", eventType: events.TypeEpisodeBuilt, body: episodeWith(
		`"goal":"让构建通过"`,
		`"actions":[`+action+`,{"tool":"edit","params":"main.go","success":false,"error":"permission denied","turn":2},{"decision":"换用 Makefile","turn":2}]`,
		`"entities":["main.go","engram","Makefile"]`, `"tools":["shell","edit"]`, `"linked_memories":["m1","m2"]`, `"source":"compression"`)},
	{name: "episode of an instant", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"ended":"2025-06-01T09:30:00Z"`, `"source":"sweep"`, `"outcome":"ongoing"`)},
	{name: "episode with empty lists", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[]`, `"entities":[]`, `"tools":[]`, `"linked_memories":[]`)},
	{name: "episode with the most actions", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[` + strings.TrimSuffix(strings.Repeat(action+",", events.MaxEpisodeActions), ",") + `]`)},
	{name: "episode with too many actions", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[` + strings.TrimSuffix(strings.Repeat(action+",", events.MaxEpisodeActions+1), ",") + `]`), field: "data.actions"},
	{name: "episode with the most entities", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"entities":[` + idList(events.MaxEpisodeEntities) + `]`)},
	{name: "episode with too many entities", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"entities":[` + idList(events.MaxEpisodeEntities+1) + `]`), field: "data.entities"},
	{name: "episode with too many tools", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"tools":[` + idList(events.MaxEpisodeEntities+1) + `]`), field: "data.tools"},
	{name: "episode with too many linked memories", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"linked_memories":[` + idList(events.MaxEpisodeActions+1) + `]`), field: "data.linked_memories"},
	{name: "episode with the most turns", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"turns":[` + intList(events.MaxEpisodeTurns) + `]`)},
	{name: "episode with too many turns", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"turns":[` + intList(events.MaxEpisodeTurns+1) + `]`), field: "data.turns"},
	{name: "episode with the longest summary", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"summary":"` + strings.Repeat("x", events.MaxEpisodeSummaryBytes) + `"`)},
	{name: "episode summary of 4097 bytes", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"summary":"` + strings.Repeat("x", events.MaxEpisodeSummaryBytes+1) + `"`), field: "data.summary"},
	{name: "episode summary of 2000 characters, 6000 bytes", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"summary":"` + strings.Repeat("事", 2000) + `"`), field: "data.summary", goOnly: bytesNotChars},
	{name: "episode with an empty summary", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"summary":""`), field: "data.summary"},
	{name: "episode without an id", eventType: events.TypeEpisodeBuilt, body: episodeWith(`-id`), field: "data.id"},
	{name: "episode without a session", eventType: events.TypeEpisodeBuilt, body: episodeWith(`-session_id`), field: "data.session_id"},
	{name: "episode with a long goal", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"goal":"` + strings.Repeat("g", events.MaxNoteBytes+1) + `"`), field: "data.goal"},
	{name: "episode with an unknown outcome", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"outcome":"success"`), field: "data.outcome"},
	{name: "episode without an outcome", eventType: events.TypeEpisodeBuilt, body: episodeWith(`-outcome`), field: "data.outcome"},
	{name: "episode without a start", eventType: events.TypeEpisodeBuilt, body: episodeWith(`-started`), field: "data.started"},
	{name: "episode without an end", eventType: events.TypeEpisodeBuilt, body: episodeWith(`-ended`), field: "data.ended"},
	{name: "episode ending before it starts", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"ended":"2025-06-01T09:29:59Z"`), field: "data.ended", goOnly: cannotCompare},
	{name: "episode ending at the same instant in another zone", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"ended":"2025-06-01T17:30:00+08:00"`)},
	{name: "episode start in words", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"started":"this morning"`), field: "data.started"},
	{name: "episode start in month 13", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"started":"2025-13-01T09:30:00Z"`), field: "data.started", goOnly: calendar},
	{name: "episode without importance", eventType: events.TypeEpisodeBuilt, body: episodeWith(`-importance`), field: "data.importance"},
	{name: "episode importance over 1", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"importance":1.1`), field: "data.importance"},
	{name: "episode from an unknown source", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"source":"daily_consolidation"`), field: "data.source"},
	{name: "episode without turns", eventType: events.TypeEpisodeBuilt, body: episodeWith(`-turns`), field: "data.turns"},
	{name: "episode of no turns", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"turns":[]`), field: "data.turns"},
	{name: "episode turn twice", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"turns":[0,1,1]`), field: "data.turns[2]"},
	{name: "episode turns out of order", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"turns":[0,2,1]`), field: "data.turns[2]", goOnly: cannotCompare},
	{name: "episode entity twice", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"entities":["a","b","a"]`), field: "data.entities[2]"},
	{name: "episode with an empty tool name", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"tools":[""]`), field: "data.tools[0]"},
	{name: "episode with a control character in an entity", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"entities":["a\nb"]`), field: "data.entities[0]"},
	{name: "episode with tags", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"tags":["x"]`), field: "data.tags"},
	{name: "episode with an access count", eventType: events.TypeEpisodeBuilt, body: episodeWith(`"access_count":0`), field: "data.access_count"},
	{name: "action with neither tool nor decision", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[{"result":"ok","success":true,"turn":0}]`), field: "data.actions[0].tool"},
	{name: "action with an empty tool and no decision", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[{"tool":"","turn":0}]`), field: "data.actions[0].tool"},
	{name: "action without a turn", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[{"tool":"shell","success":true}]`), field: "data.actions[0].turn"},
	{name: "action with a negative turn", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[{"tool":"shell","turn":-1}]`), field: "data.actions[0].turn"},
	{name: "action with a long result", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[{"tool":"shell","turn":0,"result":"` + strings.Repeat("r", events.MaxNoteBytes+1) + `"}]`), field: "data.actions[0].result"},
	{name: "action success as a string", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[{"tool":"shell","turn":0,"success":"yes"}]`), field: "data.actions[0].success"},
	{name: "action params as an object", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[{"tool":"shell","turn":0,"params":{"cmd":"ls"}}]`), field: "data.actions[0].params"},
	{name: "action with a timestamp", eventType: events.TypeEpisodeBuilt,
		body: episodeWith(`"actions":[{"tool":"shell","turn":0,"timestamp":"2025-06-01T09:30:00Z"}]`), field: "data.actions[0].timestamp"},

	// scratchpad.updated
	{name: "scratchpad", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"## 当前项目\n- engram","source":"episode","episode_id":"ep-1"}`},
	{name: "scratchpad with every field", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"## Now\n- migrate","active_projects":["engram","myclaw"],"current_focus":"migration",
		"open_questions":["向量模型是否需要换成多语言模型?"],"next_steps":["write tests","ship"],"source":"episode","episode_id":"ep-1"}`},
	{name: "scratchpad cleared by a person", eventType: events.TypeScratchpadUpdated, body: `{"content":"","source":"person"}`},
	{name: "scratchpad with the longest content", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"` + strings.Repeat("x", events.MaxScratchpadBytes) + `","source":"person"}`},
	{name: "scratchpad content of 8193 bytes", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"` + strings.Repeat("x", events.MaxScratchpadBytes+1) + `","source":"person"}`, field: "data.content"},
	{name: "scratchpad content of 3000 characters, 9000 bytes", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"` + strings.Repeat("记", 3000) + `","source":"person"}`, field: "data.content", goOnly: bytesNotChars},
	{name: "scratchpad without content", eventType: events.TypeScratchpadUpdated, body: `{"source":"person"}`, field: "data.content"},
	{name: "scratchpad without a source", eventType: events.TypeScratchpadUpdated, body: `{"content":"x"}`, field: "data.source"},
	{name: "scratchpad from an unknown source", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"llm"}`, field: "data.source"},
	{name: "scratchpad from an episode without its id", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"episode"}`, field: "data.episode_id"},
	{name: "scratchpad from a person with an episode", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"person","episode_id":"ep-1"}`, field: "data.episode_id"},
	{name: "scratchpad with too many steps", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"person","next_steps":[` + idList(events.MaxScratchpadItems+1) + `]}`, field: "data.next_steps"},
	{name: "scratchpad with an empty question", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"person","open_questions":["a",""]}`, field: "data.open_questions[1]"},
	{name: "scratchpad with a long focus", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"person","current_focus":"` + strings.Repeat("f", events.MaxNoteBytes+1) + `"}`, field: "data.current_focus"},
	{name: "scratchpad with a project twice", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"person","active_projects":["a","a"]}`, field: "data.active_projects[1]"},
	{name: "scratchpad with null steps", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"person","next_steps":null}`, field: "data.next_steps"},
	{name: "scratchpad with an updated time", eventType: events.TypeScratchpadUpdated,
		body: `{"content":"x","source":"person","updated":"2025-06-01T09:30:00Z"}`, field: "data.updated"},

	// profile.refreshed
	{name: "profile", eventType: events.TypeProfileRefreshed, body: `{"memory_ids":["m1","m2"],"demoted":["m3"]}`},
	{name: "empty profile", eventType: events.TypeProfileRefreshed, body: `{"memory_ids":[]}`},
	{name: "largest profile", eventType: events.TypeProfileRefreshed, body: `{"memory_ids":[` + idList(events.MaxProfileMemories) + `]}`},
	{name: "profile too large", eventType: events.TypeProfileRefreshed,
		body: `{"memory_ids":[` + idList(events.MaxProfileMemories+1) + `]}`, field: "data.memory_ids"},
	{name: "profile without memories", eventType: events.TypeProfileRefreshed, body: `{"demoted":["m3"]}`, field: "data.memory_ids"},
	{name: "profile with null memories", eventType: events.TypeProfileRefreshed, body: `{"memory_ids":null}`, field: "data.memory_ids"},
	{name: "profile with a memory twice", eventType: events.TypeProfileRefreshed, body: `{"memory_ids":["m1","m1"]}`, field: "data.memory_ids[1]"},
	{name: "profile demoting too many", eventType: events.TypeProfileRefreshed,
		body: `{"memory_ids":[],"demoted":[` + idList(events.MaxProfileMemories+1) + `]}`, field: "data.demoted"},
	{name: "profile keeping a demoted memory", eventType: events.TypeProfileRefreshed,
		body: `{"memory_ids":["m1","m2"],"demoted":["m2"]}`, field: "data.demoted[0]", goOnly: cannotCompare},
	{name: "profile with a numeric id", eventType: events.TypeProfileRefreshed, body: `{"memory_ids":[1]}`, field: "data.memory_ids[0]"},

	// daily.summarized
	{name: "daily", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"telegram","summary":"讨论了记忆系统的迁移方案。","raw_tokens":1830,"source":"compression"}`},
	{name: "daily from a migration", eventType: events.TypeDailySummarized,
		body: `{"date":"2024-02-29","channel":"myclaw","summary":"x","raw_tokens":0,"source":"migration"}`},
	{name: "daily with the longest summary", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"` + strings.Repeat("x", events.MaxDailySummaryBytes) + `","raw_tokens":1,"source":"compression"}`},
	{name: "daily summary of 16385 bytes", eventType: events.TypeDailySummarized,
		body:  `{"date":"2025-06-01","channel":"c","summary":"` + strings.Repeat("x", events.MaxDailySummaryBytes+1) + `","raw_tokens":1,"source":"compression"}`,
		field: "data.summary"},
	{name: "daily with an empty summary", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"","raw_tokens":1,"source":"compression"}`, field: "data.summary"},
	{name: "daily with a time for a date", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01T00:00:00Z","channel":"c","summary":"x","raw_tokens":1,"source":"compression"}`, field: "data.date"},
	{name: "daily with a short date", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-6-1","channel":"c","summary":"x","raw_tokens":1,"source":"compression"}`, field: "data.date"},
	{name: "daily on February 30", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-02-30","channel":"c","summary":"x","raw_tokens":1,"source":"compression"}`, field: "data.date", goOnly: calendar},
	{name: "daily on February 29 of a common year", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-02-29","channel":"c","summary":"x","raw_tokens":1,"source":"compression"}`, field: "data.date", goOnly: calendar},
	{name: "daily without a date", eventType: events.TypeDailySummarized,
		body: `{"channel":"c","summary":"x","raw_tokens":1,"source":"compression"}`, field: "data.date"},
	{name: "daily without a channel", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","summary":"x","raw_tokens":1,"source":"compression"}`, field: "data.channel"},
	{name: "daily without raw tokens", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"x","source":"compression"}`, field: "data.raw_tokens"},
	{name: "daily with negative raw tokens", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"x","raw_tokens":-1,"source":"compression"}`, field: "data.raw_tokens"},
	{name: "daily from an unknown source", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"x","raw_tokens":1,"source":"manual"}`, field: "data.source"},
	{name: "daily part of an extraction", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"x","raw_tokens":1,"source":"extraction","part":"s1#0"}`},
	{name: "daily part without its name", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"x","raw_tokens":1,"source":"extraction"}`, field: "data.part"},
	{name: "daily written whole with a part", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"x","raw_tokens":1,"source":"compression","part":"s1#0"}`, field: "data.part"},
	// identity.confirmed
	{name: "identity declined", eventType: events.TypeIdentityConfirmed, body: `{}`},
	{name: "identity of the agent alone", eventType: events.TypeIdentityConfirmed,
		body: `{"agent":{"name":"十一","boundaries":["不替用户做决定"]}}`},
	{name: "identity with an empty boundary", eventType: events.TypeIdentityConfirmed,
		body: `{"agent":{"boundaries":[""]}}`, field: "data.agent.boundaries[0]"},
	{name: "identity with an unknown field", eventType: events.TypeIdentityConfirmed,
		body: `{"agent":{"mood":"x"}}`, field: "data.agent.mood"},
	// consolidation.reported
	{name: "report", eventType: events.TypeConsolidationReported,
		body: `{"date":"2025-06-02","since":"2025-06-01T03:00:00Z","episodes":0,"learned":0,"superseded":0,"merged":0,"archived":0,"days_compressed":0,"pending":0,"text":"nothing"}`},
	{name: "report without text", eventType: events.TypeConsolidationReported,
		body: `{"date":"2025-06-02","since":"2025-06-01T03:00:00Z","episodes":0,"learned":0,"superseded":0,"merged":0,"archived":0,"days_compressed":0,"pending":0,"text":""}`, field: "data.text"},
	{name: "daily already compressed", eventType: events.TypeDailySummarized,
		body: `{"date":"2025-06-01","channel":"c","summary":"x","raw_tokens":1,"source":"compression","compressed":true}`, field: "data.compressed"},

	// memories.merged
	{name: "merged", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":["m2","m3"],"importance":0.9,"cluster_id":"c-2025w22-7"}`},
	{name: "merged with new content", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":["m2"],"importance":0.5,"content":"喜欢喝绿茶，不加糖","cluster_id":"c1"}`},
	{name: "merged the most", eventType: events.TypeMemoriesMerged,
		body: `{"into":"x","merged":[` + idList(events.MaxMemoryBatch) + `],"importance":0.5,"cluster_id":"c1"}`},
	{name: "merged too many", eventType: events.TypeMemoriesMerged,
		body: `{"into":"x","merged":[` + idList(events.MaxMemoryBatch+1) + `],"importance":0.5,"cluster_id":"c1"}`, field: "data.merged"},
	{name: "merged nothing", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":[],"importance":0.5,"cluster_id":"c1"}`, field: "data.merged"},
	{name: "merged without a list", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","importance":0.5,"cluster_id":"c1"}`, field: "data.merged"},
	{name: "merged into nothing", eventType: events.TypeMemoriesMerged,
		body: `{"merged":["m2"],"importance":0.5,"cluster_id":"c1"}`, field: "data.into"},
	{name: "merged into itself", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":["m2","m1"],"importance":0.5,"cluster_id":"c1"}`, field: "data.merged[1]", goOnly: cannotCompare},
	{name: "merged one twice", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":["m2","m2"],"importance":0.5,"cluster_id":"c1"}`, field: "data.merged[1]"},
	{name: "merged without importance", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":["m2"],"cluster_id":"c1"}`, field: "data.importance"},
	{name: "merged with empty content", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":["m2"],"importance":0.5,"content":"","cluster_id":"c1"}`, field: "data.content"},
	{name: "merged with content of 4097 bytes", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":["m2"],"importance":0.5,"content":"` + strings.Repeat("x", events.MaxMemoryContentBytes+1) + `","cluster_id":"c1"}`, field: "data.content"},
	{name: "merged without a cluster", eventType: events.TypeMemoriesMerged,
		body: `{"into":"m1","merged":["m2"],"importance":0.5}`, field: "data.cluster_id"},

	// memories.archived
	{name: "archived", eventType: events.TypeMemoriesArchived, body: `{"memory_ids":["m1","m2"],"reason":"decay"}`},
	{name: "archived by hand", eventType: events.TypeMemoriesArchived, body: `{"memory_ids":["m1"],"reason":"manual"}`},
	{name: "archived the most", eventType: events.TypeMemoriesArchived,
		body: `{"memory_ids":[` + idList(events.MaxMemoryBatch) + `],"reason":"cap"}`},
	{name: "archived too many", eventType: events.TypeMemoriesArchived,
		body: `{"memory_ids":[` + idList(events.MaxMemoryBatch+1) + `],"reason":"cap"}`, field: "data.memory_ids"},
	{name: "archived nothing", eventType: events.TypeMemoriesArchived, body: `{"memory_ids":[],"reason":"expired"}`, field: "data.memory_ids"},
	{name: "archived one twice", eventType: events.TypeMemoriesArchived, body: `{"memory_ids":["m1","m1"],"reason":"expired"}`, field: "data.memory_ids[1]"},
	{name: "archived for no reason", eventType: events.TypeMemoriesArchived, body: `{"memory_ids":["m1"]}`, field: "data.reason"},
	{name: "archived for an unknown reason", eventType: events.TypeMemoriesArchived,
		body: `{"memory_ids":["m1"],"reason":"old"}`, field: "data.reason"},

	// memories.accessed
	{name: "accessed", eventType: events.TypeMemoriesAccessed,
		body: `{"accesses":[{"memory_id":"m1","count":3,"last":"2025-06-01T09:30:00Z"},{"memory_id":"记忆-2","count":1,"last":"2025-06-01T17:31:00.5+08:00"}]}`},
	{name: "accessed the most", eventType: events.TypeMemoriesAccessed, body: accesses(events.MaxMemoryBatch)},
	{name: "accessed too many", eventType: events.TypeMemoriesAccessed, body: accesses(events.MaxMemoryBatch + 1), field: "data.accesses"},
	{name: "accessed nothing", eventType: events.TypeMemoriesAccessed, body: `{"accesses":[]}`, field: "data.accesses"},
	{name: "accessed without accesses", eventType: events.TypeMemoriesAccessed, body: `{}`, field: "data.accesses"},
	{name: "accessed zero times", eventType: events.TypeMemoriesAccessed,
		body: `{"accesses":[{"memory_id":"m1","count":0,"last":"2025-06-01T09:30:00Z"}]}`, field: "data.accesses[0].count"},
	{name: "accessed without a count", eventType: events.TypeMemoriesAccessed,
		body: `{"accesses":[{"memory_id":"m1","last":"2025-06-01T09:30:00Z"}]}`, field: "data.accesses[0].count"},
	{name: "accessed without a time", eventType: events.TypeMemoriesAccessed,
		body: `{"accesses":[{"memory_id":"m1","count":1}]}`, field: "data.accesses[0].last"},
	{name: "accessed at a bad time", eventType: events.TypeMemoriesAccessed,
		body: `{"accesses":[{"memory_id":"m1","count":1,"last":"2025-06-01"}]}`, field: "data.accesses[0].last"},
	{name: "accessed without a memory", eventType: events.TypeMemoriesAccessed,
		body: `{"accesses":[{"count":1,"last":"2025-06-01T09:30:00Z"}]}`, field: "data.accesses[0].memory_id"},
	{name: "accessed one memory twice", eventType: events.TypeMemoriesAccessed,
		body:  `{"accesses":[{"memory_id":"m1","count":1,"last":"2025-06-01T09:30:00Z"},{"memory_id":"m1","count":2,"last":"2025-06-01T09:31:00Z"}]}`,
		field: "data.accesses[1].memory_id", goOnly: cannotCompare},

	// retrieval.degraded
	{name: "degraded to fts", eventType: events.TypeRetrievalDegraded, body: `{"from":"vectors","to":"fts","reason":"embedding endpoint: 503"}`},
	{name: "degraded to recent", eventType: events.TypeRetrievalDegraded, body: `{"from":"fts","to":"recent","reason":"fts5: database is locked"}`},
	{name: "degraded without a path", eventType: events.TypeRetrievalDegraded, body: `{"from":"episodes","to":"none","reason":"x"}`},
	{name: "degraded two steps at once", eventType: events.TypeRetrievalDegraded, body: `{"from":"vectors","to":"recent","reason":"x"}`, field: "data.to"},
	{name: "degraded to itself", eventType: events.TypeRetrievalDegraded, body: `{"from":"fts","to":"fts","reason":"x"}`, field: "data.to"},
	{name: "degraded upwards", eventType: events.TypeRetrievalDegraded, body: `{"from":"fts","to":"vectors","reason":"x"}`, field: "data.to"},
	{name: "degraded from recent", eventType: events.TypeRetrievalDegraded, body: `{"from":"recent","to":"fts","reason":"x"}`, field: "data.to"},
	{name: "degraded from nowhere", eventType: events.TypeRetrievalDegraded, body: `{"from":"memory","to":"none","reason":"x"}`, field: "data.from"},
	{name: "degraded for no reason", eventType: events.TypeRetrievalDegraded, body: `{"from":"vectors","to":"fts"}`, field: "data.reason"},
	{name: "degraded with a long reason", eventType: events.TypeRetrievalDegraded,
		body: `{"from":"vectors","to":"fts","reason":"` + strings.Repeat("r", events.MaxReasonBytes+1) + `"}`, field: "data.reason"},
	{name: "degraded without a from", eventType: events.TypeRetrievalDegraded, body: `{"to":"fts","reason":"x"}`, field: "data.from"},

	// user.forgotten
	{name: "forgotten", eventType: events.TypeUserForgotten, body: `{}`},
	{name: "forgotten with a reason", eventType: events.TypeUserForgotten, body: `{"reason":"GDPR erasure request #42"}`},
	{name: "forgotten with a long reason", eventType: events.TypeUserForgotten,
		body: `{"reason":"` + strings.Repeat("r", events.MaxReasonBytes+1) + `"}`, field: "data.reason"},
	{name: "forgotten with a user", eventType: events.TypeUserForgotten, body: `{"user":"alice"}`, field: "data.user"},
	{name: "forgotten with null", eventType: events.TypeUserForgotten, body: `null`, field: "data"},

	// turns.expired
	{name: "expired", eventType: events.TypeTurnsExpired, body: `{"before_seq":42,"stored_before":"2025-06-01T03:00:00Z"}`},
	{name: "expired before nothing", eventType: events.TypeTurnsExpired, body: `{"before_seq":0,"stored_before":"2025-06-01T03:00:00Z"}`, field: "data.before_seq"},
	{name: "expired without a seq", eventType: events.TypeTurnsExpired, body: `{"stored_before":"2025-06-01T03:00:00Z"}`, field: "data.before_seq"},
	{name: "expired without a cutoff", eventType: events.TypeTurnsExpired, body: `{"before_seq":42}`, field: "data.stored_before"},
	{name: "expired with a user", eventType: events.TypeTurnsExpired, body: `{"before_seq":42,"stored_before":"2025-06-01T03:00:00Z","user":"a"}`, field: "data.user"},
}

var consolidationEventSamples = []sample{
	{name: "episode for the subject's session", body: with(m{"type": events.TypeEpisodeBuilt,
		"data": parsed(strings.Replace(episodeWith(), `"s1"`, `"s-42"`, 1))})},
	{name: "episode without a subject", body: with(m{"type": events.TypeEpisodeBuilt, "subject": drop, "data": parsed(episodeWith())})},
	{name: "episode for another session", body: with(m{"type": events.TypeEpisodeBuilt, "data": parsed(episodeWith())}),
		field: "subject", goOnly: cannotCompare},
	{name: "scratchpad", body: with(m{"type": events.TypeScratchpadUpdated, "subject": drop, "data": m{"content": "x", "source": "person"}})},
	{name: "scratchpad with a subject", body: with(m{"type": events.TypeScratchpadUpdated, "data": m{"content": "x", "source": "person"}}), field: "subject"},
	{name: "profile with a subject", body: with(m{"type": events.TypeProfileRefreshed, "data": m{"memory_ids": []any{}}}), field: "subject"},
	{name: "daily with a subject", body: with(m{"type": events.TypeDailySummarized,
		"data": m{"date": "2025-06-01", "channel": "c", "summary": "x", "raw_tokens": 1, "source": "compression"}}), field: "subject"},
	{name: "merged with a subject", body: with(m{"type": events.TypeMemoriesMerged,
		"data": m{"into": "m1", "merged": []any{"m2"}, "importance": 0.5, "cluster_id": "c1"}}), field: "subject"},
	{name: "archived", body: with(m{"type": events.TypeMemoriesArchived, "subject": drop, "data": m{"memory_ids": []any{"m1"}, "reason": "decay"}})},
	{name: "archived with a subject", body: with(m{"type": events.TypeMemoriesArchived, "data": m{"memory_ids": []any{"m1"}, "reason": "decay"}}), field: "subject"},
	{name: "accessed with a subject", body: with(m{"type": events.TypeMemoriesAccessed, "data": parsed(accesses(1))}), field: "subject"},
	{name: "degraded with a subject", body: with(m{"type": events.TypeRetrievalDegraded,
		"data": m{"from": "vectors", "to": "fts", "reason": "x"}}), field: "subject"},
	{name: "forgotten", body: with(m{"type": events.TypeUserForgotten, "subject": drop, "agent": drop, "data": m{}})},
	{name: "forgotten with a subject", body: with(m{"type": events.TypeUserForgotten, "data": m{}}), field: "subject"},
}
