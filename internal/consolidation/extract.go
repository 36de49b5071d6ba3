package consolidation

import (
	"context"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
)

// maxSweepTurns bounds the turns one scheduled extract_now requests; the
// rest wait for the next firing.
const maxSweepTurns = 100000

// extractNow runs extract_now. An auto rule on turn.recorded,
// context.compressing or session.ended is the batcher's to run (it holds
// the waiting turns; see extractreq.BatcherRun), so here it does nothing.
// On a schedule, every turn not extracted yet is requested; on any other
// event naming a session (or a confirmed firing), that session's
// unextracted turns, when it has min_messages turns.
//
// Requests go out as extraction.requested under extractreq.RequestID, the
// batcher's ids: the same turns asked for twice (a replay, a repeated
// firing, the batcher's quiet gap racing a sweep) are one request.
func (c *Consolidator) extractNow(ctx context.Context, r *run, a rules.Action) error {
	if r.trigger != nil && extractreq.BatcherRun(r.rule, r.trigger.Type) {
		return nil
	}
	session := ""
	if r.trigger != nil {
		if session = events.SessionID(r.trigger.Data); session == "" {
			return nil
		}
	}
	if !c.needStore(r, a.Type) {
		return nil
	}
	if err := c.catchUp(ctx, r); err != nil {
		return err
	}
	var turns []memory.Turn
	if r.trigger == nil {
		stored, err := c.Store.Unextracted(ctx, r.at, maxSweepTurns)
		if err != nil {
			return memory.Errorf(memory.EUNAVAILABLE, "read unextracted turns: %v", err)
		}
		turns = stored
	} else {
		stored, err := c.Store.SessionTurns(ctx, r.trigger.Scope, session)
		if err != nil {
			return memory.Errorf(memory.EUNAVAILABLE, "read session turns: %v", err)
		}
		if len(stored) < a.Int("min_messages") {
			return nil
		}
		for _, t := range stored {
			if !t.Extracted {
				turns = append(turns, t)
			}
		}
	}
	out := extractreq.Requests(turns, a.Text("reason"), "", 0, r.at)
	if len(out) == 0 {
		return nil
	}
	return emitErr(c.emit(ctx, out...))
}
