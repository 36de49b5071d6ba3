// Package extraction turns recorded turns into memories. It has two
// workers, each on its own durable consumer:
//
//   - Batcher watches turn.recorded, context.compressing and session.ended
//     per session and publishes an extraction.requested event when the
//     rules' extract_now say (Batcher.Rules, triggers.go): when the
//     session goes quiet, when its unextracted turns pass a token cap, at
//     once on compression or session end; the daily sweep for any turn
//     never extracted is a scheduled extract_now the consolidator runs.
//     It also reads extraction.requested, so turns another worker asked
//     for stop waiting. With no rules it keeps Config's fixed triggers.
//     Requests carry their turns, so the extractor needs no read model,
//     and are named by RequestID, so the same turns asked twice are one
//     request.
//   - Before a recorded turn of the user's joins its batch, the batcher
//     has the extractor read it at once (Extractor.ReadTurns): the rules'
//     candidates go out as a memory.extracted with pass "turn", named by
//     the turn (extractreq.ReadingID), so what the user said is a memory
//     within moments and any retry or replay is the same event. A reading
//     marks nothing extracted: the turn still waits for its request, whose
//     rules pass leaves the user's words to their reading (and publishes
//     any reading missing), and whose model, with the readings' memories
//     among the known facts, may restate them (the projector then retires
//     the reading).
//   - Extractor takes each request, masks secrets, and asks the LLM (one
//     call for the whole batch) or, with no LLM, the rule extractor; it
//     publishes memory.extracted with the candidates and the token usage,
//     and memory.write.important for each important one. An LLM failure is
//     returned so the stream retries it with backoff; on the last try the
//     rule extractor covers the turns, extraction.failed records why, and
//     the request goes to the dead letters.
//
// Neither decides what becomes of a candidate: routing by confidence,
// supersede and merge happen when the projector applies memory.extracted,
// so a rebuild reaches the same state without calling the LLM. Each
// candidate says when it was said (said_at): its turn's time for the
// rules, the time of the turn the model names (else the request's last
// turn) for the LLM; that, not when the request ran, decides which
// version of a fact is current.
//
// Concurrency: Batcher's state is guarded by its mutex; its Run loop is
// owned by the caller. Extractor is stateless.
//
// Testing: timers use the real clock functions, so tests drive them with
// testing/synctest; the LLM is llmtest's OpenAI-compatible server.
package extraction
