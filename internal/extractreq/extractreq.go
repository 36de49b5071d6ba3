// Package extractreq is what the extraction batcher and the consolidator
// share about extraction requests, so neither worker imports the other:
// the request id, the requests for stored turns, which extract_now rules
// the batcher runs, and the event the rules see.
//
// Everything here is a pure function of its arguments.
package extractreq

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
)

// DefaultMaxTurns bounds one request; a longer batch is split.
const DefaultMaxTurns = 200

// RequestID names a request by what it covers, so the same turns asked
// for twice (a restart, a sweep racing a quiet gap) are one request.
func RequestID(scope memory.Scope, session string, turns []events.ExtractionTurn) string {
	idx := make([]int, len(turns))
	for i, t := range turns {
		idx[i] = t.TurnIndex
	}
	b, _ := json.Marshal(idx)
	h := sha256.Sum256([]byte(scope.Namespace + "\x00" + scope.User + "\x00" + session + "\x00" + string(b)))
	return "req-" + hex.EncodeToString(h[:12])
}

// ReadingID names the rules' reading of one turn (a memory.extracted
// with pass "turn") by the turn's scope, session, index, role and what it
// says, so every worker that reads the same turn — the batcher at its
// arrival, the extractor in its batch, the edge waiting for it — names
// one event, and JetStream's duplicate window and the read model's
// applied table keep one. A turn recorded again with other words is
// another reading.
func ReadingID(scope memory.Scope, session string, t events.ExtractionTurn) string {
	calls := []byte{}
	if len(t.ToolCalls) > 0 {
		calls, _ = json.Marshal(t.ToolCalls)
	}
	h := sha256.New()
	for _, part := range []string{scope.Namespace, scope.User, session, strconv.Itoa(t.TurnIndex), t.Role, t.Content, string(calls)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "read-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// ReadingEventPrefix begins the event id of every turn reading (the
// memory.extracted extraction.ReadingEventID names): the read model knows
// a reading's memories by it.
const ReadingEventPrefix = "extracted-read-"

// ReadsAtOnce reports whether the rules read a turn as it arrives: the
// user's own words, which is what an agent asks about next.
func ReadsAtOnce(role string) bool { return role == "user" }

// Turn is a stored turn as an extraction request carries it.
func Turn(t memory.Turn) events.ExtractionTurn {
	var calls []events.ToolCall
	var results []events.ToolResult
	_ = json.Unmarshal([]byte(orNull(t.ToolCalls)), &calls)
	_ = json.Unmarshal([]byte(orNull(t.ToolResults)), &results)
	return events.ExtractionTurn{TurnIndex: t.TurnIndex, Role: t.Role,
		Content: t.Content, ToolCalls: calls, ToolResults: results, Time: t.Time, Project: t.Project, Channel: t.Channel}
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// Requests is the extraction requests for stored turns: one per session
// and maxTurns turns (DefaultMaxTurns when 0), in turn order, each named
// idPrefix + RequestID. With no prefix the ids are the batcher's, so the
// same turns are asked for once whoever asks.
func Requests(turns []memory.Turn, reason, idPrefix string, maxTurns int, now time.Time) []memory.Outgoing {
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	type key struct {
		scope   memory.Scope
		session string
	}
	bySession := map[key][]events.ExtractionTurn{}
	agents := map[key]string{}
	var order []key
	for _, t := range turns {
		k := key{t.Scope, t.SessionID}
		if _, ok := bySession[k]; !ok {
			order = append(order, k)
		}
		bySession[k] = append(bySession[k], Turn(t))
		agents[k] = t.Agent
	}
	var out []memory.Outgoing
	for _, k := range order {
		ts := bySession[k]
		sort.Slice(ts, func(i, j int) bool { return ts[i].TurnIndex < ts[j].TurnIndex })
		for start := 0; start < len(ts); start += maxTurns {
			chunk := ts[start:min(start+maxTurns, len(ts))]
			req := &events.ExtractionRequested{RequestID: idPrefix + RequestID(k.scope, k.session, chunk),
				SessionID: k.session, Reason: reason, Turns: chunk}
			out = append(out, memory.Outgoing{Type: events.TypeExtractionRequested, ID: req.RequestID,
				Scope: k.scope, Agent: agents[k], Time: now.UTC(), Data: req})
		}
	}
	return out
}

// BatcherRun reports whether the batcher, not the consolidator, runs a
// rule's extract_now: an auto rule on an event the batcher watches, whose
// waiting turns it holds. The consolidator runs the others (a schedule, a
// confirmed firing, a rule on any other event).
func BatcherRun(r rules.Rule, eventType string) bool {
	if r.Mode != rules.ModeAuto {
		return false
	}
	switch eventType {
	case events.TypeTurnRecorded, events.TypeContextCompressing, events.TypeSessionEnded:
		return true
	}
	return false
}

// RuleEvent is what the rules see of an applied event: its attributes and
// its data as JSON.
func RuleEvent(a memory.Applied) (rules.Event, error) {
	attrs := map[string]any{"specversion": "1.0", "id": a.ID, "source": a.Source, "type": a.Type,
		"namespace": a.Scope.Namespace, "user": a.Scope.User}
	if !a.Time.IsZero() {
		attrs["time"] = a.Time.UTC().Format(time.RFC3339Nano)
	}
	if a.Subject != "" {
		attrs["subject"] = a.Subject
	}
	if a.Agent != "" {
		attrs["agent"] = a.Agent
	}
	if a.Data == nil {
		return rules.NewEvent(attrs, nil)
	}
	// Encoded only when a rule's condition looks under data: most
	// conditions name the type alone, and this runs for every event.
	return rules.NewEventFunc(attrs, func() ([]byte, error) { return json.Marshal(a.Data) }), nil
}
