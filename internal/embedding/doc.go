// Package embedding is the worker that makes vector recall replayable: it
// embeds the text of every memory as it is written and publishes the
// vectors as memory.embedded events, so that the read model, and any
// rebuild of it, takes vectors from the stream and never calls the
// embedding model.
//
// Embedder.Handle takes applied events from its own durable consumer:
// memory.extracted (each candidate's content), memory.added (the
// content), memory.updated (the new content, when the patch has one) and
// memories.merged (the rewritten content, when there is one); it ignores
// everything else. Each text is filed under events.TextHash of the whole
// text, the key the read model looks up with a memory's content, though
// only its first MaxText bytes are embedded. Texts are deduplicated within
// a scope (a user) and sent Batch at a time; each scope's vectors go out
// as one event, or several when they would pass the event size limit,
// whose id is derived from the model, the scope and the hashes, so a
// redelivered batch makes events the stream drops as duplicates. A
// bounded memory of what was published saves calling the model again for
// a redelivery or a fact repeated later; a restart forgets it, which
// costs a call and nothing else, since the read model ignores a vector it
// already has.
//
// Errors are per scope: an event is acknowledged only once every text it
// brought is published. Handle returns errors and never sleeps or
// retries; the consumer's fate table does (memory.RetryError for a rate
// limit's delay, memory.EINVALID for what retrying cannot fix, anything
// else with backoff until the dead letters).
//
// What it must never do: publish a vector it has not checked (the length
// of the others, finite, not all zeros); let one scope's failure fail
// another's events where it can tell them apart (a refused request that
// held several scopes is sent again one scope at a time); read the read
// model; log memory contents (it logs counts, and at debug level).
//
// Concurrency: Handle may be called from several goroutines; the only
// shared state is the memory of published keys, behind a mutex. It starts
// no goroutines.
//
// Testing: against llmtest's OpenAI-compatible server, through the real
// llm client, whose vectors are llmtest.Embedding of each text; published
// events are built with events.NewDerived, which validates them.
package embedding
