package events_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/engramhq/engram/events"
)

const zeroTimeValid = "the zero time is a valid date-time"

// turn0 is a valid turn of an extraction request.
const turn0 = `{"turn_index":0,"role":"user","content":"我叫小明","time":"2025-06-01T09:30:00Z"}`

// request returns extraction.requested data with the given turns.
func request(turns ...string) string {
	return `{"request_id":"r1","session_id":"s1","reason":"quiet","turns":[` + strings.Join(turns, ",") + `]}`
}

// turnsUpTo returns n valid turns with indices 0 to n-1.
func turnsUpTo(n int) []string {
	turns := make([]string, n)
	for i := range turns {
		turns[i] = fmt.Sprintf(`{"turn_index":%d,"role":"user","content":"x","time":"2025-06-01T09:30:00Z"}`, i)
	}
	return turns
}

// candidate is a valid candidate; candidateWith replaces or adds fields
// (given as JSON members, e.g. `"kind":"opinion"`) or drops them (`-kind`).
var candidate = candidateWith()

const candidateFields = `"kind":"preference","category":"config","subject":"user","predicate":"prefers","content":"prefers tea","importance":0.6,"confidence":0.9`

func candidateWith(changes ...string) string {
	members := strings.Split(candidateFields, `,"`)
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

func filter(members []string, prefix string) []string {
	var out []string
	for _, m := range members {
		if !strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}

// extracted returns memory.extracted data with the given candidates.
func extracted(candidates ...string) string {
	return `{"request_id":"r1","session_id":"s1","extractor":"llm","model":"qwen3-8b","usage":{"prompt_tokens":812,"completion_tokens":95},` +
		`"calls":1,"turns":[0,1,2],"candidates":[` + strings.Join(candidates, ",") + `]}`
}

var derivedDataSamples = []sample{
	// extraction.requested
	{name: "request", eventType: events.TypeExtractionRequested, body: request(turn0)},
	{name: "request with every field", eventType: events.TypeExtractionRequested,
		body: `{"request_id":"r-7","session_id":"s-42","reason":"compressing","summary":"the user named themselves","turns":[` + turn0 + `,
		{"turn_index":1,"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"remember","input":{"k":"name"}}],"time":"2025-06-01T11:30:01.123456789+02:00","project":"engram"},
		{"turn_index":5,"role":"tool","tool_results":[{"tool_call_id":"c1","content":"ok","is_error":false}],"time":"2025-06-01T09:30:02Z"},
		{"turn_index":6,"role":"user","time":"2025-06-01T09:30:03Z"}]}`},
	{name: "request with the most turns", eventType: events.TypeExtractionRequested, body: request(turnsUpTo(events.MaxExtractionTurns)...)},
	{name: "request to redrive", eventType: events.TypeExtractionRequested,
		body: strings.Replace(request(turn0), "quiet", "redrive", 1)},
	{name: "request with too many turns", eventType: events.TypeExtractionRequested,
		body: request(turnsUpTo(events.MaxExtractionTurns + 1)...), field: "data.turns"},
	{name: "request without an id", eventType: events.TypeExtractionRequested,
		body: `{"session_id":"s1","reason":"quiet","turns":[` + turn0 + `]}`, field: "data.request_id"},
	{name: "request without a session", eventType: events.TypeExtractionRequested,
		body: `{"request_id":"r1","reason":"quiet","turns":[` + turn0 + `]}`, field: "data.session_id"},
	{name: "request for an unknown reason", eventType: events.TypeExtractionRequested,
		body: strings.Replace(request(turn0), "quiet", "bored", 1), field: "data.reason"},
	{name: "request without a reason", eventType: events.TypeExtractionRequested,
		body: `{"request_id":"r1","session_id":"s1","turns":[` + turn0 + `]}`, field: "data.reason"},
	{name: "request without turns", eventType: events.TypeExtractionRequested,
		body: `{"request_id":"r1","session_id":"s1","reason":"quiet"}`, field: "data.turns"},
	{name: "request with no turns", eventType: events.TypeExtractionRequested, body: request(), field: "data.turns"},
	{name: "request turn without a time", eventType: events.TypeExtractionRequested,
		body: request(`{"turn_index":0,"role":"user","content":"x"}`), field: "data.turns[0].time"},
	{name: "request turn time with a space", eventType: events.TypeExtractionRequested,
		body: request(`{"turn_index":0,"role":"user","content":"x","time":"2025-06-01 09:30:00Z"}`), field: "data.turns[0].time"},
	{name: "request turn time is a number", eventType: events.TypeExtractionRequested,
		body: request(`{"turn_index":0,"role":"user","content":"x","time":1748770200}`), field: "data.turns[0].time"},
	{name: "request turn time in month 13", eventType: events.TypeExtractionRequested,
		body:  request(`{"turn_index":0,"role":"user","content":"x","time":"2025-13-01T09:30:00Z"}`),
		field: "data.turns[0].time", goOnly: calendar},
	{name: "request turn at the zero time", eventType: events.TypeExtractionRequested,
		body:  request(`{"turn_index":0,"role":"user","content":"x","time":"0001-01-01T00:00:00Z"}`),
		field: "data.turns[0].time", goOnly: zeroTimeValid},
	{name: "request turn with a bad role", eventType: events.TypeExtractionRequested,
		body: request(`{"turn_index":0,"role":"bot","content":"x","time":"2025-06-01T09:30:00Z"}`), field: "data.turns[0].role"},
	{name: "request turn without an index", eventType: events.TypeExtractionRequested,
		body: request(`{"role":"user","content":"x","time":"2025-06-01T09:30:00Z"}`), field: "data.turns[0].turn_index"},
	{name: "request turn with a session", eventType: events.TypeExtractionRequested,
		body: request(`{"session_id":"s1","turn_index":0,"role":"user","content":"x","time":"2025-06-01T09:30:00Z"}`), field: "data.turns[0].session_id"},
	{name: "request turn with attachments", eventType: events.TypeExtractionRequested,
		body: request(`{"turn_index":0,"role":"user","attachments":[{"name":"a"}],"time":"2025-06-01T09:30:00Z"}`), field: "data.turns[0].attachments"},
	{name: "request turn with a tool call without a name", eventType: events.TypeExtractionRequested,
		body: request(`{"turn_index":0,"role":"assistant","tool_calls":[{"id":"c1"}],"time":"2025-06-01T09:30:00Z"}`), field: "data.turns[0].tool_calls[0].name"},
	{name: "request turns out of order", eventType: events.TypeExtractionRequested,
		body:  request(strings.Replace(turn0, `"turn_index":0`, `"turn_index":2`, 1), turn0),
		field: "data.turns[1].turn_index", goOnly: cannotCompare},
	{name: "request turn twice", eventType: events.TypeExtractionRequested,
		body: request(turn0, turn0), field: "data.turns[1].turn_index", goOnly: cannotCompare},
	{name: "request with an unknown field", eventType: events.TypeExtractionRequested,
		body: `{"request_id":"r1","session_id":"s1","reason":"quiet","priority":1,"turns":[` + turn0 + `]}`, field: "data.priority"},

	// memory.extracted
	{name: "extracted", eventType: events.TypeMemoryExtracted,
		body: extracted(candidate, candidateWith(`"kind":"identity"`, `"category":"identity"`, `"predicate":"name"`,
			`"content":"名字是小明\n(said twice)"`, `"project":"engram"`, `"topic":"profile"`, `"importance":1`, `"confidence":0`, `"updates":true`))},
	{name: "extracted nothing by rules", eventType: events.TypeMemoryExtracted,
		body: `{"request_id":"r1","session_id":"s1","extractor":"rules","usage":{"prompt_tokens":0,"completion_tokens":0},"calls":0,"turns":[4],"candidates":[]}`},
	{name: "a turn's reading", eventType: events.TypeMemoryExtracted,
		body: `{"request_id":"read-1","session_id":"s1","extractor":"rules","pass":"turn","usage":{"prompt_tokens":0,"completion_tokens":0},"calls":0,"turns":[4],"candidates":[` + candidate + `]}`},
	{name: "an unknown pass", eventType: events.TypeMemoryExtracted,
		body: `{"request_id":"read-1","session_id":"s1","extractor":"rules","pass":"batch","usage":{"prompt_tokens":0,"completion_tokens":0},"calls":0,"turns":[4],"candidates":[]}`, field: "data.pass"},
	{name: "a turn's reading by the model", eventType: events.TypeMemoryExtracted,
		body:  `{"request_id":"read-1","session_id":"s1","extractor":"llm","pass":"turn","usage":{"prompt_tokens":0,"completion_tokens":0},"calls":0,"turns":[4],"candidates":[]}`,
		field: "data.pass", goOnly: "a schema cannot tie pass to extractor"},
	{name: "a reading of two turns", eventType: events.TypeMemoryExtracted,
		body:  `{"request_id":"read-1","session_id":"s1","extractor":"rules","pass":"turn","usage":{"prompt_tokens":0,"completion_tokens":0},"calls":0,"turns":[4,5],"candidates":[]}`,
		field: "data.pass", goOnly: "a schema cannot tie pass to the number of turns"},
	{name: "extracted fractions in other forms", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"importance":1.0`, `"confidence":5e-1`), candidateWith(`"importance":1e-400`, `"confidence":-0`))},
	{name: "extracted the longest content", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"content":"` + strings.Repeat("x", events.MaxMemoryContentBytes) + `"`))},
	{name: "extracted the most candidates", eventType: events.TypeMemoryExtracted,
		body: extracted(slices.Repeat([]string{candidate}, events.MaxCandidates)...)},
	{name: "extracted too many candidates", eventType: events.TypeMemoryExtracted,
		body: extracted(slices.Repeat([]string{candidate}, events.MaxCandidates+1)...), field: "data.candidates"},
	{name: "extracted by an unknown extractor", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `"llm"`, `"gpt"`, 1), field: "data.extractor"},
	{name: "extracted without usage", eventType: events.TypeMemoryExtracted,
		body: `{"request_id":"r1","session_id":"s1","extractor":"rules","calls":0,"turns":[4],"candidates":[]}`, field: "data.usage"},
	{name: "extracted with half a usage", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `,"completion_tokens":95`, ``, 1), field: "data.usage.completion_tokens"},
	{name: "extracted with total tokens", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `"completion_tokens":95`, `"completion_tokens":95,"total_tokens":907`, 1), field: "data.usage.total_tokens"},
	{name: "extracted with negative calls", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `"calls":1`, `"calls":-1`, 1), field: "data.calls"},
	{name: "extracted without calls", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `"calls":1,`, ``, 1), field: "data.calls"},
	{name: "extracted from no turns", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `[0,1,2]`, `[]`, 1), field: "data.turns"},
	{name: "extracted a turn twice", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `[0,1,2]`, `[0,1,1]`, 1), field: "data.turns[2]"},
	{name: "extracted turns out of order", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `[0,1,2]`, `[0,2,1]`, 1), field: "data.turns[2]", goOnly: cannotCompare},
	{name: "extracted a negative turn", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `[0,1,2]`, `[-1]`, 1), field: "data.turns[0]"},
	{name: "extracted too many turns", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `[0,1,2]`, `[`+intList(events.MaxExtractionTurns+1)+`]`, 1), field: "data.turns"},
	{name: "extracted the most turns", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `[0,1,2]`, `[`+intList(events.MaxExtractionTurns)+`]`, 1)},
	{name: "extracted without candidates", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `,"candidates":[]`, ``, 1), field: "data.candidates"},
	{name: "extracted null candidates", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `"candidates":[]`, `"candidates":null`, 1), field: "data.candidates"},
	{name: "extracted with a control character in the model", eventType: events.TypeMemoryExtracted,
		body: strings.Replace(extracted(), `qwen3-8b`, `qwen\t3`, 1), field: "data.model"},
	{name: "candidate of an unknown kind", eventType: events.TypeMemoryExtracted,
		body: extracted(candidate, candidateWith(`"kind":"opinion"`)), field: "data.candidates[1].kind"},
	{name: "candidate without a category", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`-category`)), field: "data.candidates[0].category"},
	{name: "candidate in an unknown category", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"category":"forever"`)), field: "data.candidates[0].category"},
	{name: "candidate with an empty subject", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"subject":""`)), field: "data.candidates[0].subject"},
	{name: "candidate subject of 257 bytes", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"subject":"` + strings.Repeat("s", 257) + `"`)), field: "data.candidates[0].subject"},
	{name: "candidate subject with a newline", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"subject":"us\ner"`)), field: "data.candidates[0].subject"},
	{name: "candidate predicate of 128 bytes", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"predicate":"` + strings.Repeat("p", 128) + `"`))},
	{name: "candidate predicate of 129 bytes", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"predicate":"` + strings.Repeat("p", 129) + `"`)), field: "data.candidates[0].predicate"},
	{name: "candidate predicate of 100 characters, 200 bytes", eventType: events.TypeMemoryExtracted,
		body:  extracted(candidateWith(`"predicate":"` + strings.Repeat("é", 100) + `"`)),
		field: "data.candidates[0].predicate", goOnly: bytesNotChars},
	{name: "candidate without a predicate", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`-predicate`)), field: "data.candidates[0].predicate"},
	{name: "candidate content of 4097 bytes", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"content":"` + strings.Repeat("x", events.MaxMemoryContentBytes+1) + `"`)), field: "data.candidates[0].content"},
	{name: "candidate content of 2048 characters, 6144 bytes", eventType: events.TypeMemoryExtracted,
		body:  extracted(candidateWith(`"content":"` + strings.Repeat("茶", 2048) + `"`)),
		field: "data.candidates[0].content", goOnly: bytesNotChars},
	{name: "candidate with empty content", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"content":""`)), field: "data.candidates[0].content"},
	{name: "candidate with a control character in the topic", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"topic":"a\u0007"`)), field: "data.candidates[0].topic"},
	{name: "candidate importance over 1", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"importance":1.5`)), field: "data.candidates[0].importance"},
	{name: "candidate importance just over 1", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"importance":1.0000000000000000001`)), field: "data.candidates[0].importance"},
	{name: "candidate importance far over 1", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"importance":1e400`)), field: "data.candidates[0].importance"},
	{name: "candidate importance below 0", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"importance":-0.1`)), field: "data.candidates[0].importance"},
	{name: "candidate importance as a string", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"importance":"0.5"`)), field: "data.candidates[0].importance"},
	{name: "candidate without confidence", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`-confidence`)), field: "data.candidates[0].confidence"},
	{name: "candidate without importance", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`-importance`)), field: "data.candidates[0].importance"},
	{name: "candidate updates as a string", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"updates":"yes"`)), field: "data.candidates[0].updates"},
	{name: "candidate said at a time", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"said_at":"2025-06-01T09:30:00.25+08:00"`))},
	{name: "candidate said at no time", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"said_at":"yesterday"`)), field: "data.candidates[0].said_at"},
	{name: "candidate said at the zero time", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"said_at":"0001-01-01T00:00:00Z"`)), field: "data.candidates[0].said_at", goOnly: zeroTimeValid},
	{name: "candidate with a status", eventType: events.TypeMemoryExtracted,
		body: extracted(candidateWith(`"status":"active"`)), field: "data.candidates[0].status"},

	// extraction.failed
	{name: "failed", eventType: events.TypeExtractionFailed,
		body: `{"request_id":"r1","session_id":"s1","reason":"llm: 503 Service Unavailable\nafter 5 tries","attempts":5,"turns":[0,1,2]}`},
	{name: "failed with the longest reason", eventType: events.TypeExtractionFailed,
		body: `{"request_id":"r1","session_id":"s1","reason":"` + strings.Repeat("r", events.MaxReasonBytes) + `","attempts":0,"turns":[0]}`},
	{name: "failed without a reason", eventType: events.TypeExtractionFailed,
		body: `{"request_id":"r1","session_id":"s1","attempts":5,"turns":[0]}`, field: "data.reason"},
	{name: "failed with an empty reason", eventType: events.TypeExtractionFailed,
		body: `{"request_id":"r1","session_id":"s1","reason":"","attempts":5,"turns":[0]}`, field: "data.reason"},
	{name: "failed with a reason of 1025 bytes", eventType: events.TypeExtractionFailed,
		body: `{"request_id":"r1","session_id":"s1","reason":"` + strings.Repeat("r", events.MaxReasonBytes+1) + `","attempts":5,"turns":[0]}`, field: "data.reason"},
	{name: "failed with a reason of 600 characters, 1200 bytes", eventType: events.TypeExtractionFailed,
		body:  `{"request_id":"r1","session_id":"s1","reason":"` + strings.Repeat("é", 600) + `","attempts":5,"turns":[0]}`,
		field: "data.reason", goOnly: bytesNotChars},
	{name: "failed without attempts", eventType: events.TypeExtractionFailed,
		body: `{"request_id":"r1","session_id":"s1","reason":"x","turns":[0]}`, field: "data.attempts"},
	{name: "failed attempts as a string", eventType: events.TypeExtractionFailed,
		body: `{"request_id":"r1","session_id":"s1","reason":"x","attempts":"5","turns":[0]}`, field: "data.attempts"},
	{name: "failed without turns", eventType: events.TypeExtractionFailed,
		body: `{"request_id":"r1","session_id":"s1","reason":"x","attempts":5}`, field: "data.turns"},
	{name: "failed without a request", eventType: events.TypeExtractionFailed,
		body: `{"session_id":"s1","reason":"x","attempts":5,"turns":[0]}`, field: "data.request_id"},

	// memory.added
	{name: "added", eventType: events.TypeMemoryAdded,
		body: `{"kind":"rule","category":"decision","subject":"team","predicate":"rule","content":"Always run go vet before a commit.","importance":0.9}`},
	{name: "added with every field", eventType: events.TypeMemoryAdded,
		body: `{"memory_id":"m-1","tier":1,"kind":"identity","category":"identity","subject":"user","predicate":"name","content":"小明",
		"project":"engram","topic":"profile","importance":1,"confidence":0.75,"session_id":"s1","said_at":"2025-06-01T09:30:00Z"}`},
	{name: "added said at no time", eventType: events.TypeMemoryAdded,
		body: `{"kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0,"said_at":""}`, field: "data.said_at"},
	{name: "added to tier 2.0", eventType: events.TypeMemoryAdded,
		body: `{"tier":2.0,"kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0}`},
	{name: "added to tier 0", eventType: events.TypeMemoryAdded,
		body: `{"tier":0,"kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0}`, field: "data.tier"},
	{name: "added to tier 3", eventType: events.TypeMemoryAdded,
		body: `{"tier":3,"kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0}`, field: "data.tier"},
	{name: "added without importance", eventType: events.TypeMemoryAdded,
		body: `{"kind":"fact","category":"event","subject":"s","predicate":"p","content":"c"}`, field: "data.importance"},
	{name: "added without a kind", eventType: events.TypeMemoryAdded,
		body: `{"category":"event","subject":"s","predicate":"p","content":"c","importance":0}`, field: "data.kind"},
	{name: "added without content", eventType: events.TypeMemoryAdded,
		body: `{"kind":"fact","category":"event","subject":"s","predicate":"p","importance":0}`, field: "data.content"},
	{name: "added with confidence 2", eventType: events.TypeMemoryAdded,
		body: `{"kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0,"confidence":2}`, field: "data.confidence"},
	{name: "added with updates", eventType: events.TypeMemoryAdded,
		body: `{"kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0,"updates":true}`, field: "data.updates"},
	{name: "added with a session of 257 bytes", eventType: events.TypeMemoryAdded,
		body: `{"kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0,"session_id":"` + strings.Repeat("s", 257) + `"}`, field: "data.session_id"},

	// memory.updated
	{name: "updated content", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","content":"prefers green tea"}`},
	{name: "updated to no project", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","project":""}`},
	{name: "updated importance", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","importance":0}`},
	{name: "updated everything", eventType: events.TypeMemoryUpdated,
		body: `{"memory_id":"m1","content":"c","kind":"skill","category":"solution","subject":"s","predicate":"p","project":"x","topic":"t","importance":0.5,"confidence":1}`},
	{name: "updated nothing", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1"}`, field: "data"},
	{name: "updated without a memory", eventType: events.TypeMemoryUpdated, body: `{"content":"c"}`, field: "data.memory_id"},
	{name: "updated to empty content", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","content":""}`, field: "data.content"},
	{name: "updated to null content", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","content":null}`, field: "data.content"},
	{name: "updated to an unknown kind", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","kind":"opinion"}`, field: "data.kind"},
	{name: "updated to an empty subject", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","subject":""}`, field: "data.subject"},
	{name: "updated confidence over 1", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","confidence":1.2}`, field: "data.confidence"},
	{name: "updated status", eventType: events.TypeMemoryUpdated, body: `{"memory_id":"m1","status":"archived"}`, field: "data.status"},

	// memory.deleted
	{name: "deleted", eventType: events.TypeMemoryDeleted, body: `{"memory_id":"m1"}`},
	{name: "deleted with a reason", eventType: events.TypeMemoryDeleted, body: `{"memory_id":"m1","reason":"the user asked"}`},
	{name: "deleted without a memory", eventType: events.TypeMemoryDeleted, body: `{"reason":"x"}`, field: "data.memory_id"},
	{name: "deleted with a long reason", eventType: events.TypeMemoryDeleted,
		body: `{"memory_id":"m1","reason":"` + strings.Repeat("r", events.MaxReasonBytes+1) + `"}`, field: "data.reason"},
	{name: "deleted reason is a number", eventType: events.TypeMemoryDeleted, body: `{"memory_id":"m1","reason":1}`, field: "data.reason"},

	// pending.*
	{name: "confirmed", eventType: events.TypePendingConfirmed, body: `{"memory_id":"m1"}`},
	{name: "ignored", eventType: events.TypePendingIgnored, body: `{"memory_id":"m1"}`},
	{name: "snoozed", eventType: events.TypePendingSnoozed, body: `{"memory_id":"m1","until":"2025-06-08T09:30:00+08:00"}`},
	{name: "confirmed until", eventType: events.TypePendingConfirmed,
		body: `{"memory_id":"m1","until":"2025-06-08T09:30:00Z"}`, field: "data.until"},
	{name: "ignored without a memory", eventType: events.TypePendingIgnored, body: `{"memory_id":""}`, field: "data.memory_id"},
	{name: "snoozed without an end", eventType: events.TypePendingSnoozed, body: `{"memory_id":"m1"}`, field: "data.until"},
	{name: "snoozed until next week", eventType: events.TypePendingSnoozed,
		body: `{"memory_id":"m1","until":"next week"}`, field: "data.until"},
	{name: "snoozed until the zero time", eventType: events.TypePendingSnoozed,
		body: `{"memory_id":"m1","until":"0001-01-01T00:00:00Z"}`, field: "data.until", goOnly: zeroTimeValid},
	{name: "snoozed until null", eventType: events.TypePendingSnoozed, body: `{"memory_id":"m1","until":null}`, field: "data.until"},

	// memory.write.important
	{name: "important", eventType: events.TypeMemoryImportant,
		body: `{"memory_id":"m1","kind":"identity","category":"identity","subject":"user","predicate":"name","content":"小明","importance":0.95,"session_id":"s1","cause_event_id":"e-9"}`},
	{name: "important without a session", eventType: events.TypeMemoryImportant,
		body: `{"memory_id":"m1","kind":"rule","category":"config","subject":"team","predicate":"rule","content":"c","importance":0.8,"cause_event_id":"e-9"}`},
	{name: "important without a cause", eventType: events.TypeMemoryImportant,
		body: `{"memory_id":"m1","kind":"rule","category":"config","subject":"team","predicate":"rule","content":"c","importance":0.8}`, field: "data.cause_event_id"},
	{name: "important without a memory", eventType: events.TypeMemoryImportant,
		body: `{"kind":"rule","category":"config","subject":"team","predicate":"rule","content":"c","importance":0.8,"cause_event_id":"e-9"}`, field: "data.memory_id"},
	{name: "important over 1", eventType: events.TypeMemoryImportant,
		body: `{"memory_id":"m1","kind":"rule","category":"config","subject":"team","predicate":"rule","content":"c","importance":2,"cause_event_id":"e-9"}`, field: "data.importance"},
	{name: "important with confidence", eventType: events.TypeMemoryImportant,
		body: `{"memory_id":"m1","kind":"rule","category":"config","subject":"team","predicate":"rule","content":"c","importance":0.8,"confidence":1,"cause_event_id":"e-9"}`, field: "data.confidence"},
}

var derivedEventSamples = []sample{
	{name: "request for another session", body: with(m{"type": events.TypeExtractionRequested, "data": parsed(request(turn0))}),
		field: "subject", goOnly: cannotCompare},
	{name: "request for the subject's session", body: with(m{"type": events.TypeExtractionRequested, "source": "urn:engram:extractor",
		"data": parsed(strings.Replace(request(turn0), `"s1"`, `"s-42"`, 1))})},
	{name: "added for the subject's session", body: with(m{"type": events.TypeMemoryAdded,
		"data": m{"kind": "fact", "category": "event", "subject": "s", "predicate": "p", "content": "c", "importance": 0.5, "session_id": "s-42"}})},
	{name: "added without subject or session", body: with(m{"type": events.TypeMemoryAdded, "subject": drop,
		"data": m{"kind": "fact", "category": "event", "subject": "s", "predicate": "p", "content": "c", "importance": 0.5}})},
	{name: "added with a subject and no session", body: with(m{"type": events.TypeMemoryAdded,
		"data": m{"kind": "fact", "category": "event", "subject": "s", "predicate": "p", "content": "c", "importance": 0.5}}), field: "subject"},
	{name: "added for another session", body: with(m{"type": events.TypeMemoryAdded,
		"data": m{"kind": "fact", "category": "event", "subject": "s", "predicate": "p", "content": "c", "importance": 0.5, "session_id": "s-43"}}),
		field: "subject", goOnly: cannotCompare},
	{name: "important with a subject and no session", body: with(m{"type": events.TypeMemoryImportant,
		"data": m{"memory_id": "m1", "kind": "fact", "category": "event", "subject": "s", "predicate": "p", "content": "c", "importance": 0.9, "cause_event_id": "e1"}}),
		field: "subject"},
	{name: "updated", body: with(m{"type": events.TypeMemoryUpdated, "subject": drop, "data": m{"memory_id": "m1", "importance": 0.2}})},
	{name: "updated with a subject", body: with(m{"type": events.TypeMemoryUpdated, "data": m{"memory_id": "m1", "importance": 0.2}}), field: "subject"},
	{name: "deleted with a subject", body: with(m{"type": events.TypeMemoryDeleted, "data": m{"memory_id": "m1"}}), field: "subject"},
	{name: "snoozed", body: with(m{"type": events.TypePendingSnoozed, "subject": drop, "data": m{"memory_id": "m1", "until": "2025-06-08T09:30:00Z"}})},
	{name: "confirmed with a subject", body: with(m{"type": events.TypePendingConfirmed, "data": m{"memory_id": "m1"}}), field: "subject"},
	{name: "snoozed with bad data", body: with(m{"type": events.TypePendingSnoozed, "subject": drop, "data": m{"memory_id": "m1"}}), field: "data.until"},
}

// parsed parses a sample body for use inside with().
func parsed(body string) any {
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		panic(err)
	}
	return v
}

func intList(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	return strings.Join(parts, ",")
}
