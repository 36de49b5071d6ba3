package extraction

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/episode"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

// The day's log (tier 3, seed 001 §3.2.3) is written as the conversation
// goes: each extraction publishes, per day and channel its turns fall in,
// the part of the day's log they make (seed 001 §6.3 step 5, WriteTier3),
// and daily_compress later turns the whole day into knowledge (§7.2).

// DefaultChannel names the log of turns that say no channel.
const DefaultChannel = "chat"

// Limits of a day's part: a few lines, not a transcript.
const (
	maxPartFacts     = 5
	maxPartFactRunes = 120
	maxPartRunes     = 600
)

// dayKey is one day's log of one channel, in the process's time zone, as
// the consolidator's schedule and the retriever's dates are.
type dayKey struct{ date, channel string }

// dailyParts returns a daily.summarized per day and channel the request's
// turns were said on. Its text is the model's summary (seed 001 §6.4:
// the same call that extracted the facts) for the day most of the turns
// are on, else extractive: what the turns were about, by the same rules as
// an extractive episode, and the facts learned from them. Each part is
// named by its session and first turn, so extracting the same turns again
// rewrites it, and stamped with its last turn's time, which orders the
// day's parts.
func dailyParts(d memory.Delivery, req *events.ExtractionRequested, turns []events.ExtractionTurn,
	cands []memory.Candidate, modelSummary string) []memory.Outgoing {
	byDay := map[dayKey][]events.ExtractionTurn{}
	var keys []dayKey
	for _, t := range turns {
		ch := t.Channel
		if ch == "" {
			ch = DefaultChannel
		}
		k := dayKey{t.Time.Local().Format(time.DateOnly), ch}
		if _, ok := byDay[k]; !ok {
			keys = append(keys, k)
		}
		byDay[k] = append(byDay[k], t)
	}
	main := -1
	for i, k := range keys {
		if main < 0 || len(byDay[k]) > len(byDay[keys[main]]) {
			main = i
		}
	}
	var out []memory.Outgoing
	for i, k := range keys {
		ts := byDay[k]
		text := ""
		if i == main {
			text = modelSummary
		}
		if text == "" {
			text = extractivePart(req.SessionID, ts, cands)
		}
		if text == "" {
			continue
		}
		first, last := ts[0], ts[len(ts)-1]
		text = first.Time.Local().Format("15:04") + " " + text
		part := req.SessionID + "#" + strconv.Itoa(first.TurnIndex)
		tokens := 0
		for _, t := range ts {
			tokens += memory.EstimateTokens(t.Content)
		}
		out = append(out, memory.Outgoing{Type: events.TypeDailySummarized,
			ID: "daily-" + req.RequestID + "-" + k.date + "-" + memory.MemoryID("channel", k.channel, 0), Scope: d.Scope, Agent: d.Agent,
			Time: last.Time, Data: &events.DailySummary{Date: k.date, Channel: k.channel, Summary: chars.ClipHead(text, maxPartRunes),
				RawTokens: tokens, Source: events.SourceExtraction, Part: part}})
	}
	return out
}

// extractivePart is a day's part without a model: the extractive
// episode's summary of the turns, then the facts learned from them, most
// important first.
func extractivePart(session string, turns []events.ExtractionTurn, cands []memory.Candidate) string {
	in := episode.Input{SessionID: session}
	from, to := turns[0].Time, turns[len(turns)-1].Time
	for _, t := range turns {
		et := episode.Turn{Index: t.TurnIndex, Role: t.Role, Content: t.Content, Time: t.Time, Project: t.Project}
		for _, c := range t.ToolCalls {
			et.ToolCalls = append(et.ToolCalls, episode.ToolCall{ID: c.ID, Name: c.Name, Input: string(c.Input)})
		}
		for _, r := range t.ToolResults {
			et.ToolResults = append(et.ToolResults, episode.ToolResult{ToolCallID: r.ToolCallID, Content: r.Content, IsError: r.IsError})
		}
		in.Turns = append(in.Turns, et)
	}
	var parts []string
	if s := strings.TrimSpace(episode.Extractive(in).Summary); s != "" && !strings.HasSuffix(s, " turns") {
		parts = append(parts, s)
	}
	facts := slices.Clone(cands)
	slices.SortStableFunc(facts, func(a, b memory.Candidate) int { return cmp.Compare(b.Importance, a.Importance) })
	var learned []string
	for _, c := range facts {
		if len(learned) == maxPartFacts {
			break
		}
		if c.SaidAt.Before(from) || c.SaidAt.After(to) || memory.Route(c.Confidence) == memory.StatusRejected {
			continue
		}
		f := chars.ClipHead(strings.TrimRight(strings.TrimSpace(c.Content), "。.!！"), maxPartFactRunes)
		if f != "" && !slices.Contains(learned, f) && (len(parts) == 0 || !saysMostOf(parts[0], f)) {
			learned = append(learned, f)
		}
	}
	if len(learned) > 0 {
		sep := "; "
		if zh(strings.Join(learned, "")) {
			sep = "；"
		}
		parts = append(parts, "("+strings.Join(learned, sep)+")")
	}
	return strings.Join(parts, " ")
}

// saysMostOf reports whether text already has most of a fact's words, as
// when the fact was taken from the sentence the summary quotes.
func saysMostOf(text, fact string) bool {
	have := map[string]bool{}
	for _, t := range textseg.Tokens(text) {
		have[t] = true
	}
	toks := textseg.Tokens(fact)
	n := 0
	for _, t := range toks {
		if have[t] {
			n++
		}
	}
	return len(toks) > 0 && n*10 >= len(toks)*7
}

// zh reports whether a text is mostly Chinese.
func zh(s string) bool {
	han, other := 0, 0
	for _, r := range s {
		switch {
		case r >= 0x4e00 && r <= 0x9fff:
			han++
		case r > ' ' && r < 0x80:
			other++
		}
	}
	return han*3 > other
}
