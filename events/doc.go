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
// # Derived events
//
// The data of an extraction.requested event (self-contained: the
// extractor needs no read model):
//
//	{
//	  "request_id": "r-7",
//	  "session_id": "s-42",
//	  "reason": "compressing",
//	  "turns": [
//	    {"turn_index": 0, "role": "user", "content": "我叫小明，我喜欢喝茶", "time": "2025-06-01T09:30:00Z"},
//	    {"turn_index": 1, "role": "assistant", "content": "记住了。", "time": "2025-06-01T09:30:04Z", "project": "support"}
//	  ],
//	  "summary": "The user introduced themselves."
//	}
//
// memory.extracted, its result:
//
//	{
//	  "request_id": "r-7", "session_id": "s-42", "extractor": "llm", "model": "qwen3-8b",
//	  "usage": {"prompt_tokens": 812, "completion_tokens": 95}, "calls": 1, "turns": [0, 1],
//	  "candidates": [{"kind": "identity", "category": "identity", "subject": "user", "predicate": "name",
//	    "content": "名字是小明", "importance": 0.9, "confidence": 0.95, "updates": true,
//	    "said_at": "2025-06-01T09:30:00Z"}]
//	}
//
// extraction.failed, when a request runs out of tries:
//
//	{"request_id": "r-7", "session_id": "s-42", "reason": "llm: 503 Service Unavailable", "attempts": 5, "turns": [0, 1]}
//
// memory.added (tier and confidence may be left out: 2 and 1):
//
//	{"kind": "rule", "category": "decision", "subject": "team", "predicate": "rule",
//	  "content": "Run go vet before every commit.", "importance": 0.8, "project": "engram"}
//
// memory.updated (only the fields to change) and memory.deleted:
//
//	{"memory_id": "m-19", "content": "prefers green tea", "importance": 0.7}
//	{"memory_id": "m-19", "reason": "the user asked"}
//
// pending.confirmed and pending.ignored, and pending.snoozed:
//
//	{"memory_id": "m-20"}
//	{"memory_id": "m-20", "until": "2025-06-08T09:30:00+08:00"}
//
// memory.write.important:
//
//	{"memory_id": "m-21", "kind": "identity", "category": "identity", "subject": "user",
//	  "predicate": "name", "content": "名字是小明", "importance": 0.9,
//	  "session_id": "s-42", "cause_event_id": "extracted-r-7"}
//
// # Consolidation and retrieval events
//
// Published by the consolidator and the retriever; none but episode.built
// names a session, so only it may take a subject.
//
// episode.built (goal and the lists may be left out; an action needs a
// tool or a decision):
//
//	{
//	  "id": "ep-s-42-0", "session_id": "s-42",
//	  "summary": "用户让构建通过：改了 Makefile，测试全部通过。", "goal": "让构建通过",
//	  "outcome": "completed", "started": "2025-06-01T09:30:00Z", "ended": "2025-06-01T09:45:00Z",
//	  "actions": [
//	    {"tool": "shell", "params": "go test ./...", "result": "2 failures", "success": false, "error": "exit 1", "turn": 3},
//	    {"decision": "switch to the Makefile's test target", "success": true, "turn": 4}
//	  ],
//	  "entities": ["Makefile", "engram"], "tools": ["shell"], "linked_memories": ["m-21"],
//	  "importance": 0.6, "source": "session_end", "turns": [0, 1, 2, 3, 4, 5]
//	}
//
// scratchpad.updated (the whole scratchpad; episode_id only and always
// when written from an episode):
//
//	{"content": "## 当前项目\n- engram: migration", "active_projects": ["engram"],
//	  "current_focus": "migration", "open_questions": ["多语言向量模型?"], "next_steps": ["write tests"],
//	  "source": "episode", "episode_id": "ep-s-42-0"}
//
// profile.refreshed (the whole core profile, possibly empty):
//
//	{"memory_ids": ["m-1", "m-7", "m-21"], "demoted": ["m-3"]}
//
// daily.summarized:
//
//	{"date": "2025-06-01", "channel": "telegram", "summary": "讨论了迁移方案。", "raw_tokens": 1830, "source": "compression"}
//
// memories.merged (content only when an LLM rewrote the kept memory):
//
//	{"into": "m-7", "merged": ["m-8", "m-12"], "importance": 0.9, "content": "prefers green tea, no sugar", "cluster_id": "c-2025w22-3"}
//
// memories.archived and memories.accessed:
//
//	{"memory_ids": ["m-30", "m-31"], "reason": "decay"}
//	{"accesses": [{"memory_id": "m-7", "count": 3, "last": "2025-06-01T09:31:00Z"}]}
//
// retrieval.degraded and user.forgotten:
//
//	{"from": "vectors", "to": "fts", "reason": "embedding endpoint: 503 Service Unavailable"}
//	{"reason": "erasure request #42"}
//
// turns.expired, retention's receipt: the user's raw turns and extraction
// requests stored before stream sequence before_seq (stored before
// stored_before) aged out:
//
//	{"before_seq": 81723, "stored_before": "2025-06-01T03:00:00Z"}
//
// # Embedding events
//
// Published by the embedder when vector recall is on, so that a rebuild
// restores the vectors from the stream instead of asking the model again.
// It names no session, so it takes no subject.
//
// memory.embedded (each vector filed under the TextHash of its text, here
// "prefers green tea, no sugar" and "名字是小明"):
//
//	{"model": "text-embedding-3-small", "dims": 4, "vectors": [
//	  {"hash": "db0d97f7edcccd1fe1d7be2a2bdb5617", "vector": [0.5, -0.5, 0.5, 0.5]},
//	  {"hash": "2b15c5b9fa7c1059d0b98ebdb66865c5", "vector": [0.1, 0.7, -0.7, 0.1]}]}
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
// Identifiers (ids, subject, namespace, user, agent, session_id, channel,
// project, topic, model, tool call id and name, tool_call_id, request_id,
// memory_id, cause_event_id, an episode's id, tools, entities and linked
// memories, episode_id, into, cluster_id): at most MaxIDBytes (256) bytes of valid
// UTF-8, no control characters (Unicode Cc). A memory's subject and
// predicate follow the same rules within MaxMemorySubjectBytes and
// MaxPredicateBytes.
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
//   - extraction.requested: request_id, session_id, reason (quiet,
//     token_cap, compressing, session_ended, sweep, manual, redrive) and
//     1 to MaxExtractionTurns turns required, in ascending turn_index order
//     with no index twice. A turn has turn_index, role and time (RFC 3339,
//     as the envelope's) and no session_id or attachments; its content may
//     be empty.
//   - memory.extracted: request_id, session_id, extractor (rules, llm),
//     usage (both counts), calls, turns and candidates all required. turns
//     and extraction.failed's turns: 1 to MaxExtractionTurns indices,
//     ascending, each once. candidates: 0 to MaxCandidates.
//   - A candidate, memory.added and memory.write.important: kind (fact,
//     preference, rule, skill, error, context, identity), category
//     (identity, config, credential, decision, solution, event,
//     conversation, temp, debug), subject, predicate and content
//     (at most MaxMemoryContentBytes) required and not empty; importance
//     and confidence are numbers from 0 to 1, compared exactly as written.
//     A candidate needs both; memory.added needs importance (tier is 1 or
//     2); memory.write.important needs importance, memory_id and
//     cause_event_id, and has no confidence. A candidate's and
//     memory.added's said_at, when present, is an RFC 3339 time: when the
//     fact was said, which decides the current version of a fact; left
//     out, the event's time.
//   - extraction.failed: reason required, at most MaxReasonBytes; attempts
//     required, 0 to MaxCount.
//   - memory.updated: memory_id and at least one field to change. Content,
//     kind, category, subject and predicate follow the rules above; project
//     and topic may be "" to clear them; null is refused.
//   - memory.deleted: memory_id required; reason at most MaxReasonBytes.
//   - pending.*: memory_id required; until (RFC 3339) required for
//     pending.snoozed and refused for the other two.
//   - Lists of identifiers (an episode's entities, tools and
//     linked_memories, a scratchpad's active_projects, and the memory ids
//     of profile.refreshed, memories.merged and memories.archived) hold
//     no empty string and no value twice.
//   - episode.built: id, session_id, summary (at most
//     MaxEpisodeSummaryBytes), outcome (completed, partial, failed,
//     abandoned, ongoing), started and ended (RFC 3339; ended not before
//     started), importance, source (session_end, compression, sweep) and
//     turns (1 to MaxEpisodeTurns indices, ascending, each once)
//     required. goal at most MaxNoteBytes. At most MaxEpisodeActions
//     actions and linked memories, MaxEpisodeEntities entities and tools.
//     An action needs turn and a tool or a decision; params, result,
//     error and decision are at most MaxNoteBytes.
//   - scratchpad.updated: content required (may be empty; at most
//     MaxScratchpadBytes) and source (episode, person); episode_id
//     required for episode and refused for person. current_focus and each
//     open question and next step (not empty) at most MaxNoteBytes; at
//     most MaxScratchpadItems in each list.
//   - profile.refreshed: memory_ids required (0 to MaxProfileMemories);
//     demoted at most MaxProfileMemories, none also in memory_ids.
//   - daily.summarized: date (YYYY-MM-DD, a real date), channel, summary
//     (at most MaxDailySummaryBytes), raw_tokens (0 to MaxCount) and
//     source (compression, migration) required.
//   - memories.merged: into, merged (1 to MaxMemoryBatch, not into),
//     importance and cluster_id required; content, when present, not
//     empty and at most MaxMemoryContentBytes.
//   - memories.archived: memory_ids (1 to MaxMemoryBatch) and reason
//     (decay, expired, cap, manual) required.
//   - memories.accessed: 1 to MaxMemoryBatch accesses, each with
//     memory_id, count (1 to MaxCount) and last (RFC 3339); no memory
//     twice.
//   - retrieval.degraded: from (vectors, fts), to (fts, recent) below
//     from in the chain vectors → fts → recent, and reason (at most
//     MaxReasonBytes) required.
//   - user.forgotten: reason optional, at most MaxReasonBytes.
//   - turns.expired: before_seq (a stream sequence, at least 1) and
//     stored_before (RFC 3339) required.
//   - memory.embedded: model (an identifier of at most
//     MaxEmbeddingModelBytes), dims (1 to MaxEmbeddingDims) and 1 to
//     MaxEmbeddedVectors vectors required. Each vector has a hash (a
//     TextHash: 32 lower-case hex digits) that no other vector of the
//     event has, and exactly dims components: numbers within float32
//     range, read as float32s, not all zero.
//
// Every error is a *FieldError naming what is wrong, e.g.
// "data.turns[2].role: must be user, assistant, system or tool, not \"bot\"".
//
// The JSON Schemas say the same, except where a schema cannot: they count
// characters where engram counts bytes, cannot compare subject or a turn's
// session_id with data.session_id, cannot check that turns are in order,
// cannot compare two values (an episode's start and end, a merge's into
// and merged, a profile's kept and demoted memories, the memory ids of
// two accesses, a vector's length and dims, the hashes of two vectors),
// cannot see repeated keys, broken surrogates or a non-canonical URI, do
// not check the calendar or refuse the zero time, and do not round to
// float32 (where 1e-50 is 0).
//
// # What this package must never do
//
// Import anything but the standard library and sdk-go's event package: it
// is what agents import. Accept an event it cannot represent exactly, or
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
// # Reading JSON
//
// Documents are read by a scanner of our own (jsonscan.go) that takes
// only well-formed JSON it reads exactly as encoding/json does; anything
// else, and any document that breaks the contract, is read again with
// encoding/json's tokenizer, which names the problem. The scanner is for
// speed (every event is read at ingest) and never words an error.
//
// # Testing
//
// A table of valid and invalid samples is run through DecodeData and
// DecodeStructured, and through the JSON Schemas (santhosh-tekuri/jsonschema)
// in the agreement test, which fails when the two disagree. Samples the
// schemas cannot judge (listed above) are marked as such.
// FuzzDecodeStructured checks that decoding never panics and that an
// accepted event survives a round trip through sdk-go's JSON encoding.
// The scanner is held to encoding/json's tokenizer on every sample, the
// fuzz seeds, their mutations and a list of hostile inputs (jsonscan_test.go,
// with FuzzScanner): it may leave a document to the tokenizer, but never
// accepts one the tokenizer refuses nor reads one to other values.
package events
