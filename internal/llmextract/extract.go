package llmextract

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/memory"
)

// ErrBadOutput matches (errors.Is) every *OutputError: the model answered,
// but nothing in its reply could be used. Asking again a couple of times
// is worth it; models rarely break the format twice in a row.
var ErrBadOutput = errors.New("llmextract: unusable model output")

// OutputError is a reply that parsed to nothing usable. It carries what
// the call cost, since the tokens were spent all the same.
type OutputError struct {
	Model        string
	Usage        llm.Usage
	FinishReason string // "length" means the reply hit the completion cap
	Err          error  // why Parse refused it
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("llmextract: unusable reply from %s (finish %q): %v", e.Model, e.FinishReason, e.Err)
}

// Unwrap lets errors.Is match both ErrBadOutput and the parse error.
func (e *OutputError) Unwrap() []error { return []error{ErrBadOutput, e.Err} }

// Extractor asks a model for the facts in a batch of turns.
type Extractor struct {
	Client *llm.Client
}

// Result is one extraction.
type Result struct {
	Candidates []memory.Candidate
	// Problems has one line per item of the reply that was dropped or
	// changed; they hold at most a short snippet of any memory.
	Problems []string
	Usage    llm.Usage
	Model    string // as the server reported it, else as configured
	Calls    int    // chat requests made: 0 when no turn had anything to say
	// Omitted lists the Index of each turn left out, oldest first, to keep
	// the prompt under Options.MaxInputTokens. The caller decides whether
	// they need another pass.
	Omitted []int
	// Summary is the model's one-sentence account of the turns, for the
	// day's log (seed 001 §6.4); "" when the reply had none.
	Summary string
}

// Extract makes one chat call in JSON mode and parses the reply.
//
// Errors from the client are returned as they are (*llm.Error), so the
// caller's retry logic can classify them with Temporary. A reply with
// nothing usable in it is an *OutputError (errors.Is ErrBadOutput).
func (x *Extractor) Extract(ctx context.Context, turns []Turn, known []Known, opt Options) (*Result, error) {
	if x.Client == nil {
		return nil, errors.New("llmextract: no LLM client configured")
	}
	msgs, omitted := build(turns, known, opt)
	if msgs == nil {
		return &Result{Model: x.Client.Model()}, nil
	}
	resp, err := x.Client.Chat(ctx, msgs, true)
	if err != nil {
		return nil, err
	}
	model := resp.Model
	if model == "" {
		model = x.Client.Model()
	}
	cands, from, problems, err := parse(resp.Content)
	if err != nil {
		return nil, &OutputError{Model: model, Usage: resp.Usage, FinishReason: resp.FinishReason, Err: err}
	}
	problems = append(problems, checkUpdates(cands, known)...)
	problems = append(problems, saidAt(cands, from, turns, omitted)...)
	return &Result{
		Candidates: cands,
		Problems:   problems,
		Usage:      resp.Usage,
		Model:      model,
		Calls:      1,
		Omitted:    omitted,
		Summary:    summaryIn(resp.Content),
	}, nil
}

// saidAt gives each candidate the time of the turn it came from, which
// decides whether it is the current version of its fact. A candidate that
// names no turn sent, or none at all, was said by the newest turn sent at
// the latest, and is given its time.
func saidAt(cands []memory.Candidate, from []int, turns []Turn, omitted []int) []string {
	sent := make(map[int]time.Time, len(turns))
	var newest time.Time
	for _, t := range turns {
		if slices.Contains(omitted, t.Index) {
			continue
		}
		sent[t.Index] = t.Time
		if t.Time.After(newest) {
			newest = t.Time
		}
	}
	var problems []string
	for i := range cands {
		at, ok := sent[from[i]]
		if !ok && from[i] >= 0 {
			problems = append(problems, fmt.Sprintf("candidate %d: turn %d was not sent; said by the newest turn", i, from[i]))
		}
		if !ok {
			at = newest
		}
		cands[i].SaidAt = at
	}
	return problems
}

// checkUpdates clears Updates on candidates whose subject and predicate
// match no known fact: supersede is keyed on them, so such a claim could
// only replace the wrong memory or nothing.
func checkUpdates(cands []memory.Candidate, known []Known) []string {
	keys := make(map[[2]string]bool, len(known))
	for _, k := range known {
		keys[[2]string{subjectOf(k.Subject), predicateOf(k.Predicate)}] = true
	}
	var problems []string
	for i := range cands {
		c := &cands[i]
		if c.Updates && !keys[[2]string{c.Subject, c.Predicate}] {
			c.Updates = false
			problems = append(problems, fmt.Sprintf("candidate %d: updates no listed fact %s; kept as new", i, describe(c.Subject, c.Predicate, c.Content)))
		}
	}
	return problems
}
