// Package events is engram's public event contract: the Go types of the
// data of every input event, their validation, and JSON Schemas (Schemas,
// Schema) for agents written in other languages.
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
// The data of a context.compressing event (turns may leave out session_id):
//
//	{
//	  "session_id": "s-42",
//	  "turns": [
//	    {"turn_index": 0, "role": "user", "content": "我上次说的退款政策是什么？"},
//	    {"turn_index": 1, "role": "tool", "tool_results": [{"tool_call_id": "c1", "content": "30 days"}]}
//	  ],
//	  "summary": "The user asked about the refund policy; it is 30 days."
//	}
//
// The data of a session.ended event:
//
//	{"session_id": "s-42", "message_count": 12, "reason": "user_closed"}
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
//   - type is turn.recorded, context.compressing or session.ended.
//   - datacontenttype is absent or application/json (lower case,
//     parameters allowed). Not application/<x>+json: sdk-go would encode
//     such data as a JSON string when the event is passed on. dataschema,
//     when present, is an absolute URI in canonical form; time is RFC 3339
//     and not the zero time.
//   - data is a JSON object. data_base64 is refused: the data of every
//     engram event is JSON, and one form keeps the contract and the schema
//     simple.
//   - subject, when present, equals data.session_id.
//   - In structured mode every attribute is a JSON string (a numeric id is
//     an error, not a coerced value), no key appears twice, the whole event
//     is valid UTF-8 with no \u escape of half a surrogate pair, and it fits
//     the size limit (DefaultMaxEventBytes unless told otherwise).
//
// Identifiers (ids, subject, namespace, user, agent, session_id, channel,
// project, tool call id and name, tool_call_id): at most MaxIDBytes (256)
// bytes of valid UTF-8, no control characters (Unicode Cc).
//
// Data (DecodeData): no unknown fields, no repeated keys, nothing after the
// JSON value, every value of its JSON type. Integers may be written 3, 3.0
// or 3e0, as in JSON Schema.
//   - turn.recorded: session_id required; turn_index required, 0 to MaxCount;
//     role one of user, assistant, system, tool; a turn needs non-empty
//     content or at least one tool call, tool result or attachment; a tool
//     call needs a name; an attachment needs a name, its size is 0 to
//     MaxAttachmentSize and its direction is "", inbound or outbound (""
//     decodes as inbound).
//   - context.compressing: session_id required; at least one turn, each a
//     turn as above whose session_id is left out (it is filled in) or equals
//     the event's.
//   - session.ended: session_id required; message_count required, 0 to
//     MaxCount.
//
// Every error is a *FieldError naming what is wrong, e.g.
// "data.turns[2].role: must be user, assistant, system or tool, not \"bot\"".
//
// The JSON Schemas say the same, except where a schema cannot: they count
// characters where engram counts bytes, cannot compare subject or a turn's
// session_id with data.session_id, cannot see repeated keys, broken
// surrogates or a non-canonical URI, and do not check the calendar.
//
// # What this package must never do
//
// Import anything but the standard library and sdk-go's event package: it
// is what agents import. Accept an event it cannot represent exactly, or
// change a value on the way in (beyond the two documented defaults: an
// inner turn's session_id and an attachment's direction). Change the
// meaning of a field: add new ones instead.
//
// # Concurrency
//
// Everything here is a pure function of its arguments and safe for
// concurrent use.
//
// # Testing
//
// A table of valid and invalid samples is run through DecodeData and
// DecodeStructured, and through the JSON Schemas (santhosh-tekuri/jsonschema)
// in the agreement test, which fails when the two disagree. Samples the
// schemas cannot judge (listed above) are marked as such.
// FuzzDecodeStructured checks that decoding never panics and that an
// accepted event survives a round trip through sdk-go's JSON encoding.
package events
