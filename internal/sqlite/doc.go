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
// A memory has two times: said_at, when it was said (its turn's time),
// and created, when engram learned it (its event's time). The versions
// of a fact (a slot, memory.Slot) are ordered by said_at, ties by the
// order the stream applied them, so the one said last is current
// whatever order extraction, retries, redrives or re-extraction put
// them in: a version said before the current one enters the history
// already superseded (place). as_of reads by said_at.
//
// Full-text tables (turns_fts, memories_fts, episodes_fts) are partitioned
// by namespace and user inside their tokens (textseg.Partition), and every
// query also filters by namespace and user in SQL: the first makes a query
// read only its user's postings, the second decides what it may return.
// They are contentless: a row leaves the index by the words it was
// indexed with, made again from the row it indexes (wtx.unindex), and
// secure-delete takes them off the pages at once; a change to what a row
// is indexed with needs a migration that indexes every row again.
//
// Vectors (optional) are stored content-addressed, under the hash of the
// text embedded (table embeddings); SearchVectors joins them to a user's
// active memories by content in an in-memory vector.Index per user and
// model, cached within a byte budget and invalidated by Apply, after its
// commit, whenever the user's memories or embeddings change.
//
// Concurrency: one writer connection (WAL mode) and a separate pool of
// read-only connections, so searches never wait for a write batch. The
// vector cache has its own lock; its generation counters are atomics.
//
// Testing: tests open a real database file in t.TempDir().
package sqlite
