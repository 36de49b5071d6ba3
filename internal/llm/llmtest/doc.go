// Package llmtest is an OpenAI-compatible model server for tests: a real
// HTTP server (httptest) in the test process that speaks the wire format of
// POST /v1/chat/completions and POST /v1/embeddings, and can be told to fail
// in every way a real endpoint does.
//
//	srv := llmtest.New(t)
//	srv.Reply(func(req llmtest.ChatRequest) string { return `{"facts":[]}` })
//	srv.Enqueue(llmtest.RateLimit(2*time.Second), llmtest.Stall(time.Minute))
//	client, err := llm.New(srv.Config(), srv.HTTPClient())
//
// Each request takes the next scripted Step from its queue (one queue for
// chat, one for embeddings); when the queue is empty the server answers
// normally: chat with the text the Reply function produces from the request,
// embeddings with deterministic vectors from a hashed bag of words, so that
// texts sharing words are close (see Embedding). Usage is reported as one
// token per four bytes (see Tokens), so tests can predict it.
//
// Requests are checked as strictly as OpenAI checks them: a missing model,
// an unknown field or a bad role gets a 400 in OpenAI's error format, and is
// recorded but consumes no step. Everything received is kept for assertions
// (Requests, EmbedRequests, Calls, Usage).
//
// What it must never do: sleep without also watching the request's context
// and the server's shutdown, or leave a goroutine behind. The Server is safe
// for concurrent use; it closes itself in t.Cleanup, releasing any stalled
// request at once.
//
// Testing: its own tests drive it with plain net/http, without the llm
// client, so a bug in one cannot hide a bug in the other.
package llmtest
