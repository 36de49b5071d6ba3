// Package locomo loads the LoCoMo long-conversation benchmark (Maharana et
// al., 2024; locomo10.json from snap-research/LoCoMo) and scores turn-level
// retrieval against it with the protocol of the paper's Table 3: one index per
// conversation; for each question, recall@k is the fraction of its evidence
// dia ids found among the first k retrieved turns, averaged over questions,
// reported per conversation, per category and overall.
//
// engram's benchmarks ingest each Conversation's turns into engram and answer
// every QA through a Retriever backed by engram's search; BM25Baseline is the
// reference point that checks this package's loader and scorer against the
// published figures.
//
// The data are imperfect and Load says exactly what it changed: malformed
// evidence ids are rewritten ("D8:6; D9:17" → D8:6, D9:17; "D:11:26" → D11:26;
// "D30:05" → D30:5), ids that name no turn of their conversation are dropped,
// and both are recorded in Dataset.Fixes and counted in Dataset.Stats.
// Questions left with no evidence are skipped by Evaluate and counted, never
// scored as hits or misses.
//
// What it must never do: ship or embed the dataset (CC BY-NC 4.0; it is read
// from a path at run time), import anything of engram's (it sits outside the
// system it measures), or let a retriever see a question's answer or evidence
// through anything but the QA value it is handed (a Retriever that reads them
// is cheating; the package cannot stop it, so do not write one).
//
// Concurrency: a Dataset is read-only after Load and safe to share. Evaluate
// calls the Retriever from one goroutine, question by question. The Retriever
// from BM25Baseline is safe for concurrent use.
//
// Testing: unit tests run on testdata/mini.json, a hand-written file in the
// real shape with the real kinds of malformed ids, with hand-computed answers.
// TestBM25BaselineFullDataset checks the baseline on the real file against the
// published recall figures and is skipped when the file is absent (set LOCOMO
// to its path). The evidence-id parser has a fuzz target whose seed corpus
// lives in testdata/fuzz.
package locomo
