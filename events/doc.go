// Package events is engram's public event contract: the Go types of the
// data of every event, input and derived, their validation, and JSON
// Schemas (Schemas, Schema) for agents written in other languages.
//
// Input events (turn.recorded, context.compressing, session.ended) are
// published by agents. Derived events are published by engram's workers
// with NewDerived, which takes a deterministic id and time so that a
// replay or a retried publish makes the same event; an operator or agent
// may publish some of them too (a manual memory.added, an edit, a
// decision on a pending memory). Types lists them all; Validate accepts
// every one.
//
// Agents publish CloudEvents 1.0. The envelope is sdk-go's event.Event;
// engram adds the extension attributes namespace (optional, "default" when
// left out), user (required) and agent (optional), and the subject, when
// present, carries the session. The only other extensions accepted are
// traceparent and tracestate, so that a misspelt "namespace" is an error
// and not an event filed under another tenant.
//
// # Events
//
// A turn.recorded event, structured mode:
//
//	{
//	  "specversion": "1.0",
//	  "id": "9f0c2a4e-1b7d-4c55-8f3e-2d6a1e0b7c41",
//	  "source": "https://agent.example.com",
//	  "type": "turn.recorded",
//	  "subject": "s-42",
//	  "time": "2025-06-01T09:30:00Z",
//	  "datacontenttype": "application/json",
//	  "namespace": "acme",
//	  "user": "alice",
//	  "agent": "helpdesk",
//	  "data": {
//	    "session_id": "s-42",
//	    "turn_index": 3,
//	    "role": "assistant",
//	    "content": "Let me look that up.",
//	    "tool_calls": [{"id": "c1", "name": "search", "input": {"q": "refund policy"}}],
//	    "attachments": [{"name": "policy.pdf", "mime": "application/pdf", "size": 48213,
//	      "url": "https://files.example.com/policy.pdf", "direction": "outbound"}],
//	    "channel": "web",
//	    "project": "support"
//	  }
//	}
//
// The data of every type has an example in its JSON Schema ("examples"),
// which TestSchemaExamples decodes.
//
// # Derived events
//
// Published by engram's workers with NewDerived: the extractor's request
// and result (extraction.requested, memory.extracted, extraction.failed),
// memories written and edited (memory.added, memory.updated,
// memory.deleted, pending.*, memory.write.important), and the
// consolidator's and retriever's (episode.built, scratchpad.updated,
// profile.refreshed, daily.summarized, memories.merged, memories.archived,
// memories.accessed, retrieval.degraded, user.forgotten, turns.expired,
// consolidation.reported). identity.confirmed is an agent's: what the
// user confirmed on first meeting it (seed 004 §3). Of these only extraction.*, memory.extracted, episode.built and, when
// they name one, memory.added and memory.write.important belong to a
// session and may take a subject.
//
// # Embedding events
//
// memory.embedded is published by the embedder when vector recall is on,
// so that a rebuild restores the vectors from the stream instead of asking
// the model again; each vector is filed under the TextHash of its text.
//
// # Rules
//
// Envelope (Validate, DecodeStructured):
//   - specversion is "1.0"; 0.3 is refused with a message saying so.
//   - id, subject, namespace, user and agent are identifiers (below); user
//     is required; namespace, agent and subject, when present, are not empty.
//   - source is a URI reference of at most 1024 bytes with no spaces or
//     control characters, in canonical form: exactly as Go's net/url prints
//     it, because sdk-go stores it parsed and (id, source) is the dedup key.
//   - type is one of Types.
//   - datacontenttype is absent or application/json (lower case,
//     parameters allowed). Not application/<x>+json: sdk-go would encode
//     such data as a JSON string when the event is passed on. dataschema,
//     when present, is an absolute URI in canonical form; time is RFC 3339
//     and not the zero time.
//   - data is a JSON object. data_base64 is refused: the data of every
//     engram event is JSON, and one form keeps the contract and the schema
//     simple.
//   - subject, when present, equals data.session_id: the subject carries
//     the session and nothing else. So data without a session takes no
//     subject: memory.updated, memory.deleted, pending.*, and a
//     memory.added or memory.write.important that names no session,
//     every consolidation and retrieval event but episode.built, and
//     memory.embedded.
//   - In structured mode every attribute is a JSON string (a numeric id is
//     an error, not a coerced value), no key appears twice, the whole event
//     is valid UTF-8 with no \u escape of half a surrogate pair, and it fits
//     the size limit (DefaultMaxEventBytes unless told otherwise).
//
// Identifiers (ids, the subject, namespace, user, agent, session,
// request, memory and other ids, names of tools, projects and topics) are
// at most MaxIDBytes (256) bytes of valid UTF-8 with no control
// characters (Unicode Cc); a memory's subject and predicate follow the
// same rules within their own limits.
//
// Data (DecodeData): no unknown members, no repeated keys, nothing after
// the JSON value, every value of its JSON type and none null (but a
// tool's input). Integers may be written 3, 3.0 or 3e0, as in JSON
// Schema; numbers from 0 to 1 (importance, confidence) are compared
// exactly as written; times are RFC 3339, as the envelope's. A member
// whose Go field is tagged without omitempty is required. Everything else
// a type's data must be, its Validate method checks and its doc comment
// and field comments say: limits (in bytes), enumerations, lists that are
// sets or in order, one value against another (a subject against the
// data's session, an episode's start against its end).
//
// Every error is a *FieldError naming what is wrong, e.g.
// "data.turns[2].role: must be user, assistant, system or tool, not \"bot\"".
//
// The JSON Schemas say the same, except where a schema cannot: they count
// characters where engram counts bytes, cannot compare two values or
// check an order, cannot see repeated keys, broken surrogates or a
// non-canonical URI, do not check the calendar or refuse the zero time,
// and do not round to float32 (where 1e-50 is 0).
//
// # What this package must never do
//
// Import anything but the standard library, sdk-go's event package and
// the JSON library that reads events (go-json-experiment, what becomes
// encoding/json/v2): it is what agents import. Accept an event it cannot represent exactly, or
// change a value on the way in (beyond the documented defaults: an inner
// turn's session_id, an attachment's direction, and memory.added's tier
// and confidence). Change the meaning of a field: add new ones instead.
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
// and the schema tests find it; a type whose data names a session has a
// Session method.
//
// # Reading JSON
//
// Documents are read by go-json-experiment/json, which refuses unknown
// members, repeated names and text that is not UTF-8, and names the path
// of a problem; decode.go adds what the contract asks beyond it (null,
// integers written 3.0, exact fractions, required members) for every
// type at once. Only the envelope's attributes are read by hand, as
// sdk-go does.
//
// # Testing
//
// A table of valid and invalid samples is run through DecodeData and
// DecodeStructured, and through the JSON Schemas (santhosh-tekuri/jsonschema)
// in the agreement test, which fails when the two disagree. Samples the
// schemas cannot judge (listed above) are marked as such. Each schema is
// also held to its Go type (TestSchemasFollowTypes). FuzzDecodeStructured
// checks that decoding never panics, that every refusal is a *FieldError,
// and that an accepted event survives a round trip through sdk-go's JSON
// encoding.
package events
