// Package app composes engram's workers into a process. The single binary
// (`engram serve`) and the separate worker binaries (cmd/ingest,
// cmd/retriever, …) are all an App with a different set of Roles, so there
// is one composition and one shutdown order.
//
// Start order: data dir → NATS (embedded, or connect to an external one:
// one connection per worker kind, each as that kind's bus user, and the
// operator's when the process holds it) → streams (set up as the
// operator by engram serve; only checked by a worker, which may not
// create them) → read model → the streams' drift check → consumers →
// NATS services → HTTP. Close runs the
// reverse, within the context's deadline: stop accepting HTTP, stop the
// services, stop consumers and wait for their goroutines, drain NATS, shut
// the embedded server, close the database.
//
// It names no NATS package (internal/archtest holds it to that): what is
// done on the bus is internal/stream's, and the request-reply services
// internal/natsapi's; App holds their handles (stream.Conn,
// stream.JetStream) and hands them on.
//
// It must never repair the stream or the read model by itself: a MEMORY
// that changed under engram is reported (streamdrift.go), and an operator
// decides.
//
// Concurrency: every goroutine App starts belongs to its conc.WaitGroup and
// is waited for in Close.
package app
