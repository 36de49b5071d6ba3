// Package dedupe finds near-duplicate memories and plans their merge: the
// weekly job of seed 001 §7.3 (each project/topic partition of at least
// MinPartition entries), with seed 002's rule (similarity above 0.9 is one
// memory; keep the higher importance) and seed 000 §5.7's cost (clustering
// in O(n log n), a model only inside clusters).
//
// Clusters uses MinHash signatures with LSH banding over the shingles of
// memory.Similarity to find candidate pairs, checks each candidate with the
// exact similarity, and joins the pairs above the threshold with a
// union-find, so clusters are transitive and every merge in them is one the
// exact similarity makes. Pairwise is the O(n²) baseline it is measured
// against; Measure runs both on Synthetic data in one process.
//
// Plan turns clusters into merge plans from the memories' current state:
// the member kept is the most important, then the newest, and it takes the
// highest importance of the cluster. A Rewriter may then ask a model for
// the kept memory's merged wording: one call per cluster whose members say
// something differently, none for a singleton or when no model is
// configured. A merge must reach the read model as an event, which replay
// applies without calling the model again.
//
// What it must never do: call a model per pair; merge across partitions;
// change or delete a memory itself (it only plans); put the text of a
// memory in an error; let a failed or unusable model reply lose content
// (the plan keeps the original). It needs no model: with none, plans keep
// the kept memory's wording.
//
// Concurrency: Clusters, Pairwise and Plan are pure functions of their
// arguments, single-threaded and safe to call from many goroutines. A
// Rewriter holds only its *llm.Client, which is safe for concurrent use;
// RewriteAll makes its calls one at a time.
//
// Testing: the package's shingling is held equal to memory.Similarity's on
// a corpus and by a fuzz target (FuzzSimilarity, seed corpus in
// testdata/fuzz); Pairwise is held equal to a reference written with
// memory.Similarity itself, and Clusters to Pairwise on synthetic sets at
// several thresholds. Rewriter runs against llmtest, the in-process
// OpenAI-compatible server. The default run measures 1,000 memories
// (TestMeasure); BenchmarkClusters10k, BenchmarkPairwise10k and
// BenchmarkMeasure10k are the 10,000-memory figures.
package dedupe
