// Package events is engram's public event contract: the Go types of the
// data of every event, input and derived, their validation, and JSON
// Schemas (Schemas, Schema) for agents written in other languages.
//
// Input events (turn.recorded, context.compressing, session.ended) are
// published by agents. Derived events are published by engram's workers
// with NewDerived, which takes a deterministic id and time so that a
// replay or a retried publish makes the same event; an operator or agent
// may publish some of them too (a manual memory.added, an edit, a
// decision on a pending memory, identity.confirmed). Types lists them
// all; Validate accepts every one.
//
// Agents publish CloudEvents 1.0 (examples/turn.recorded.json is one in
// structured mode). The envelope is sdk-go's event.Event; engram adds the
// extension attributes namespace (optional, "default" when left out),
// user (required) and agent (optional), and the subject, when present,
// carries the session and nothing else, so that data without a
// session_id takes no subject. The only other extensions accepted are
// traceparent and tracestate, so that a misspelt "namespace" is an error
// and not an event filed under another tenant.
//
// # Rules
//
// The JSON Schemas (schema/cloudevent.json for the envelope,
// schema/<type>.json for each type's data) state the contract; they are
// written from the Go types (see below). Every error is a *FieldError
// naming what is wrong, e.g.
// "data.turns[2].role: must be user, assistant, system or tool, not \"bot\"".
// Engram checks more than a schema can say: lengths in bytes, not
// characters; one value against another (the subject against the data's
// session, an episode's start against its end); lists in order; repeated
// keys and broken surrogates; source and dataschema in the canonical form
// net/url prints, because sdk-go stores them parsed and (id, source) is
// the dedup key; the calendar, and the zero time; float32 range, where
// 1e-50 is 0.
//
// # What this package must never do
//
// Import anything but the standard library, sdk-go's event package and
// the JSON library that reads events (go-json-experiment, what becomes
// encoding/json/v2): it is what agents import. Accept an event it cannot
// represent exactly, or change a value on the way in (beyond the
// documented defaults: an inner turn's session_id, an attachment's
// direction, and memory.added's tier and confidence). Change the meaning
// of a field: add new ones instead.
//
// # Concurrency
//
// Everything here is a pure function of its arguments and safe for
// concurrent use. (checkURI remembers the last URI it accepted, in an
// atomic pointer: a cache of a pure function.)
//
// # Adding a field or a type
//
// A field is written once, in its struct: its JSON name, omitempty (or
// omitzero) when it is optional, a doc tag for the schema's description,
// and a check tag with its rules, which Validate (through checkFields) and
// the schema generator both read:
//
//	id         an identifier: no control characters, at most MaxIDBytes
//	text       free text (the default for a string)
//	date, hash a calendar date YYYY-MM-DD; a TextHash
//	enum=N     one of the list enums[N]
//	max=N      a string's limit in bytes, or an integer's maximum (MaxCount)
//	min=N      an integer's minimum (0)
//	items=N    a list's most items
//	nonempty   a list with at least one item
//	set        a list that names each item once
//	ascending  a list of turn indices, ascending, each once
//	empty      a string that may be "" although its member is required
//
// N is a number or a name in limits. A string of a required member, of a
// list or behind a pointer must not be "" (unless empty); a float64 is a
// fraction from 0 to 1; a required time.Time is not zero. A rule between
// members goes in the type's Validate, and its JSON Schema form in
// typeRules (schemagen_test.go). Then `go generate ./events` writes
// schema/*.json; TestSchemaFiles fails until the files are what the types
// make. A type is registered beside its definition (the registration
// tables in each file), which is where Types, DecodeData and the
// generator find it; a type whose data names a session does so in a
// SessionID field, which SessionID reads.
//
// # Reading JSON
//
// Documents are read by go-json-experiment/json, which refuses unknown
// members, repeated names and text that is not UTF-8, and names the path
// of a problem; decode.go adds what the contract asks beyond it for every
// type at once: no null (but a tool's input), integers written 3, 3.0 or
// 3e0 as in JSON Schema, fractions compared exactly as written, and
// members required unless tagged omitempty or omitzero (even where the
// zero value is valid, turn_index 0) or given a default by the registry.
// Only the envelope's attributes are read by hand, as sdk-go does.
//
// # Testing
//
// A table of valid and invalid samples is run through DecodeData and
// DecodeStructured, and through the JSON Schemas (santhosh-tekuri/jsonschema)
// in the agreement test, which fails when the two disagree. Samples the
// schemas cannot judge are marked as such. The schemas' examples must
// decode (TestSchemaExamples). FuzzDecodeStructured checks that decoding
// never panics, that every refusal is a *FieldError, and that an accepted
// event survives a round trip through sdk-go's JSON encoding.
package events
