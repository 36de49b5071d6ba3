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
// schema/<type>.json for each type's data) state the contract, and each
// type's doc comment says what its fields mean. Every error is a
// *FieldError naming what is wrong, e.g.
// "data.turns[2].role: must be user, assistant, system or tool, not \"bot\"".
// Engram checks more than a schema can say: lengths in bytes, not
// characters; one value against another (the subject against the data's
// session, an episode's start against its end); lists that are sets or
// in order; repeated keys and broken surrogates; source and dataschema in
// the canonical form net/url prints, because sdk-go stores them parsed
// and (id, source) is the dedup key; the calendar, and the zero time;
// float32 range, where 1e-50 is 0.
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
// A field is written once: in its struct, with its JSON name and
// omitempty when it is optional, and its rules in the type's Validate.
// The hand-written JSON Schema must list it too; TestSchemasFollowTypes
// fails until it does. A type is registered beside its definition (the
// registration tables in each file), which is where Types, DecodeData
// and the schema tests find it; a type whose data names a session does
// so in a SessionID field, which SessionID reads.
//
// # Reading JSON
//
// Documents are read by go-json-experiment/json, which refuses unknown
// members, repeated names and text that is not UTF-8, and names the path
// of a problem; decode.go adds what the contract asks beyond it for every
// type at once: no null (but a tool's input), integers written 3, 3.0 or
// 3e0 as in JSON Schema, fractions compared exactly as written, and
// members required unless tagged omitempty or omitzero. Only the
// envelope's attributes are read by hand, as sdk-go does.
//
// # Testing
//
// A table of valid and invalid samples is run through DecodeData and
// DecodeStructured, and through the JSON Schemas (santhosh-tekuri/jsonschema)
// in the agreement test, which fails when the two disagree. Samples the
// schemas cannot judge are marked as such. Each schema is also held to its
// Go type (TestSchemasFollowTypes), and its examples must decode
// (TestSchemaExamples). FuzzDecodeStructured checks that decoding never
// panics, that every refusal is a *FieldError, and that an accepted event
// survives a round trip through sdk-go's JSON encoding.
package events
