package sqlite

import "github.com/engramhq/engram/internal/memory"

// applyConsolidation applies the consolidation event types (episodes,
// scratchpad, profile, daily summaries, merges, archives, accesses); it
// reports whether it knew the event's type.
func applyConsolidation(w *wtx, a memory.Applied) (handled bool, err error) {
	return false, nil
}
