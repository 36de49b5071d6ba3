package consolidation

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/episode"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"go.uber.org/zap"
)

// maxSweepSessions bounds the sessions one sweep tells per user; the rest
// wait for the next.
const maxSweepSessions = 200

// buildEpisodes runs build_episode: on session.ended (or any event naming
// a session) the session's stored turns; on context.compressing the turns
// in the event; on a schedule every quiet session that has no episode of
// its own yet.
func (c *Consolidator) buildEpisodes(ctx context.Context, r *run, a rules.Action) error {
	source := a.Text("source")
	if r.trigger == nil {
		return c.perScope(ctx, r, a, func(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
			sessions, err := c.Store.UnconsolidatedSessions(ctx, scope, r.at.Add(-c.SweepQuiet), MinSessionTurns, maxSweepSessions)
			if err != nil {
				return memory.Errorf(memory.EUNAVAILABLE, "sessions to sweep: %v", err)
			}
			for _, s := range sessions {
				if err := c.sessionEpisode(ctx, r, scope, s, source, ""); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if d, ok := r.trigger.Data.(*events.ContextCompressing); ok {
		return c.compressionEpisode(ctx, r, d, source)
	}
	session := events.SessionID(r.trigger.Data)
	if session == "" {
		c.Log.Debug("build_episode: the event names no session", zap.String(fieldRule, r.rule.Name))
		return nil
	}
	if !c.needStore(r, a.Type) {
		return nil
	}
	if err := c.catchUp(ctx, r); err != nil {
		return err
	}
	return c.sessionEpisode(ctx, r, r.trigger.Scope, session, source, "")
}

// sessionEpisode tells a session's stored turns as one episode.
func (c *Consolidator) sessionEpisode(ctx context.Context, r *run, scope memory.Scope, session, source, summary string) error {
	stored, err := c.Store.SessionTurns(ctx, scope, session)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read session turns: %v", err)
	}
	if len(stored) == 0 {
		return nil
	}
	turns := make([]episode.Turn, 0, len(stored))
	for _, t := range stored {
		turns = append(turns, c.episodeTurn(t.TurnIndex, t.Role, t.Content, t.Project, t.Time,
			decodeList[events.ToolCall](t.ToolCalls), decodeList[events.ToolResult](t.ToolResults)))
	}
	linked, err := c.Store.SessionMemoryIDs(ctx, scope, session, episode.MaxLinked)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read session memories: %v", err)
	}
	return c.emitEpisode(ctx, r, scope, episode.Input{SessionID: session, Turns: turns, Summary: summary,
		Source: source, Memories: linked}, true)
}

// compressionEpisode keeps what leaves the agent's window: the turns come
// in the event. With the agent's own summary no model is asked (seed 000
// §7.2: the compression summary is reused, not paid for twice).
func (c *Consolidator) compressionEpisode(ctx context.Context, r *run, d *events.ContextCompressing, source string) error {
	turns := make([]episode.Turn, 0, len(d.Turns))
	for _, t := range d.Turns {
		turns = append(turns, c.episodeTurn(t.TurnIndex, t.Role, t.Content, t.Project, r.at, t.ToolCalls, t.ToolResults))
	}
	return c.emitEpisode(ctx, r, r.trigger.Scope, episode.Input{SessionID: d.SessionID, Turns: turns,
		Summary: c.mask(d.Summary), Source: source}, strings.TrimSpace(d.Summary) == "")
}

func (c *Consolidator) episodeTurn(index int, role, content, project string, at time.Time, calls []events.ToolCall, results []events.ToolResult) episode.Turn {
	t := episode.Turn{Index: index, Role: role, Content: c.mask(content), Time: at, Project: project}
	for _, tc := range calls {
		t.ToolCalls = append(t.ToolCalls, episode.ToolCall{ID: tc.ID, Name: tc.Name, Input: c.mask(string(tc.Input))})
	}
	for _, tr := range results {
		t.ToolResults = append(t.ToolResults, episode.ToolResult{ToolCallID: tr.ToolCallID, Content: c.mask(tr.Content), IsError: tr.IsError})
	}
	return t
}

func (c *Consolidator) mask(s string) string {
	if c.Mask == nil || s == "" {
		return s
	}
	out, _ := c.Mask.Mask(s)
	return out
}

func decodeList[T any](raw string) []T {
	if raw == "" {
		return nil
	}
	var out []T
	_ = json.Unmarshal([]byte(raw), &out)
	return out
}

// emitEpisode builds the episode (with the model when one is configured
// and useModel holds, extractively otherwise or when the model fails) and
// publishes it as episode.built.
func (c *Consolidator) emitEpisode(ctx context.Context, r *run, scope memory.Scope, in episode.Input, useModel bool) error {
	if n := len(in.Turns); n > events.MaxEpisodeTurns {
		// The newest turns: an episode.built event covers at most this many.
		slices.SortStableFunc(in.Turns, func(a, b episode.Turn) int { return a.Index - b.Index })
		in.Turns = in.Turns[n-events.MaxEpisodeTurns:]
	}
	var ep memory.Episode
	built := false
	if useModel && c.Episodes != nil && c.Episodes.Client != nil {
		var err error
		if ep, _, err = c.Episodes.Build(ctx, in); err == nil {
			built = true
		} else if ctx.Err() != nil {
			return ctx.Err()
		} else {
			c.Log.Warn("model episode failed; written extractively", zap.String(fieldUser, scopeKey(scope)), zap.Error(err))
		}
	}
	if !built {
		ep = episode.Extractive(in)
	}
	if len(ep.Turns) == 0 {
		return nil
	}
	ep.Namespace, ep.User, ep.SessionID = scope.Namespace, scope.User, in.SessionID
	if ep.ID == "" {
		ep.ID = episode.ID(in.SessionID, ep.Turns)
	}
	if ep.Started.IsZero() {
		ep.Started = r.at
	}
	if ep.Ended.IsZero() || ep.Ended.Before(ep.Started) {
		ep.Ended = ep.Started
	}
	data := &events.Episode{ID: ep.ID, SessionID: ep.SessionID, Summary: ep.Summary, Goal: ep.Goal, Outcome: ep.Outcome,
		Started: ep.Started, Ended: ep.Ended, Entities: ep.Entities, Tools: ep.Tools, LinkedMemories: ep.LinkedMemories,
		Importance: ep.Importance, Source: ep.Source, Turns: ep.Turns}
	if data.Summary == "" {
		// An episode must say something; a session of tool noise is told
		// by its length.
		data.Summary = "(no text)"
		ep.Summary = data.Summary
	}
	for _, n := range ep.Actions {
		data.Actions = append(data.Actions, events.ActionNode{Tool: n.Tool, Params: n.Params, Result: n.Result,
			Success: n.Success, Error: n.Error, Decision: n.Decision, Turn: n.Turn})
	}
	if err := c.emit(ctx, memory.Outgoing{Type: events.TypeEpisodeBuilt, ID: "episode-" + scopeKey(scope) + "-" + ep.ID,
		Scope: scope, Agent: agentOf(r), Time: r.at, Data: data}); err != nil {
		return emitErr(err)
	}
	r.episodes[scope] = append(r.episodes[scope], ep)
	return nil
}

func agentOf(r *run) string {
	if r.trigger != nil {
		return r.trigger.Agent
	}
	return ""
}

// emitErr sorts a publish failure: an event the contract refuses is a bug
// no retry fixes; anything else (the stream unavailable) is retried.
func emitErr(err error) error {
	var fe *events.FieldError
	if errors.As(err, &fe) {
		return memory.Errorf(memory.EINVALID, "%v", err)
	}
	return err
}

// updateScratchpad runs update_scratchpad: each episode this firing built
// is folded into its user's scratchpad, in order; with none, the trigger's
// session's latest episode is.
func (c *Consolidator) updateScratchpad(ctx context.Context, r *run, a rules.Action) error {
	if len(r.episodes) == 0 && r.trigger != nil {
		session := events.SessionID(r.trigger.Data)
		if session == "" || !c.needStore(r, a.Type) {
			return nil
		}
		if err := c.catchUp(ctx, r); err != nil {
			return err
		}
		eps, err := c.Store.Episodes(ctx, r.trigger.Scope, session, 1)
		if err != nil {
			return memory.Errorf(memory.EUNAVAILABLE, "read the session's episode: %v", err)
		}
		if len(eps) == 0 {
			return nil
		}
		r.episodes[r.trigger.Scope] = eps
	}
	scopes := make([]memory.Scope, 0, len(r.episodes))
	for s := range r.episodes {
		scopes = append(scopes, s)
	}
	slices.SortFunc(scopes, func(a, b memory.Scope) int {
		return strings.Compare(a.Namespace+"\x00"+a.User, b.Namespace+"\x00"+b.User)
	})
	for _, scope := range scopes {
		prev, err := c.scratchpad(ctx, scope)
		if err != nil {
			return err
		}
		for _, ep := range r.episodes[scope] {
			next := c.nextScratchpad(ctx, prev, ep, r.at)
			next.Content = cutLines(next.Content, a.Int("max_chars"))
			data := &events.Scratchpad{Content: next.Content, ActiveProjects: next.ActiveProjects,
				CurrentFocus: next.CurrentFocus, OpenQuestions: next.OpenQuestions, NextSteps: next.NextSteps,
				Source: events.SourceEpisode, EpisodeID: ep.ID}
			if err := c.emit(ctx, memory.Outgoing{Type: events.TypeScratchpadUpdated,
				ID: "scratchpad-" + scopeKey(scope) + "-" + ep.ID, Scope: scope, Agent: agentOf(r), Time: r.at,
				Data: data}); err != nil {
				return emitErr(err)
			}
			next.Namespace, next.User, next.Updated, next.Source = scope.Namespace, scope.User, r.at, events.SourceEpisode
			c.remember(scope, next)
			prev = next
		}
	}
	return nil
}

func (c *Consolidator) nextScratchpad(ctx context.Context, prev memory.Scratchpad, ep memory.Episode, at time.Time) memory.Scratchpad {
	if c.Episodes != nil && c.Episodes.Client != nil {
		next, _, err := c.Episodes.UpdateScratchpad(ctx, prev, ep, at)
		if err == nil {
			return next
		}
		c.Log.Warn("model scratchpad failed; written extractively", zap.Error(err))
	}
	return episode.UpdateScratchpad(prev, ep, at)
}

// scratchpad is the user's scratchpad as it stands: the read model's, or
// the one this consolidator wrote last if the read model has not applied
// it yet (two sessions ending back to back must not lose the first).
func (c *Consolidator) scratchpad(ctx context.Context, scope memory.Scope) (memory.Scratchpad, error) {
	var stored memory.Scratchpad
	if c.Store != nil {
		var err error
		if stored, err = c.Store.Scratchpad(ctx, scope); err != nil {
			return stored, memory.Errorf(memory.EUNAVAILABLE, "read the scratchpad: %v", err)
		}
	}
	c.mu.Lock()
	mine, ok := c.pads[scope]
	c.mu.Unlock()
	if ok && mine.Updated.After(stored.Updated) {
		return mine, nil
	}
	stored.Namespace, stored.User = scope.Namespace, scope.User
	return stored, nil
}

// maxRememberedPads bounds the scratchpads kept for the lag above.
const maxRememberedPads = 10000

func (c *Consolidator) remember(scope memory.Scope, p memory.Scratchpad) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pads == nil || len(c.pads) >= maxRememberedPads {
		c.pads = map[memory.Scope]memory.Scratchpad{}
	}
	c.pads[scope] = p
}

// cutLines cuts markdown to at most n characters at a line boundary. A
// scratchpad holding a person's text is left whole: episode.UpdateScratchpad
// already bounds it, and a person's words are never cut here.
func cutLines(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n || strings.Contains(s, episode.PersonMarker) {
		return s
	}
	cut := chars.CutRunes(s, n)
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, "\n ")
}
