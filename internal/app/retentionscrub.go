package app

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/episode"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
)

// scrub takes the words of a user's expiring turns out of what engram
// wrote from them word for word (episode.Corpus): the episodes of their
// sessions, the scratchpad engram wrote, and their days' logs. Each one
// that changes is published again without them (the same episode, the
// scratchpad, the same part of the day, under ids of the expiry), then
// the messages of the versions it replaces are erased from the stream,
// so the words are gone from it too and a rebuild reaches what the live
// read model holds. A scratchpad a person wrote is theirs and is left
// alone; so are memories, which are what retention keeps.
func (r *retainer) scrub(ctx context.Context, x sqlite.Expiry, now time.Time) ([]events.EventRef, error) {
	a := r.a
	turns, err := a.store.ExpiringTurns(ctx, x.Scope, x.Before)
	if err != nil || len(turns) == 0 {
		return nil, err
	}
	var texts, sessions, dates []string
	for _, t := range turns {
		texts = append(texts, t.Content, t.ToolCalls, t.ToolResults)
		if !slices.Contains(sessions, t.SessionID) {
			sessions = append(sessions, t.SessionID)
		}
		if d := t.Time.Local().Format(time.DateOnly); !slices.Contains(dates, d) {
			dates = append(dates, d)
		}
	}
	corpus := episode.NewCorpus(texts)
	tag := "scrub-" + strconv.FormatUint(x.Before, 10) + "-"
	var out []memory.Outgoing
	replacedEpisodes := map[string]bool{}
	for _, s := range sessions {
		eps, err := a.store.Episodes(ctx, x.Scope, s, 1000)
		if err != nil {
			return nil, fmt.Errorf("retention: the episodes to scrub: %w", err)
		}
		for _, ep := range eps {
			clean, changed := corpus.ScrubEpisode(ep)
			if !changed {
				continue
			}
			replacedEpisodes[ep.ID] = true
			out = append(out, memory.Outgoing{Type: events.TypeEpisodeBuilt, ID: tag + ep.ID, Scope: x.Scope, Time: now,
				Data: episodeData(clean)})
		}
	}
	padReplaced := false
	pad, err := a.store.Scratchpad(ctx, x.Scope)
	if err != nil {
		return nil, fmt.Errorf("retention: the scratchpad to scrub: %w", err)
	}
	if pad.Source == events.SourceEpisode {
		if clean, changed := corpus.ScrubScratchpad(pad); changed {
			padReplaced = true
			out = append(out, memory.Outgoing{Type: events.TypeScratchpadUpdated, ID: tag + "scratchpad", Scope: x.Scope, Time: now,
				Data: &events.Scratchpad{Content: clean.Content, ActiveProjects: clean.ActiveProjects, CurrentFocus: clean.CurrentFocus,
					OpenQuestions: clean.OpenQuestions, NextSteps: clean.NextSteps, Source: clean.Source, EpisodeID: clean.EpisodeID}})
		}
	}
	rows, err := a.store.DailyRows(ctx, x.Scope, dates)
	if err != nil {
		return nil, fmt.Errorf("retention: the days to scrub: %w", err)
	}
	replacedDays := map[string]bool{}
	var wholes []memory.Outgoing
	for _, d := range rows {
		if d.Source == events.SourceMigration {
			continue // written before engram, not from these turns
		}
		clean, changed := corpus.Scrub(d.Summary)
		if strings.TrimSpace(clean) == "" {
			clean = fmt.Sprintf("(%d tokens of conversation)", d.RawTokens)
		}
		o := memory.Outgoing{Type: events.TypeDailySummarized, ID: tag + "day-" + memory.MemoryID(d.Date, d.Channel+"\x00"+d.Part, 0),
			Scope: x.Scope, Time: now, Data: &events.DailySummary{Date: d.Date, Channel: d.Channel, Summary: clean,
				RawTokens: d.RawTokens, Source: d.Source, Part: d.Part}}
		switch {
		case d.Part == "":
			// The whole day is published again after its parts, changed or
			// not, when any of it changed: a rebuild then marks the new
			// parts compressed as the live read model has them.
			wholes = append(wholes, o)
			if changed {
				replacedDays[dayKey(d)] = true
			}
		case changed:
			replacedDays[dayKey(d)] = true
			out = append(out, o)
		}
	}
	for _, w := range wholes {
		if d := w.Data.(*events.DailySummary); partsOf(replacedDays, d.Date, d.Channel) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	head, err := a.StreamHead(ctx)
	if err != nil {
		return nil, fmt.Errorf("retention: %w", err)
	}
	if err := a.emitter(stream.RoleConsolidator, retentionSource)(ctx, out...); err != nil {
		return nil, fmt.Errorf("retention: publish what is left of the derived records: %w", err)
	}
	var erased []events.EventRef
	erase := func(typ string, which func(memory.Applied) bool) error {
		refs, err := stream.EraseReplaced(ctx, a.op.js, x.Scope.Namespace, x.Scope.User, typ, head+1, a.Config.HTTP.MaxEventBytes, which)
		erased = append(erased, refs...)
		return err
	}
	err = erase(events.TypeEpisodeBuilt, func(m memory.Applied) bool {
		ep, ok := m.Data.(*events.Episode)
		return ok && replacedEpisodes[ep.ID]
	})
	if err == nil && padReplaced {
		err = erase(events.TypeScratchpadUpdated, func(memory.Applied) bool { return true })
	}
	if err == nil {
		err = erase(events.TypeDailySummarized, func(m memory.Applied) bool {
			d, ok := m.Data.(*events.DailySummary)
			return ok && d.Source != events.SourceMigration && replacedDays[dayKey(memory.DailySummary{Date: d.Date, Channel: d.Channel, Part: d.Part})]
		})
	}
	return erased[:min(len(erased), events.MaxMemoryBatch)], err
}

// dayKey names one row of a day's log.
func dayKey(d memory.DailySummary) string { return d.Date + "\x00" + d.Channel + "\x00" + d.Part }

// partsOf reports whether any part of a day's channel was replaced.
func partsOf(replaced map[string]bool, date, channel string) bool {
	prefix := date + "\x00" + channel + "\x00"
	for k := range replaced {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// episodeData is an episode as episode.built carries it.
func episodeData(ep memory.Episode) *events.Episode {
	d := &events.Episode{ID: ep.ID, SessionID: ep.SessionID, Summary: ep.Summary, Goal: ep.Goal, Outcome: ep.Outcome,
		Started: ep.Started, Ended: ep.Ended, Entities: ep.Entities, Tools: ep.Tools, LinkedMemories: ep.LinkedMemories,
		Importance: ep.Importance, Source: ep.Source, Turns: ep.Turns}
	for _, n := range ep.Actions {
		d.Actions = append(d.Actions, events.ActionNode{Tool: n.Tool, Params: n.Params, Result: n.Result,
			Success: n.Success, Error: n.Error, Decision: n.Decision, Turn: n.Turn})
	}
	return d
}
