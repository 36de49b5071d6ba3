package events_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/engramhq/engram/events"
)

// sample is one payload for the table tests, the agreement test and the
// fuzz seed corpus. field is "" for a valid sample, else the Field of the
// *FieldError expected. goOnly says why JSON Schema cannot see the problem:
// the agreement test then expects the schema to accept what Go refuses.
type sample struct {
	name      string
	eventType string // for data samples
	body      string
	field     string
	goOnly    string
}

const (
	bytesNotChars = "a schema counts characters, engram counts bytes"
	cannotCompare = "a schema cannot compare two values"
	lastKeyWins   = "JSON decoders keep the last of two repeated keys"
	repairedText  = "JSON decoders turn broken text into U+FFFD"
	canonicalURI  = "a schema cannot check the form net/url stores"
	calendar      = "the schema's pattern does not check the calendar"
)

// dataSamples and eventSamples hold the input types' samples here, the
// derived types' in samples_derived_test.go, the consolidation and
// retrieval types' in samples_consolidation_test.go and memory.embedded's
// in samples_embedding_test.go.
var (
	dataSamples  = slices.Concat(inputDataSamples, derivedDataSamples, consolidationDataSamples, embeddingDataSamples)
	eventSamples = slices.Concat(inputEventSamples, derivedEventSamples, consolidationEventSamples, embeddingEventSamples)
)

var inputDataSamples = []sample{
	// turn.recorded, valid
	{name: "user turn", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","content":"hello"}`},
	{name: "tool calls without content", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":1,"role":"assistant","content":"","tool_calls":[{"name":"search","input":{"q":"x"}}]}`},
	{name: "tool results only", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":2,"role":"tool","tool_results":[{"tool_call_id":"c1","content":"ok","is_error":false}]}`},
	{name: "attachment only", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":3,"role":"user","attachments":[{"name":"a.png","size":0}]}`},
	{name: "every field", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s-42","turn_index":3,"role":"assistant","content":"Let me look that up.",
		"tool_calls":[{"id":"c1","name":"search","input":{"q":"refund policy"}}],
		"tool_results":[{"tool_call_id":"c0","content":"none","is_error":true}],
		"attachments":[{"name":"policy.pdf","mime":"application/pdf","size":48213,"path":"/tmp/p.pdf",
		"url":"https://files.example.com/policy.pdf","direction":"outbound","description":"the policy","transcription":"…"}],
		"channel":"web","project":"support","speaker":"Caroline"}`},
	{name: "system role in Chinese", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"会话一","turn_index":0,"role":"system","content":"你记得我上次说的吗？\n好的"}`},
	{name: "integer written as 3.0", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":3.0,"role":"user","content":"x"}`},
	{name: "integer written as 1e1", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":1e1,"role":"user","content":"x"}`},
	{name: "largest turn index", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":2147483647,"role":"user","content":"x"}`},
	{name: "tool input of any JSON", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"assistant","tool_calls":[{"name":"a","input":"text"},{"name":"b","input":[1,2]},{"name":"c","input":null}]}`},
	{name: "session id of 256 bytes", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"` + strings.Repeat("s", 256) + `","turn_index":0,"role":"user","content":"x"}`},
	{name: "surrogate pair escape", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","content":"\ud83d\ude00 \u00e9"}`},

	// turn.recorded, invalid
	{name: "missing session", eventType: events.TypeTurnRecorded,
		body: `{"turn_index":0,"role":"user","content":"x"}`, field: "data.session_id"},
	{name: "empty session", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"","turn_index":0,"role":"user","content":"x"}`, field: "data.session_id"},
	{name: "speaker too long", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s","turn_index":0,"role":"user","content":"x","speaker":"` + strings.Repeat("n", 257) + `"}`, field: "data.speaker"},
	{name: "session id of 257 bytes", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"` + strings.Repeat("s", 257) + `","turn_index":0,"role":"user","content":"x"}`, field: "data.session_id"},
	{name: "session id of 200 characters, 400 bytes", eventType: events.TypeTurnRecorded,
		body:  `{"session_id":"` + strings.Repeat("é", 200) + `","turn_index":0,"role":"user","content":"x"}`,
		field: "data.session_id", goOnly: bytesNotChars},
	{name: "control character in session", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s\n1","turn_index":0,"role":"user","content":"x"}`, field: "data.session_id"},
	{name: "C1 control character in session", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s\u00851","turn_index":0,"role":"user","content":"x"}`, field: "data.session_id"},
	{name: "session is a number", eventType: events.TypeTurnRecorded,
		body: `{"session_id":7,"turn_index":0,"role":"user","content":"x"}`, field: "data.session_id"},
	{name: "negative turn index", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":-1,"role":"user","content":"x"}`, field: "data.turn_index"},
	{name: "fractional turn index", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":1.5,"role":"user","content":"x"}`, field: "data.turn_index"},
	{name: "nearly integral turn index", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":1.0000000000000000001,"role":"user","content":"x"}`, field: "data.turn_index"},
	{name: "turn index too large", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":2147483648,"role":"user","content":"x"}`, field: "data.turn_index"},
	{name: "turn index with a huge exponent", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":1e400,"role":"user","content":"x"}`, field: "data.turn_index"},
	{name: "turn index as string", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":"3","role":"user","content":"x"}`, field: "data.turn_index"},
	{name: "missing turn index", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","role":"user","content":"x"}`, field: "data.turn_index"},
	{name: "unknown role", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"bot","content":"x"}`, field: "data.role"},
	{name: "missing role", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"content":"x"}`, field: "data.role"},
	{name: "empty turn", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user"}`, field: "data.content"},
	{name: "empty content and empty lists", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","content":"","tool_calls":[],"attachments":[]}`, field: "data.content"},
	{name: "content is a number", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","content":5}`, field: "data.content"},
	{name: "unknown field", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","content":"x","mood":"happy"}`, field: "data.mood"},
	{name: "unknown field with an odd name", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","content":"x","a.b":1}`, field: `data["a.b"]`},
	{name: "unknown field in a tool call", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"assistant","tool_calls":[{"name":"a"},{"name":"b","args":{}}]}`, field: "data.tool_calls[1].args"},
	{name: "tool call without a name", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"assistant","tool_calls":[{"id":"c1","input":{}}]}`, field: "data.tool_calls[0].name"},
	{name: "tool calls null", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"assistant","content":"x","tool_calls":null}`, field: "data.tool_calls"},
	{name: "tool results not a list", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"tool","tool_results":{"content":"x"}}`, field: "data.tool_results"},
	{name: "is_error as string", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"tool","tool_results":[{"content":"x","is_error":"yes"}]}`, field: "data.tool_results[0].is_error"},
	{name: "attachment without a name", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","attachments":[{"mime":"image/png"}]}`, field: "data.attachments[0].name"},
	{name: "negative attachment size", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","attachments":[{"name":"a","size":-1}]}`, field: "data.attachments[0].size"},
	{name: "attachment direction sideways", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","attachments":[{"name":"a","direction":"sideways"}]}`, field: "data.attachments[0].direction"},
	{name: "control character in channel", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","content":"x","channel":"we\u0000b"}`, field: "data.channel"},
	{name: "data is an array", eventType: events.TypeTurnRecorded,
		body: `[{"session_id":"s1","turn_index":0,"role":"user","content":"x"}]`, field: "data"},
	{name: "data is null", eventType: events.TypeTurnRecorded, body: `null`, field: "data"},
	{name: "data is empty", eventType: events.TypeTurnRecorded, body: ``, field: "data"},
	{name: "data after the value", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,"role":"user","content":"x"} {}`, field: "data"},
	{name: "broken JSON", eventType: events.TypeTurnRecorded,
		body: `{"session_id":"s1","turn_index":0,`, field: "data"},
	{name: "repeated key", eventType: events.TypeTurnRecorded,
		body:  `{"session_id":"s1","turn_index":0,"role":"bot","role":"user","content":"x"}`,
		field: "data.role", goOnly: lastKeyWins},
	{name: "lone surrogate", eventType: events.TypeTurnRecorded,
		body:  `{"session_id":"s1","turn_index":0,"role":"user","content":"a\ud800b"}`,
		field: "data", goOnly: repairedText},
	{name: "invalid UTF-8", eventType: events.TypeTurnRecorded,
		body:  "{\"session_id\":\"s1\",\"turn_index\":0,\"role\":\"user\",\"content\":\"a\xffb\"}",
		field: "data", goOnly: repairedText},

	// context.compressing
	{name: "compressing", eventType: events.TypeContextCompressing,
		body: `{"session_id":"s1","turns":[{"turn_index":0,"role":"user","content":"x"}]}`},
	{name: "compressing with summary and equal inner sessions", eventType: events.TypeContextCompressing,
		body: `{"session_id":"s1","summary":"sum","turns":[{"session_id":"s1","turn_index":0,"role":"user","content":"x"},{"turn_index":1,"role":"tool","tool_results":[{"content":"r"}]}]}`},
	{name: "compressing without turns", eventType: events.TypeContextCompressing,
		body: `{"session_id":"s1"}`, field: "data.turns"},
	{name: "compressing with no turns", eventType: events.TypeContextCompressing,
		body: `{"session_id":"s1","turns":[]}`, field: "data.turns"},
	{name: "compressing without session", eventType: events.TypeContextCompressing,
		body: `{"turns":[{"turn_index":0,"role":"user","content":"x"}]}`, field: "data.session_id"},
	{name: "compressing with a bad inner role", eventType: events.TypeContextCompressing,
		body: `{"session_id":"s1","turns":[{"turn_index":0,"role":"user","content":"x"},{"turn_index":1,"role":"robot","content":"y"}]}`, field: "data.turns[1].role"},
	{name: "compressing with an unknown inner field", eventType: events.TypeContextCompressing,
		body: `{"session_id":"s1","turns":[{"turn_index":0,"role":"user","content":"x","extra":true}]}`, field: "data.turns[0].extra"},
	{name: "compressing with an empty inner turn", eventType: events.TypeContextCompressing,
		body: `{"session_id":"s1","turns":[{"turn_index":0,"role":"user"}]}`, field: "data.turns[0].content"},
	{name: "compressing with another inner session", eventType: events.TypeContextCompressing,
		body:  `{"session_id":"s1","turns":[{"session_id":"s2","turn_index":0,"role":"user","content":"x"}]}`,
		field: "data.turns[0].session_id", goOnly: cannotCompare},
	{name: "compressing summary is a list", eventType: events.TypeContextCompressing,
		body: `{"session_id":"s1","summary":["a"],"turns":[{"turn_index":0,"role":"user","content":"x"}]}`, field: "data.summary"},

	// session.ended
	{name: "session ended", eventType: events.TypeSessionEnded,
		body: `{"session_id":"s1","message_count":12,"reason":"user_closed"}`},
	{name: "session ended with nothing said", eventType: events.TypeSessionEnded,
		body: `{"session_id":"s1","message_count":0}`},
	{name: "negative message count", eventType: events.TypeSessionEnded,
		body: `{"session_id":"s1","message_count":-1}`, field: "data.message_count"},
	{name: "missing message count", eventType: events.TypeSessionEnded,
		body: `{"session_id":"s1"}`, field: "data.message_count"},
	{name: "session ended with an unknown field", eventType: events.TypeSessionEnded,
		body: `{"session_id":"s1","message_count":1,"duration":5}`, field: "data.duration"},
	{name: "session ended reason is a number", eventType: events.TypeSessionEnded,
		body: `{"session_id":"s1","message_count":1,"reason":5}`, field: "data.reason"},
}

// baseEvent is a valid structured event; envelope samples change it.
var baseEvent = map[string]any{
	"specversion":     "1.0",
	"id":              "9f0c2a4e-1b7d-4c55-8f3e-2d6a1e0b7c41",
	"source":          "https://agent.example.com",
	"type":            "turn.recorded",
	"subject":         "s-42",
	"time":            "2025-06-01T09:30:00Z",
	"datacontenttype": "application/json",
	"namespace":       "acme",
	"user":            "alice",
	"agent":           "helpdesk",
	"data":            map[string]any{"session_id": "s-42", "turn_index": 3, "role": "user", "content": "hi"},
}

// with returns baseEvent as JSON with the given attributes set, or
// removed where the value is the string "<drop>".
func with(changes map[string]any) string {
	e := maps.Clone(baseEvent)
	for k, v := range changes {
		if v == "<drop>" {
			delete(e, k)
			continue
		}
		e[k] = v
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	return string(b)
}

type m = map[string]any

const drop = "<drop>"

var inputEventSamples = []sample{
	{name: "full", body: with(nil)},
	{name: "minimal", body: with(m{"subject": drop, "time": drop, "datacontenttype": drop, "namespace": drop, "agent": drop})},
	{name: "traced", body: with(m{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "congo=t61rcWkgMzE"})},
	{name: "content type with charset", body: with(m{"datacontenttype": "application/json; charset=utf-8"})},
	{name: "content type +json", body: with(m{"datacontenttype": "application/vnd.engram+json"}), field: "datacontenttype"},
	{name: "time with offset and nanoseconds", body: with(m{"time": "2025-06-01T11:30:00.123456789+02:00"})},
	{name: "dataschema", body: with(m{"dataschema": events.SchemaBaseURL + "turn.recorded.json"})},
	{name: "urn source", body: with(m{"source": "urn:agent:claude"})},
	{name: "relative source", body: with(m{"source": "/agents/helpdesk"})},
	{name: "session ended", body: with(m{"type": "session.ended", "data": m{"session_id": "s-42", "message_count": 4}})},
	{name: "compressing", body: with(m{"type": "context.compressing",
		"data": m{"session_id": "s-42", "turns": []any{m{"turn_index": 0, "role": "user", "content": "x"}}}})},
	{name: "spaced out", body: "\n { \"specversion\" : \"1.0\", \"id\":\"1\", \"source\":\"a\", \"type\":\"session.ended\", \"user\":\"u\",\n" +
		"\"data\" : { \"session_id\" : \"s\" , \"message_count\" : 1 } }\n"},

	{name: "missing id", body: with(m{"id": drop}), field: "id"},
	{name: "numeric id", body: with(m{"id": 42}), field: "id"},
	{name: "empty id", body: with(m{"id": ""}), field: "id"},
	{name: "id with a newline", body: with(m{"id": "a\nb"}), field: "id"},
	{name: "missing source", body: with(m{"source": drop}), field: "source"},
	{name: "source with a space", body: with(m{"source": "https://a.example.com/x y"}), field: "source"},
	{name: "source not canonical", body: with(m{"source": "HTTPS://agent.example.com"}), field: "source", goOnly: canonicalURI},
	{name: "missing type", body: with(m{"type": drop}), field: "type"},
	{name: "unknown type", body: with(m{"type": "turn.deleted"}), field: "type"},
	{name: "missing specversion", body: with(m{"specversion": drop}), field: "specversion"},
	{name: "specversion 0.3", body: with(m{"specversion": "0.3"}), field: "specversion"},
	{name: "specversion 2.0", body: with(m{"specversion": "2.0"}), field: "specversion"},
	{name: "numeric specversion", body: with(m{"specversion": 1.0}), field: "specversion"},
	{name: "missing user", body: with(m{"user": drop}), field: "user"},
	{name: "empty user", body: with(m{"user": ""}), field: "user"},
	{name: "numeric user", body: with(m{"user": 7}), field: "user"},
	{name: "empty namespace", body: with(m{"namespace": ""}), field: "namespace"},
	{name: "namespace too long", body: with(m{"namespace": strings.Repeat("n", 257)}), field: "namespace"},
	{name: "misspelt namespace", body: with(m{"namespace": drop, "namepace": "acme"}), field: "namepace"},
	{name: "unknown attribute with an odd name", body: with(m{"Namespace": "acme"}), field: "Namespace"},
	{name: "object extension", body: with(m{"agent": m{"name": "x"}}), field: "agent"},
	{name: "traceparent not ASCII", body: with(m{"traceparent": "00-é"}), field: "traceparent"},
	{name: "data_base64", body: with(m{"data": drop, "data_base64": "e30="}), field: "data_base64"},
	{name: "missing data", body: with(m{"data": drop}), field: "data"},
	{name: "string data", body: with(m{"data": "hello"}), field: "data"},
	{name: "array data", body: with(m{"data": []any{1}}), field: "data"},
	{name: "null data", body: with(m{"data": nil}), field: "data"},
	{name: "bad data", body: with(m{"data": m{"session_id": "s-42", "turn_index": 0, "role": "bot", "content": "x"}}), field: "data.role"},
	{name: "text content type", body: with(m{"datacontenttype": "text/plain"}), field: "datacontenttype"},
	{name: "upper-case content type", body: with(m{"datacontenttype": "Application/JSON"}), field: "datacontenttype"},
	{name: "relative dataschema", body: with(m{"dataschema": "/schema.json"}), field: "dataschema"},
	{name: "time in words", body: with(m{"time": "yesterday"}), field: "time"},
	{name: "time without zone", body: with(m{"time": "2025-06-01T09:30:00"}), field: "time"},
	// time.Parse takes these; RFC 3339 as the pattern writes it does not.
	{name: "time with a comma for the point", body: with(m{"time": "2025-06-01T09:30:00,5Z"}), field: "time"},
	{name: "time with ten fraction digits", body: with(m{"time": "2025-06-01T09:30:00.1234567891Z"}), field: "time"},
	{name: "time with a lower-case t", body: with(m{"time": "2025-06-01t09:30:00Z"}), field: "time"},
	{name: "time with a point and no digit", body: with(m{"time": "2025-06-01T09:30:00.Z"}), field: "time"},
	{name: "time with an offset without colon", body: with(m{"time": "2025-06-01T09:30:00+0200"}), field: "time"},
	{name: "time with a leap second", body: with(m{"time": "2025-06-30T23:59:60Z"}), field: "time", goOnly: calendar},
	{name: "time in month 13", body: with(m{"time": "2025-13-01T09:30:00Z"}), field: "time", goOnly: calendar},
	{name: "zero time", body: with(m{"time": "0001-01-01T00:00:00Z"}), field: "time", goOnly: "the zero time is a valid date-time"},
	{name: "empty subject", body: with(m{"subject": ""}), field: "subject"},
	{name: "subject is another session", body: with(m{"subject": "s-43"}), field: "subject", goOnly: cannotCompare},
	{name: "repeated id", body: `{"id":"a","specversion":"1.0","id":"b","source":"a","type":"session.ended","user":"u","data":{"session_id":"s","message_count":1}}`,
		field: "id", goOnly: lastKeyWins},
	{name: "lone surrogate in user", body: with(m{"user": drop})[:1] + `"user":"a\udc00",` + with(m{"user": drop})[1:], field: "event", goOnly: repairedText},
	{name: "broken JSON", body: `{"specversion":"1.0",`, field: "event"},
	{name: "not an object", body: `[` + with(nil) + `]`, field: "event"},
	{name: "data after the event", body: with(nil) + ` {}`, field: "event"},
	{name: "empty body", body: ``, field: "event"},
}
