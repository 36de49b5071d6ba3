package events

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// The JSON Schemas in schema/ are written from the Go types by this file:
// each member from its field (JSON name, omitempty for optional, the
// check tag's rules, a doc tag's description), each struct within as a
// definition of its file. What no field says is below: a type's rules
// between members (typeRules), an event type's description and examples
// (eventDocs), and the envelope. `go generate ./events` (go test -run
// TestSchemaFiles -update) rewrites the files; TestSchemaFiles fails when
// they differ from what the types make.

var update = flag.Bool("update", false, "rewrite schema/*.json from the types")

func TestSchemaFiles(t *testing.T) {
	for _, name := range append(Types(), SchemaEnvelope) {
		file := "schema/" + name + ".json"
		want := schemaFile(name)
		if *update {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := Schemas.ReadFile(file)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what the types make (%v): run go generate ./events", file, err)
		}
	}
}

// typeRules are what a type's schema says beyond its fields, merged into
// it wherever it appears: what its Validate checks between members.
var typeRules = map[reflect.Type]string{
	reflect.TypeFor[TurnRecorded](): `{"description": "A turn. Inside context.compressing its session_id may be left out, and then is the event's.",
		"anyOf": [
			{"required": ["content"], "properties": {"content": {"minLength": 1}}},
			{"required": ["tool_calls"], "properties": {"tool_calls": {"minItems": 1}}},
			{"required": ["tool_results"], "properties": {"tool_results": {"minItems": 1}}},
			{"required": ["attachments"], "properties": {"attachments": {"minItems": 1}}}]}`,
	reflect.TypeFor[ExtractionTurn](): `{"description": "A snapshot of one turn. Content may be empty: a turn that carried only attachments snapshots to nothing."}`,
	reflect.TypeFor[ActionNode](): `{"description": "One step: a tool call and what came of it, or a decision. It needs a tool or a decision.",
		"anyOf": [
			{"required": ["tool"], "properties": {"tool": {"minLength": 1}}},
			{"required": ["decision"], "properties": {"decision": {"minLength": 1}}}]}`,
	reflect.TypeFor[Scratchpad](): `{"properties": {"episode_id": {"minLength": 1}},
		"if": {"required": ["source"], "properties": {"source": {"const": "person"}}},
		"then": {"properties": {"episode_id": false}},
		"else": {"required": ["episode_id"]}}`,
	reflect.TypeFor[DailySummary](): `{"properties": {"part": {"minLength": 1}},
		"if": {"properties": {"source": {"const": "extraction"}}},
		"then": {"required": ["part"]},
		"else": {"not": {"required": ["part"]}}}`,
	reflect.TypeFor[RetrievalDegraded](): fallsRule(),
	reflect.TypeFor[MemoryUpdated]():     `{"minProperties": 2}`,
	reflect.TypeFor[Embedded]():          `{"properties": {"vector": {"contains": {"not": {"const": 0}}}}}`,
}

// fallsRule is retrieval.degraded's from and to as one of RetrievalFalls.
func fallsRule() string {
	var pairs []string
	for _, f := range RetrievalFalls {
		pairs = append(pairs, fmt.Sprintf(`{"properties": {"from": {"const": %q}, "to": {"const": %q}}}`, f[0], f[1]))
	}
	return `{"anyOf": [` + strings.Join(pairs, ", ") + `]}`
}

// eventDocs are what each event type's file says of it, and its
// examples; rules, what its data's schema says beyond its type's.
var eventDocs = map[string]struct{ description, examples, rules string }{
	"consolidation.reported": {
		description: "What the nightly consolidation did for one user over a span ending at the event's time (seed 000 §7.4 step 8), counted from the read model, with the text a person reads.",
		examples:    `[{"date": "2025-06-02", "since": "2025-06-01T03:00:00Z", "episodes": 2, "learned": 5, "superseded": 1, "merged": 2, "archived": 0, "days_compressed": 1, "pending": 1, "traits": ["m-7"], "text": "2025-06-02: 2 episodes, 5 memories learned."}]`,
	},
	"context.compressing": {
		description: "The turns about to leave the agent's context window, and optionally the agent's own summary of them. A turn's session_id, when given, must equal the event's (a schema cannot compare two values; engram does).",
		examples:    `[{"session_id": "s-42", "turns": [{"turn_index": 0, "role": "user", "content": "我上次说的退款政策是什么？"}, {"turn_index": 1, "role": "tool", "tool_results": [{"tool_call_id": "c1", "content": "30 days"}]}], "summary": "The user asked about the refund policy; it is 30 days."}]`,
	},
	"daily.summarized": {
		description: "One day's event log entry for a channel: the whole day (migration, compression) or a part of it written as its turns were extracted (extraction, which names the part). The date is YYYY-MM-DD (a schema does not check the calendar; engram does).",
		examples:    `[{"date": "2025-06-01", "channel": "telegram", "summary": "讨论了迁移方案。", "raw_tokens": 1830, "source": "compression"}, {"date": "2025-06-01", "channel": "telegram", "summary": "用户使用 Python 3.10 写脚本。", "raw_tokens": 240, "source": "extraction", "part": "s-42#0"}]`,
	},
	"episode.built": {
		description: "What happened in a session: its goal, outcome, actions, entities and tools. Turns are the turn indices it covers, ascending, each once; ended is not before started (a schema can see repeats but cannot compare two values or check the order; engram does). Lists of entities, tools and memories name each once.",
		examples:    `[{"id": "ep-s-42-0", "session_id": "s-42", "summary": "用户让构建通过：改了 Makefile，测试全部通过。", "goal": "让构建通过", "outcome": "completed", "started": "2025-06-01T09:30:00Z", "ended": "2025-06-01T09:45:00Z", "actions": [{"tool": "shell", "params": "go test ./...", "result": "2 failures", "success": false, "error": "exit 1", "turn": 3}, {"decision": "switch to the Makefile's test target", "success": true, "turn": 4}], "entities": ["Makefile", "engram"], "tools": ["shell"], "linked_memories": ["m-21"], "importance": 0.6, "source": "session_end", "turns": [0, 1, 2, 3, 4, 5]}]`,
	},
	"extraction.failed": {
		description: "An extraction request gave up after its last try.",
		examples:    `[{"request_id": "r-7", "session_id": "s-42", "reason": "llm: 503 Service Unavailable", "attempts": 5, "turns": [0, 1]}]`,
	},
	"extraction.requested": {
		description: "Turns of one session to extract memories from. The request is self-contained: the extractor needs nothing else. Turns are in ascending turn_index order with no index twice (a schema cannot compare two values; engram does).",
		examples:    `[{"request_id": "r-7", "session_id": "s-42", "reason": "compressing", "turns": [{"turn_index": 0, "role": "user", "content": "我叫小明，我喜欢喝茶", "time": "2025-06-01T09:30:00Z"}, {"turn_index": 1, "role": "assistant", "content": "记住了。", "time": "2025-06-01T09:30:04Z", "project": "support"}], "summary": "The user introduced themselves."}]`,
	},
	"identity.confirmed": {
		description: "What the user confirmed on first meeting the agent (seed 004 §3): who the agent is to them and who they are. Every field may be left out: a user who declines still confirms, and is not asked again. A later confirmation replaces the agent's card; the user's facts are added as core memories.",
		examples:    `[{"agent": {"name": "十一", "role": "编程助手", "tone": "直接、简洁", "boundaries": ["不替用户做决定"], "avoid": ["不编造事实"], "priorities": ["先问清需求"]}, "user": {"name": "阿杨", "background": "全栈工程师", "tech": ["Go", "TypeScript"], "habits": ["先写测试"]}, "summary": "你是十一，我是阿杨。"}, {}]`,
	},
	"memories.accessed": {
		description: "Retrieval handed these memories to an agent, which reinforces them; batched, each memory once (a schema cannot see a memory_id repeated in two accesses; engram does).",
		examples:    `[{"accesses": [{"memory_id": "m-7", "count": 3, "last": "2025-06-01T09:31:00Z"}]}]`,
	},
	"memories.archived": {
		description: "Memories that faded, expired, were evicted by the cap or archived by hand. They are kept, not deleted.",
		examples:    `[{"memory_ids": ["m-30", "m-31"], "reason": "decay"}]`,
	},
	"memories.merged": {
		description: "The memories of merged are one with into, which is kept with the given importance and, when an LLM rewrote it, the given content. into is not among merged (a schema cannot compare two values; engram does).",
		examples:    `[{"into": "m-7", "merged": ["m-8", "m-12"], "importance": 0.9, "content": "prefers green tea, no sugar", "cluster_id": "c-2025w22-3", "model": "qwen2.5:7b"}]`,
	},
	"memory.added": {
		description: "A memory written by hand or by a rule. Tier defaults to 2 and confidence to 1 (a person said it).",
		examples:    `[{"kind": "rule", "category": "decision", "subject": "team", "predicate": "rule", "content": "Run go vet before every commit.", "importance": 0.8, "project": "engram"}]`,
	},
	"memory.deleted": {
		description: "A memory is deleted.",
		examples:    `[{"memory_id": "m-19", "reason": "the user asked"}]`,
	},
	"memory.embedded": {
		description: "Vectors of one embedding model, each filed under the TextHash of the text it stands for (the first 16 bytes of the text's SHA-256, in hex). A vector has exactly dims components and its hash is not repeated in the event; a schema cannot compare the two, nor count the model's bytes rather than its characters, nor see a component too small for a float32 turn to 0; engram checks all three.",
		examples:    `[{"model": "text-embedding-3-small", "dims": 4, "vectors": [{"hash": "db0d97f7edcccd1fe1d7be2a2bdb5617", "vector": [0.5, -0.5, 0.5, 0.5]}, {"hash": "2b15c5b9fa7c1059d0b98ebdb66865c5", "vector": [0.1, 0.7, -0.7, 0.1]}]}]`,
	},
	"memory.extracted": {
		description: "The result of one extraction request: the turns it covered and the memories it proposes (possibly none). Subjects, predicates and contents are limited in bytes of UTF-8; a schema can only count characters, so engram also checks the bytes.",
		examples:    `[{"request_id": "r-7", "session_id": "s-42", "extractor": "llm", "model": "qwen3-8b", "usage": {"prompt_tokens": 812, "completion_tokens": 95}, "calls": 1, "turns": [0, 1], "candidates": [{"kind": "identity", "category": "identity", "subject": "user", "predicate": "name", "content": "名字是小明", "importance": 0.9, "confidence": 0.95, "updates": true, "said_at": "2025-06-01T09:30:00Z"}]}]`,
	},
	"memory.updated": {
		description: "A patch of a memory: the fields given replace the memory's, at least one must be given. project and topic may be set to \"\" to clear them.",
		examples:    `[{"memory_id": "m-19", "content": "prefers green tea", "importance": 0.7}]`,
	},
	"memory.write.important": {
		description: "A memory of high importance was written, for downstream rules and notifications.",
		examples:    `[{"memory_id": "m-21", "kind": "identity", "category": "identity", "subject": "user", "predicate": "name", "content": "名字是小明", "importance": 0.9, "session_id": "s-42", "cause_event_id": "extracted-r-7"}]`,
	},
	"pending.confirmed": {
		description: "A pending memory is confirmed. Only pending.snoozed takes until.",
		examples:    `[{"memory_id": "m-20"}]`,
		rules:       `{"properties": {"until": false}}`,
	},
	"pending.ignored": {
		description: "A pending memory is ignored. Only pending.snoozed takes until.",
		examples:    `[{"memory_id": "m-20"}]`,
		rules:       `{"properties": {"until": false}}`,
	},
	"pending.snoozed": {
		description: "A pending memory is snoozed: it is not offered again before until.",
		examples:    `[{"memory_id": "m-20", "until": "2025-06-08T09:30:00+08:00"}]`,
		rules:       `{"required": ["until"]}`,
	},
	"profile.refreshed": {
		description: "The tier-1 core profile after a refresh, in full (possibly empty), and the memories the refresh took out of it. A demoted memory is not in memory_ids (a schema cannot compare two lists; engram does).",
		examples:    `[{"memory_ids": ["m-1", "m-7", "m-21"], "demoted": ["m-3"]}]`,
	},
	"retrieval.degraded": {
		description: "A recall path failed and the retriever answered without it: down the chain vectors, fts, recent, or from a path of its own to none (or, for the year a yearless time is anchored to, to latest). The pair is one of those listed in anyOf.",
		examples:    `[{"from": "vectors", "to": "fts", "reason": "embedding endpoint: 503 Service Unavailable"}]`,
	},
	"scratchpad.updated": {
		description: "The user's whole working memory as it now stands, replacing the last. content may be empty. episode_id is required when source is episode and refused when it is person.",
		examples:    `[{"content": "## 当前项目\n- engram: migration", "active_projects": ["engram"], "current_focus": "migration", "open_questions": ["多语言向量模型?"], "next_steps": ["write tests"], "source": "episode", "episode_id": "ep-s-42-0"}]`,
	},
	"session.ended": {
		description: "A session is over.",
		examples:    `[{"session_id": "s-42", "message_count": 12, "reason": "user_closed"}]`,
	},
	"turn.recorded": {
		description: "One message of a conversation, as the agent saw it. Identifiers are limited to 256 bytes of UTF-8; a schema can only count characters, so engram also checks the bytes.",
		examples:    `[{"session_id": "s-42", "turn_index": 3, "role": "assistant", "content": "Let me look that up.", "tool_calls": [{"id": "c1", "name": "search", "input": {"q": "refund policy"}}], "attachments": [{"name": "policy.pdf", "mime": "application/pdf", "size": 48213, "url": "https://files.example.com/policy.pdf", "direction": "outbound"}], "channel": "web", "project": "support"}]`,
		rules:       `{"required": ["session_id"], "properties": {"session_id": {"minLength": 1}}}`,
	},
	"turns.expired": {
		description: "The event's user's raw turns (turn.recorded and context.compressing) and extraction requests (extraction.requested) stored in the stream before before_seq aged out (retention): the stream drops them and every read model drops the turns they recorded and the requests.",
		examples:    `[{"before_seq": 81723, "stored_before": "2025-06-01T03:00:00Z"}]`,
	},
	"user.forgotten": {
		description: "An operator erased the event's user: every memory, turn and change of theirs.",
		examples:    `[{"reason": "erasure request #42"}]`,
	},
}

// obj is a JSON object that keeps its members in order.
type obj []member

type member struct {
	name  string
	value any
}

func (o obj) index(name string) int {
	return slices.IndexFunc(o, func(m member) bool { return m.name == name })
}

func (o obj) get(name string) any {
	if i := o.index(name); i >= 0 {
		return o[i].value
	}
	return nil
}

// merge adds src's members to dst: an object into an object, a list
// after a list; any other value replaces dst's.
func merge(dst, src obj) obj {
	for _, m := range src {
		i := dst.index(m.name)
		switch d := dst.get(m.name).(type) {
		case nil:
			dst = append(dst, m)
		case obj:
			if s, ok := m.value.(obj); ok {
				dst[i].value = merge(d, s)
				continue
			}
			dst[i].value = m.value
		case []any:
			dst[i].value = append(d, m.value.([]any)...)
		default:
			dst[i].value = m.value
		}
	}
	return dst
}

// parse reads JSON text into obj, []any and scalars, keeping the order
// of members.
func parse(text string) any {
	dec := jsontext.NewDecoder(strings.NewReader(text))
	next := func() jsontext.Token {
		tok, err := dec.ReadToken()
		if err != nil {
			panic(err)
		}
		return tok
	}
	var read func() any
	read = func() any {
		tok := next()
		switch tok.Kind() {
		case '{':
			o := obj{}
			for dec.PeekKind() != '}' {
				o = append(o, member{next().String(), read()})
			}
			next()
			return o
		case '[':
			l := []any{}
			for dec.PeekKind() != ']' {
				l = append(l, read())
			}
			next()
			return l
		case '"':
			return tok.String()
		case '0':
			return json.Number(tok.String())
		case 't', 'f':
			return tok.Bool()
		}
		return nil
	}
	return read()
}

func parseObj(text string) obj {
	if text == "" {
		return nil
	}
	return parse(text).(obj)
}

// generator writes the schema of one file; defs are its definitions.
type generator struct{ defs obj }

// object is the schema of a struct; defaults is the value the reader
// starts from, whose non-zero members are not required.
func (g *generator) object(t reflect.Type, defaults reflect.Value) obj {
	props, required := obj{}, []any{}
	for _, f := range fieldsOf(t) {
		sf := t.Field(f.index)
		p := g.value(f.rule, sf.Type, f.required)
		if doc := sf.Tag.Get("doc"); doc != "" {
			p = append(obj{{"description", doc}}, p...)
		}
		props = append(props, member{f.name, p})
		if f.required && (!defaults.IsValid() || defaults.Field(f.index).IsZero()) {
			required = append(required, f.name)
		}
	}
	o := obj{{"type", "object"}, {"additionalProperties", false}}
	if len(required) > 0 {
		o = append(o, member{"required", required})
	}
	return merge(append(o, member{"properties", props}), parseObj(typeRules[t]))
}

// value is the schema of one value; required says it must not be empty.
func (g *generator) value(r rule, t reflect.Type, required bool) obj {
	switch {
	case t == timeType:
		return obj{{"type", "string"}, {"format", "date-time"}, {"pattern", rfc3339.String()}}
	case t == reflect.TypeFor[json.RawMessage]():
		return obj{}
	case t.Kind() == reflect.Pointer:
		return g.value(r, t.Elem(), true)
	case t.Kind() == reflect.String && r.enum != nil:
		var list []any
		if r.empty {
			list = append(list, "")
		}
		for _, s := range r.enum {
			list = append(list, s)
		}
		return obj{{"enum", list}}
	case t.Kind() == reflect.String:
		o := obj{{"type", "string"}}
		if r.max > 0 && (r.kind != "id" || r.max != MaxIDBytes) {
			o = append(obj{{"description", "At most " + strconv.FormatInt(r.max, 10) + " bytes of UTF-8."}}, o...)
		}
		if required && !r.empty {
			o = append(o, member{"minLength", 1})
		}
		if r.max > 0 {
			o = append(o, member{"maxLength", r.max})
		}
		if pattern := map[string]string{"id": `^[^\x00-\x1f\x7f-\x9f]*$`, "date": calendarDatePat.String(), "hash": textHashPat.String()}[r.kind]; pattern != "" {
			o = append(o, member{"pattern", pattern})
		}
		return o
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64 || t.Kind() == reflect.Uint64:
		return obj{{"type", "integer"}, {"minimum", r.min}, {"maximum", cmp.Or(r.max, MaxCount)}}
	case t.Kind() == reflect.Float64:
		return obj{{"type", "number"}, {"minimum", 0}, {"maximum", 1}}
	case t.Kind() == reflect.Float32:
		return obj{{"type", "number"}, {"minimum", -math.MaxFloat32}, {"maximum", math.MaxFloat32}}
	case t.Kind() == reflect.Bool:
		return obj{{"type", "boolean"}}
	case t.Kind() == reflect.Slice:
		o := obj{{"type", "array"}}
		if r.nonempty {
			o = append(o, member{"minItems", 1})
		}
		if r.items > 0 {
			o = append(o, member{"maxItems", r.items})
		}
		if r.set || r.kind == "ascending" {
			o = append(o, member{"uniqueItems", true})
		}
		item := rule{kind: r.kind, max: r.max, enum: r.enum}
		if r.kind == "ascending" {
			item = rule{}
		}
		return append(o, member{"items", g.value(item, t.Elem(), true)})
	case t.Kind() == reflect.Struct:
		name := strings.ToLower(t.Name()[:1]) + t.Name()[1:]
		if g.defs.get(name) == nil {
			g.defs = append(g.defs, member{name, obj{}}) // taken, for a type within itself
			i := g.defs.index(name)
			g.defs[i].value = g.object(t, reflect.Value{})
		}
		return obj{{"$ref", "#/$defs/" + name}}
	}
	panic("events: no schema for " + t.String())
}

// eventSchema is the schema of an event type's data.
func eventSchema(eventType string) obj {
	r, _ := lookup(eventType)
	v := reflect.ValueOf(r.new()).Elem()
	doc := eventDocs[eventType]
	var g generator
	body := merge(g.object(v.Type(), v), parseObj(doc.rules))
	out := obj{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", SchemaBaseURL + eventType + ".json"},
		{"title", eventType + " data"},
		{"description", doc.description},
		{"examples", parse(doc.examples)},
	}
	for _, m := range body {
		if m.name != "description" {
			out = append(out, m)
		}
	}
	if len(g.defs) > 0 {
		out = append(out, member{"$defs", g.defs})
	}
	return out
}

// envelopeSchema is the schema of a whole structured-mode event: the
// attributes, and data by the schema of its type.
func envelopeSchema() obj {
	id := (&generator{}).value(rule{kind: "id", max: MaxIDBytes}, reflect.TypeFor[string](), true)
	trace := obj{{"description", "CloudEvents distributed tracing extension (W3C Trace Context)."}, {"type", "string"},
		{"minLength", 1}, {"maxLength", MaxTraceBytes}, {"pattern", `^[\x20-\x7e]*$`}}
	var types, dispatch []any
	for _, t := range Types() {
		types = append(types, t)
		then := obj{{"properties", obj{{"data", obj{{"$ref", t + ".json"}}}}}}
		data := eventSchema(t)
		switch props, _ := data.get("properties").(obj); {
		case props.get("session_id") == nil:
			then = merge(then, obj{{"properties", obj{{"subject", false}}}})
		case !contains(data.get("required"), "session_id"):
			then = append(then, member{"dependentSchemas", obj{{"subject", obj{{"properties", obj{{"data", obj{{"required", []any{"session_id"}}}}}}}}}})
		}
		dispatch = append(dispatch, obj{{"if", obj{{"required", []any{"type"}}, {"properties", obj{{"type", obj{{"const", t}}}}}}}, {"then", then}})
	}
	return obj{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"$id", SchemaBaseURL + SchemaEnvelope + ".json"},
		{"title", "engram event"},
		{"description", "A structured-mode CloudEvent 1.0 (application/cloudevents+json) as engram accepts it. Beyond what a schema can say, engram also requires: identifiers and URIs within their limits in bytes, not just characters; source and dataschema in canonical form (as Go's net/url prints them); a real calendar time; subject, when present, equal to data.session_id; no repeated keys; no \\u escapes of half a surrogate pair."},
		{"type", "object"},
		{"additionalProperties", false},
		{"required", []any{"specversion", "id", "source", "type", "user", "data"}},
		{"properties", obj{
			{"specversion", obj{{"const", "1.0"}}},
			{"id", id},
			{"source", obj{{"description", "A URI reference, e.g. https://agent.example.com or urn:agent:claude."}, {"type", "string"},
				{"minLength", 1}, {"maxLength", MaxURIBytes}, {"pattern", `^[^\x00-\x20\x7f-\x9f]*$`}}},
			{"type", obj{{"enum", types}}},
			{"subject", append(obj{{"description", "The session; when present it must equal data.session_id, so data without a session_id takes no subject."}}, id...)},
			{"time", (&generator{}).value(rule{}, timeType, true)},
			{"datacontenttype", obj{{"type", "string"}, {"pattern", jsonMediaType.String()}}},
			{"dataschema", obj{{"type", "string"}, {"maxLength", MaxURIBytes}, {"pattern", `^[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20\x7f-\x9f]*$`}}},
			{"namespace", append(obj{{"description", `The tenant; "default" when left out.`}}, id...)},
			{"user", id},
			{"agent", id},
			{"traceparent", trace},
			{"tracestate", trace},
			{"data", obj{{"type", "object"}}},
		}},
		{"allOf", dispatch},
	}
}

func contains(list any, s string) bool {
	l, _ := list.([]any)
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// schemaFile is the text of a schema file.
func schemaFile(name string) []byte {
	var b bytes.Buffer
	if name == SchemaEnvelope {
		write(&b, envelopeSchema(), "", 0)
	} else {
		write(&b, eventSchema(name), "", 0)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// write prints v as JSON, starting at column col: on one line if it fits
// in 100 columns, else a member or element a line (scalars filling
// lines).
func write(b *bytes.Buffer, v any, indent string, col int) {
	if line := oneLine(v); col+len(line) <= 100 {
		b.WriteString(line)
		return
	}
	switch v := v.(type) {
	case obj:
		b.WriteString("{")
		for i, m := range v {
			key := scalar(m.name) + ": "
			b.WriteString(sep(i) + "\n" + indent + "  " + key)
			write(b, m.value, indent+"  ", len(indent)+2+len(key))
		}
		b.WriteString("\n" + indent + "}")
	case []any:
		b.WriteString("[")
		col = 100
		for i, e := range v {
			item := oneLine(e)
			_, composite := e.(obj)
			if _, list := e.([]any); composite || list || col+len(item)+2 > 100 {
				b.WriteString(sep(i) + "\n" + indent + "  ")
				col = len(indent) + 2
			} else {
				b.WriteString(sep(i) + " ")
			}
			write(b, e, indent+"  ", col)
			col += len(item) + 2
		}
		b.WriteString("\n" + indent + "]")
	default:
		b.WriteString(oneLine(v))
	}
}

func sep(i int) string {
	if i == 0 {
		return ""
	}
	return ","
}

func oneLine(v any) string {
	var parts []string
	switch v := v.(type) {
	case obj:
		for _, m := range v {
			parts = append(parts, scalar(m.name)+": "+oneLine(m.value))
		}
		if len(parts) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case []any:
		for _, e := range v {
			parts = append(parts, oneLine(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return scalar(v)
}

func scalar(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
