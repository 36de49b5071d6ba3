package app

import (
	"context"

	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/stream"
)

// confirmQueue is consolidation.PendingStore on the confirm queue's
// bucket.
type confirmQueue = stream.KVQueue[consolidation.Pending]

var _ consolidation.PendingStore = confirmQueue{}

// openConfirmQueue binds the confirm queue's bucket (stream.ConfirmBucket,
// the operator's: SetupStreams).
func (a *App) openConfirmQueue(ctx context.Context) (confirmQueue, error) {
	return stream.OpenKVQueue(ctx, a.bus(stream.RoleConsolidator).js, stream.ConfirmBucket,
		func(p consolidation.Pending) string { return p.ID },
		func(p, q consolidation.Pending) bool { return p.Time.Before(q.Time) })
}
