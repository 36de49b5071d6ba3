// Package bench measures engram the way docs/benchmarks.md reports it: ingest
// throughput through the whole pipeline against inserting the same rows
// straight into SQLite, acknowledgement latency, search latency at scale,
// and LoCoMo retrieval recall. `make bench` runs it (cmd/engram-bench).
//
// Every figure comes from real parts: an embedded JetStream in a temp dir,
// the real HTTP API over loopback, a real SQLite file.
package bench
