// Package extractbench measures what engram writes down: it runs an
// extractor over the labelled turns in testdata/extract and reports
// precision and recall per language and kind, on the dev split the rules
// are tuned on and on the held-out test split that is only reported.
//
// Matching is defined in match.go and is the whole contract of the
// figures: a candidate matches a gold memory when kind and predicate are
// equal, the subjects are equal once normalised, and the candidate's
// content holds the gold value (see ValueMatch). Each gold memory is
// matched by at most one candidate and each candidate matches at most one
// gold memory.
//
// It must never change what it measures: the rule extractor is called as
// engram calls it, and the LLM path goes through llmextract with the
// prompt engram sends.
package extractbench
