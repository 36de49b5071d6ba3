package extraction

import (
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
)

// matching is the extract_now actions of the auto rules an event fires,
// in set order; nil when the event cannot be read.
func (b *Batcher) matching(a memory.Applied) []rules.Action {
	ev, err := extractreq.RuleEvent(a)
	if err != nil {
		return nil
	}
	var out []rules.Action
	for _, r := range b.Rules().Match(ev) {
		if !extractreq.BatcherRun(r, a.Type) {
			continue
		}
		for _, act := range r.Do {
			if act.Type == rules.ActExtractNow {
				out = append(out, act)
			}
		}
	}
	return out
}

// thresholds are the quiet gap and token cap in force for a recorded
// turn: cfg's without rules; with rules, the smallest each of the
// extract_now rules the turn fires gives, 0 (off) when none gives one.
func (b *Batcher) thresholds(a memory.Applied) (gap time.Duration, tokenCap int) {
	if b.Rules == nil {
		return b.cfg.QuietGap, b.cfg.TokenCap
	}
	if b.Rules() == nil {
		return 0, 0
	}
	for _, act := range b.matching(a) {
		if g := act.Duration("quiet_gap"); g > 0 && (gap == 0 || g < gap) {
			gap = g
		}
		if c := act.Int("token_cap"); c > 0 && (tokenCap == 0 || c < tokenCap) {
			tokenCap = c
		}
	}
	return gap, tokenCap
}

// extractNow reports whether a rule extracts a session at once on a
// (compressing or ended) event, and for what reason: the first extract_now
// the event fires whose min_messages the session reaches. A session's
// messages are the event's message_count when it gives one, else its
// turns waiting here. Without rules, always, for fallback.
func (b *Batcher) extractNow(a memory.Applied, key sessionKey, messages int, fallback string) (string, bool) {
	if b.Rules == nil {
		return fallback, true
	}
	if b.Rules() == nil {
		return "", false
	}
	if messages <= 0 {
		b.mu.Lock()
		if p := b.sessions[key]; p != nil {
			messages = len(p.turns)
		}
		b.mu.Unlock()
	}
	for _, act := range b.matching(a) {
		if act.Int("min_messages") <= messages {
			return act.Text("reason"), true
		}
	}
	return "", false
}

// asTurn is a turn of a context.compressing event as if it had been
// recorded, for the rules on turn.recorded.
func asTurn(a memory.Applied, t *events.TurnRecorded) memory.Applied {
	a.Type = events.TypeTurnRecorded
	a.Data = t
	return a
}

// recoveredTurn is a turn read back from the read model as the event
// that recorded it, for the rules on turn.recorded.
func recoveredTurn(t memory.Turn, et events.ExtractionTurn) memory.Applied {
	return memory.Applied{Envelope: memory.Envelope{Scope: t.Scope, Agent: t.Agent, Type: events.TypeTurnRecorded,
		ID: t.EventID, Source: t.EventSource, Time: t.Time},
		Data: &events.TurnRecorded{SessionID: t.SessionID, TurnIndex: t.TurnIndex, Role: t.Role, Content: t.Content,
			ToolCalls: et.ToolCalls, ToolResults: et.ToolResults, Project: t.Project, Channel: t.Channel}}
}
