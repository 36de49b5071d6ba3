// Package retrieval builds the memory block an agent puts in its next
// prompt: it decides whether to retrieve at all, recalls candidates along
// several paths (memories, raw turns with their neighbours, recent turns,
// attachments, the core profile and scratchpad), reranks them with
// relevance, recency, importance, access frequency and category decay
// (raw turns by the shape of a conversation too: the turn after a
// question is its answer, a turn that asks tells little, a named day or
// a "when" points at what was said then or says when; turns.go),
// fits them to a token budget, and renders them quoted with provenance so
// stored text can never pose as an instruction. Search (GET /v1/search)
// reads a query and ranks turns the same way.
//
// It reads through a small Store interface (the local read model, or one
// served over NATS), never writes: access reinforcement is handed to a
// Recorder, which publishes it as events so a rebuild agrees.
//
// Vectors are optional (Engine.Vectors): when set, the query's nearest
// memories are fused with the full-text hits by reciprocal rank fusion,
// and a memory's relevance is the better of its text relevance and its
// cosine, so vectors only add (seed 004's hybrid sum ranked gold memories
// below full text alone; rankMemories); explain shows the cosine.
//
// Attachments are scored on their own name, description and
// transcription, not their turn's (attachments.go). A persona weighs up
// the kinds of memory it favours (seed 000 §5.5's tech_expert); a preset
// reproduces one seed's budget, scoring and evidence count as written
// (presets.go); without one, the defaults above answer.
//
// Degradation (seed 004 §8): when the vector path fails, memories come from
// full text alone; when a text path fails, the engine falls back to recent
// turns and the profile. Each fall is said in the response and reported to
// Degraded; a request never fails because one path did.
//
// Concurrency: an Engine is safe for concurrent use; it holds no state of
// its own beyond its configuration.
package retrieval
