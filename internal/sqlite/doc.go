// Package sqlite is engram's read model: a projection of the MEMORY stream
// into SQLite (modernc.org/sqlite, pure Go), and the queries served from it.
//
// It is the only package that imports the SQLite driver. The projector
// owns every write: Apply applies events in stream order, idempotently on
// (source, id), in one transaction per batch that also records the stream
// position, so a crash never leaves the read model between two events.
// Nothing here may depend on the wall clock or on randomness: a read model
// rebuilt from the stream must equal the live one, row for row (Checksum).
//
// Concurrency: one writer connection (WAL mode) and a separate pool of
// read-only connections, so searches never wait for a write batch.
//
// Testing: tests open a real database file in t.TempDir().
package sqlite
