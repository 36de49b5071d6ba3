// Package episode turns a run of conversation turns into an episode (seed
// 000 §4.2: what the user wanted, what the agent did, how it ended) and
// folds episodes into the user's scratchpad (seed 000 §4.3: active
// projects, current focus, recent progress, open questions, next steps).
// The consolidator calls it at session.ended and on context.compressing,
// so that what leaves the agent's window is kept (seed 000 §7.2–§7.3,
// seed 002 §6).
//
// Everything works without a model. Extractive and UpdateScratchpad are
// rule-based and deterministic: the same input (and, for the scratchpad,
// the same now) gives the same output, so replay can rebuild them. Their
// rules — goal, outcome, action pairing, entities, summary, importance,
// the scratchpad's lists and rendering — are documented on the functions
// that apply them. The summary is extractive: sentences the turns contain,
// in the conversation's language, never invented text.
//
// A Builder with an llm.Client does better with one JSON-mode chat call
// each: a short static system prompt, the turns as data in a <data> block
// whose tags no turn can spell, one line per turn and per tool call, cut
// to MaxPromptTokens (the goal's turn and the newest turns). The reply is
// untrusted: it is dug out of reasoning and fences (llm.JSONContent), its
// field names and outcomes mapped from common synonyms, cut to the same
// limits, and merged over the extractive result. On any error the caller
// falls back to the extractive functions.
//
// What it must never do: take tool action nodes or the tools used from a
// model (they come from the turns, always); read a clock or randomness in
// the extractive path; return a field over its limit, with invalid UTF-8
// or with a control character (every limit fits the episode.built and
// scratchpad.updated events); drop a person's scratchpad text; retry,
// sleep or log (errors go back to the caller, who decides). It does not
// mask secrets: callers pass turns through internal/secrets first.
//
// Concurrency: the functions are pure; a Builder holds only its
// *llm.Client, which is safe for concurrent use.
//
// Testing: golden files in testdata/golden (go test -update rewrites
// them) pin Extractive and UpdateScratchpad on English and Chinese
// sessions; the Builder runs against llmtest, the in-process
// OpenAI-compatible server; FuzzExtractive and FuzzParse keep their seed
// corpora in testdata/fuzz.
package episode
