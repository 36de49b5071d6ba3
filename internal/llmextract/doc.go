// Package llmextract asks a language model for the facts worth remembering
// in a batch of conversation turns: one chat-completions call in JSON mode,
// whose reply becomes memory.Candidates.
//
// Tokens are what it is measured on, so the prompt is built to be cheap: a
// short static system prompt (about 330 tokens, held to a bound by a test),
// turns on one line each as "[index] role: content", long turns cut to
// their head and tail, tool calls reduced to the tool's name, its key input
// (80 characters) and its result (120 characters), and the oldest turns
// left out (and reported in Result.Omitted) beyond Options.MaxInputTokens.
// A typical 20-turn working session costs about 55 prompt tokens a turn,
// some 70 with the reply (see TestTokensPerTurn).
//
// Predicates are the rule extractor's canonical English vocabulary
// (ruleextract.PredName …) whatever the language of the conversation, and
// Parse maps common synonyms onto it, so that a fact said in Chinese and a
// later one said in English share subject and predicate and the newer can
// supersede the older. Content stays in the language it was said in.
//
// The turns, known facts and the agent's summary are data, not
// instructions: they sit in a <data> block the system prompt tells the
// model to treat as such, whitespace is folded so no turn can begin a line
// of its own, and anything spelling the block's tags is defused.
//
// Parse treats the reply as untrusted text: it digs the JSON out of
// reasoning blocks, fences and prose (llm.JSONContent), keeps the complete
// items of a reply cut off by max_tokens, maps synonyms of kinds and
// categories in English and Chinese, clamps scores into [0, 1], caps sizes
// and counts, and drops what it cannot use with one problem line per item.
//
// What it must never do: retry, sleep or classify client errors (they go
// back to the caller as the *llm.Error they are; a useless reply is an
// *OutputError matching ErrBadOutput); put more than a short snippet of a
// memory into a problem line or an error; return a candidate with an
// invalid kind or category, an empty subject, predicate or content, invalid
// UTF-8 or a score outside [0, 1]; estimate tokens any way but
// EstimateTokens. It does not mask secrets: callers run text through
// internal/secrets first.
//
// Concurrency: Prompt and Parse are pure functions; an Extractor holds only
// its *llm.Client, which is safe for concurrent use, so Extract may be
// called from many goroutines.
//
// Testing: Prompt's shape, cuts and budget are checked directly; Extract
// runs against llmtest, the in-process OpenAI-compatible server, for
// scripted replies, server errors and bad output; Parse has table tests
// and a fuzz target, FuzzParse, whose seed corpus of replies as real models
// write them lives in testdata/fuzz/FuzzParse.
package llmextract
