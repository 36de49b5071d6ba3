// Package llm is the one place in engram that talks to a language model. It
// speaks the OpenAI-compatible HTTP API (chat completions and embeddings),
// which OpenAI, Ollama, vLLM and llama.cpp all serve, using only the standard
// library.
//
// What it does: one chat completion or one batch of embeddings per call, with
// a per-request timeout, a cap on how much of a response it will read, and
// every failure turned into an *Error whose Kind tells the caller whether a
// retry can help and how long the server asked it to wait. Retrying, backoff
// and dead-lettering are the caller's business (the extractor's fate table);
// this package never sleeps and never retries a failed request, with one
// exception: when a server rejects a request field it does not support
// (response_format on llama.cpp and older servers, temperature or max_tokens
// on reasoning models), the request is sent again without it and the Client
// remembers not to send it again.
//
// Model output is untrusted text: JSONContent digs the JSON out of replies
// wrapped in code fences, <think> reasoning blocks or prose.
//
// What it must never do: put the API key or the text of the messages or
// embedding inputs into an error, a log line or anything else it returns.
// Server error messages are cut short, have the key redacted and are dropped
// altogether when they quote the request (FastAPI-based servers echo the
// input in validation errors). It never estimates tokens; it reports what the
// server said it used.
//
// Concurrency: a Client is safe for concurrent use by many goroutines. It
// holds no goroutines of its own.
//
// Testing: tests run against llmtest, an OpenAI-compatible server in the test
// process that follows the real wire format and can be told to fail, stall,
// rate-limit, cut the connection or return broken JSON. JSONContent has a fuzz
// target (FuzzJSONContent) whose seed corpus lives in testdata/fuzz.
package llm
