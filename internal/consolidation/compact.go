package consolidation

import (
	"context"
	"slices"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/episode"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"go.uber.org/zap"
)

// compact runs compact (seed 002 §4.2, ShortTermMemory._compact): a
// session holding more than max_messages turns that no compression
// episode covers has the older half of them told as one — by the model
// when one is configured, extractively otherwise — so the session window
// shows their summary, merged with the ones before, and only the newer
// half in full, without the agent sending context.compressing. What is
// left over max_messages after that is halved again. The episode is named
// by its turns, so running it twice (the rule fires on every extraction)
// builds it once.
func (c *Consolidator) compact(ctx context.Context, r *run, a rules.Action) error {
	if r.trigger == nil {
		return memory.Errorf(memory.EINVALID, "compact needs an event naming a session; a scheduled rule has none")
	}
	session := events.SessionID(r.trigger.Data)
	if session == "" || !c.needStore(r, a.Type) {
		return nil
	}
	if err := c.catchUp(ctx, r); err != nil {
		return err
	}
	scope := r.trigger.Scope
	stored, err := c.Store.SessionTurns(ctx, scope, session)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read session turns: %v", err)
	}
	limit := a.Int("max_messages")
	if len(stored) <= limit {
		return nil
	}
	eps, err := c.Store.Episodes(ctx, scope, session, 1000)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read the session's episodes: %v", err)
	}
	covered := map[int]bool{}
	for _, ep := range eps {
		if ep.Source == events.SourceCompression {
			for _, i := range ep.Turns {
				covered[i] = true
			}
		}
	}
	open := slices.DeleteFunc(slices.Clone(stored), func(t memory.Turn) bool { return covered[t.TurnIndex] })
	slices.SortStableFunc(open, func(x, y memory.Turn) int { return x.TurnIndex - y.TurnIndex })
	for len(open) > limit {
		half := open[:len(open)/2]
		turns := make([]episode.Turn, 0, len(half))
		for _, t := range half {
			turns = append(turns, c.episodeTurn(t.TurnIndex, t.Role, t.Content, t.Project, t.Time,
				decodeList[events.ToolCall](t.ToolCalls), decodeList[events.ToolResult](t.ToolResults)))
		}
		c.Log.Debug("session compacted", zap.String(fieldUser, scopeKey(scope)), zap.Int("turns", len(half)))
		if err := c.emitEpisode(ctx, r, scope, episode.Input{SessionID: session, Turns: turns,
			Source: events.SourceCompression}, true); err != nil {
			return err
		}
		open = open[len(open)/2:]
	}
	return nil
}
