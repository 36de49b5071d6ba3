// Package retrieval builds the memory block an agent puts in its next
// prompt: it decides whether to retrieve at all, recalls candidates along
// several paths (memories, raw turns with their neighbours, recent turns,
// attachments, the core profile and scratchpad), reranks them with
// relevance, recency, importance, access frequency and category decay,
// fits them to a token budget, and renders them quoted with provenance so
// stored text can never pose as an instruction.
//
// It reads through a small Store interface (the local read model, or one
// served over NATS), never writes: access reinforcement is handed to a
// Recorder, which publishes it as events so a rebuild agrees.
//
// Degradation: when a text path fails, the engine falls back to recent
// turns and the profile and says so in the response; it never fails a
// request because one path did.
//
// Concurrency: an Engine is safe for concurrent use; it holds no state of
// its own beyond its configuration.
package retrieval
