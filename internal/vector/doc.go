// Package vector is the in-process half of engram's optional semantic
// recall: the blob a vector is stored as, normalisation and dot products,
// a per-scope brute-force index, and the two ways to combine its results
// with full-text search. Embeddings come from internal/llm (Client.Embed);
// the blobs live in SQLite; this package does no I/O.
//
//   - Encode and Decode turn a []float32 into a blob and back: a version
//     byte (1), the dimension count as a little-endian uint16, then
//     little-endian float32s, 3 + 4×dims bytes. Decode checks the length
//     against the header and refuses NaN and ±Inf; Encode refuses what
//     Decode would, so every stored blob loads.
//   - Normalize and Dot: for unit vectors the dot product is the cosine.
//   - Index holds one scope's (one user's) vectors in memory; Search scores
//     every one and keeps the top k in a min-heap. Index.Scores gives the
//     cosine of chosen ids, to score keyword hits semantically too.
//   - RRF fuses ranked lists by reciprocal rank fusion (issue 4, item 8:
//     vector ranks with BM25 ranks); it needs ranks only. Hybrid is seed
//     004's rerank, 0.55 semantic + 0.30 keyword + 0.15 freshness, on scores
//     brought into [0, 1]; its documentation says how each is normalised.
//
// # Up to what size brute force holds
//
// BenchmarkSearch, one top-10 query, in CPU time on the 2-core AMD EPYC
// development machine (go test -run '^$' -bench Search ./internal/vector).
// The machine was shared and ran at a load of 10-16 while measuring, so
// wall time was 2-8× these figures and CPU time is what repeats:
//
//	vectors   256 dims   768 dims   1536 dims
//	1k        0.10 ms    0.33 ms    0.70 ms
//	10k       1.1 ms     3.3 ms     6.8 ms
//	100k      11.8 ms    31.6 ms    74 ms
//
// The cost is linear, 0.41-0.48 ns per vector component; even 100k × 1536
// (600 MB) stays bound by arithmetic, not memory bandwidth. So one query
// stays under 5 ms up to about 11M components (45k vectors of 256
// dimensions, 15k of 768, 7.5k of 1,536) and under the 2 ms vectors can
// take of the 5 ms /v1/context goal up to about 5M, which is what a new
// Index is capped at (DefaultComponents): 19,531 vectors of 256
// dimensions, 6,510 of 768, 3,255 of 1,536. A user's tier-2 memories fit at
// up to 768 dimensions (seed 001 expects about 2,000, capped at 5,000);
// seed 002's cap of 10,000 memories, or every turn of a long-lived user,
// does not, and past the cap the caller relies on full-text search.
//
// Memory (BenchmarkMemory, 20k vectors, ids of 26 bytes): 4 bytes a
// dimension plus about 95 bytes (the id, its slot in the id list and its map
// entry), plus up to one 256-vector block of slack: 1,130 B a vector at 256
// dimensions, 3,201 at 768, 6,308 at 1,536. Index.Bytes estimates it to
// within 10 bytes a vector.
//
// # Why float32, not int8
//
// BenchmarkInt8 quantises each normalised vector to int8 with its own scale
// (10k vectors, top 10). It saves 4× the memory but, in Go without SIMD,
// runs 2.1-2.4× slower than the float32 loop (sign-extending byte loads and
// integer multiplies, one component at a time), and loses recall: recall@10
// against exact search was 0.994 (768 dims) and 0.984 (1,536) on uniform
// random vectors, 0.976 and 0.972 on clustered ones. It is not worth it. The
// lever if brute force must go further is SIMD: an AVX-512 dot product with
// the experimental simd/archsimd package (GOEXPERIMENT=simd, Go 1.26) ran at
// 0.14-0.23 ns a component, 2-3× faster, measured outside this package; it
// is not in default builds yet.
//
// # What it must never do
//
// Mix scopes: an Index belongs to one user, and the caller keeps one per
// user so that a search never sees another user's vectors. Panic on stored
// or outside data: Decode, Add, Search and Scores return errors (ErrCorrupt,
// ErrInvalid, ErrDims, ErrFull); only a programmer's error panics (NewIndex
// with impossible dimensions, Dot of different lengths). Let NaN or a zero
// vector into an index, where it would score NaN or 0 against everything.
// Depend on anything but the standard library, do I/O or log.
//
// # Concurrency
//
// An Index is safe for concurrent use: Searches share a read lock, Add and
// Remove take the write lock and cost one vector copy each (the index grows
// by blocks, so no Add copies the whole index while readers wait). One
// Search runs on one goroutine. Encode, Decode, Normalize, Dot, RRF and
// Hybrid are pure functions.
//
// # Testing
//
// Search is compared with a naive score-everything-and-sort on random data,
// before and after removals and across block boundaries; ties must come out
// the same, by id, whatever the order vectors were added in; readers run
// against a writer under -race. RRF and Hybrid are checked on hand-computed
// examples. FuzzDecode (seed corpus in testdata/fuzz) checks that Decode
// never panics and that any blob it accepts encodes back to the same bytes.
// Benchmarks report CPU time per query next to wall time, since the
// development machine is shared. TestImportsOnlyStandardLibrary keeps the
// package free of dependencies.
package vector
