// Package migrate reads other memory systems' stores and turns them into
// engram events, for `engram migrate myclaw DIR` and
// `engram migrate openakita DIR`. It only reads files and hands events to
// an emit function; publishing them is the caller's business.
//
// # What it reads, and what it makes
//
// myclaw (seed 001 §12.2), Myclaw:
//
//   - DIR/MEMORY.md and DIR/memory/MEMORY.md: every bullet or line of text
//     becomes a memory.added in the core profile (tier 1), subject "user",
//     confidence 1, importance 1.0 (seed 001 §12.2), topic the innermost heading, and kind,
//     category and predicate from the innermost heading that is known (the
//     table below). Headings, blank lines, rules (---), table separators
//     and header rows, HTML comment lines and YAML front matter are not
//     memories; list markers ("- ", "1. ", "- [x] ", "> ") are stripped; a
//     table row becomes its cells. A fenced code block is left out with a
//     problem. The event time is the file's modification time.
//   - DIR/memory/YYYY-MM-DD.md and DIR/YYYY-MM-DD.md: one daily.summarized
//     per file, channel "myclaw", source migration, summary the trimmed
//     content (cut at a line or character boundary to
//     events.MaxDailySummaryBytes, with a problem saying so), raw_tokens
//     the estimate of the whole file, time midnight UTC of the date. Any
//     other .md file in DIR/memory is a problem; other files in DIR are
//     not looked at.
//
// The headings of MEMORY.md (matched anywhere in the heading, any case,
// tried in this order):
//
//	heading has                                   kind        category  predicate
//	规则 约束 指令 要求 规范 rule instruction ...  rule        config    rule
//	偏好 喜好 习惯 preference likes habit          preference  config    prefers
//	项目 project                                  fact        identity  project
//	技术栈 tech stack, stack                       fact        identity  tech_stack
//	身份 关于 个人信息 基本信息 about identity ...  identity    identity  about
//	anything else, or no heading                  fact        identity  note
//
// Every predicate is a set in engram's vocabulary (memory.SingleValued is
// false), so bullets under one heading are meant to add to each other,
// not to supersede one another.
//
// OpenAkita (seeds 003 and 000 §9.1), OpenAkita; each file is looked for
// in DIR and in DIR/memory (OpenAkita's data/ layout):
//
//   - memories.json, an array or {"memories": [...]}: each record becomes
//     a memory.added. type (any case) → kind: FACT fact, PREFERENCE
//     preference, SKILL skill, ERROR error, RULE rule, CONTEXT context,
//     PERSONA_TRAIT preference; none → fact. priority → category and
//     tier: PERMANENT → identity (fact, context) or config (the others),
//     tier 1; LONG_TERM → decision; SHORT_TERM → event; TRANSIENT → temp;
//     none → decision (so nothing fades faster than it would have). The
//     subject and predicate are the record's when it has them ("用户"
//     becomes "user"), else "user" and by kind: note, prefers, skill,
//     lesson, rule, context. importance_score or importance (0 to 1;
//     none → 0.5). Confidence is 1: these were accepted memories. The
//     event time is created_at (RFC 3339, or Python's isoformat taken as
//     UTC), else the file's modification time. Tags are not carried:
//     engram has none. A record with superseded_by set is history and is
//     left out with a problem.
//   - conversation_history/*.jsonl, one message a line ({role, content,
//     timestamp, session_id?, tool_calls?, tool_results?}): each becomes a
//     turn.recorded. The session is the record's, else the file name
//     without .jsonl; turn_index counts each session's lines in file
//     order, files taken in name order. A skipped line keeps its index
//     (a line that is not JSON counts in the file's session), so a re-run
//     after it is fixed fills the gap instead of colliding. The channel
//     is the record's, when it has one. content may be a string or a list
//     of Anthropic-style blocks (text, tool_use, tool_result); tool_calls
//     may be {id, name, input} or OpenAI's {id, function: {name,
//     arguments}}. Roles human, ai, bot, model and function are read as
//     user, assistant and tool. The time is the timestamp (RFC 3339,
//     isoformat, or Unix seconds or milliseconds), else the line before's,
//     else the file's modification time.
//
// # Identity and re-runs
//
// Every event's id is derived from the namespace, the user, the system,
// the file's path under DIR, the record's place in it (line, or record id
// or index) and a hash of the record, so a re-run makes the same events
// and the stream and the projections drop them as duplicates; a record
// edited since makes a new event.
//
// # What it must never do
//
// Abort a migration for one bad record: a record that cannot be turned
// into a valid event is skipped with a problem naming file:line and the
// reason (only emit failing, or DIR being unreadable, stops it). Put more
// than 40 characters of a memory's or message's content in a problem.
// Write anything, or change the files it reads.
//
// # Concurrency
//
// Myclaw and OpenAkita read and emit in order, on the caller's goroutine;
// concurrent calls share nothing.
//
// # Testing
//
// Fixture directories in testdata/ (Chinese and English content, a
// malformed JSON line, an empty file, a line over the event limit made at
// test time) are migrated and every event is checked with events.Validate;
// two runs must make the same ids. FuzzParseMemoryMD keeps its corpus in
// testdata/fuzz/FuzzParseMemoryMD.
package migrate
