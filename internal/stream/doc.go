// Package stream is engram's JetStream wiring: the embedded nats-server, the
// connection to an external one, the MEMORY and DEADLETTER streams, the
// subject scheme, publishing with deduplication, and the consumer loop that
// decides every message's fate in one table; the bus's users and their
// permissions (auth.go: one per worker kind, each an allow-list of what
// that kind does; only the operator changes streams or deletes messages);
// setting the streams up, which is the operator's (SetupStreams), and
// telling how a stream differs from engram's (Differences); the
// key-value buckets' users: partition leases, the confirm queue
// (KVQueue), the schedule's firings (Firings).
//
// It is the only package that imports nats.go and nats-server, with
// natsapi (the request-reply services). internal/app holds the handles it
// returns (handle.go) without naming nats.go. It knows the
// CloudEvents envelope (events/) but nothing of what events mean: workers
// hand it a Handler and get back messages.
//
// Fate of a message (Decide, from the code of the handler's error):
//
//	handler returns nil                           → ack
//	EINVALID or ETOOLARGE, or out of deliveries   → copy to DEADLETTER with the reason, then term
//	any other error                               → nak with a delay from the delivery count
//
// Handlers only return errors, coded with memory.Errorf where retrying
// cannot help; none marks a fate of its own.
//
// A handler that panics has failed on its message: the panic is recovered
// into a *memory.PanicError (reason "panic: …"), logged with the subject
// and sequence, and takes the "any other error" row; in a batch, the
// messages are handed over again one at a time to find whose it is. The
// consumer goes on.
//
// Concurrency: a Consumer runs one fetch loop, owned by the caller of Run.
// Publisher is safe for concurrent use.
//
// Testing: tests start a real embedded server with JetStream in t.TempDir()
// (StartEmbedded); nothing is mocked.
package stream
