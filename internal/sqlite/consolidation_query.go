package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// The reads the consolidator and the consolidation endpoints make. Every
// one takes a scope, but Scopes, and returns only what belongs to it.

// Scopes lists every namespace and user the read model holds anything of,
// in order: the scheduled jobs run once per user.
func (s *Store) Scopes(ctx context.Context) ([]memory.Scope, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT namespace, user_id FROM memories
		UNION SELECT namespace, user_id FROM sessions
		UNION SELECT namespace, user_id FROM daily_summaries
		ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("scopes: %w", err)
	}
	defer quiet.Close(rows)
	var out []memory.Scope
	for rows.Next() {
		var sc memory.Scope
		if err := rows.Scan(&sc.Namespace, &sc.User); err != nil {
			return nil, fmt.Errorf("scopes: %w", err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

// SessionTurns returns a session's turns in turn order.
func (s *Store) SessionTurns(ctx context.Context, scope memory.Scope, session string) ([]memory.Turn, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id, agent, turn_index, role, content, tool_calls, tool_results,
		attachments, channel, project, time, tokens, extracted, event_source, event_id
		FROM turns WHERE namespace = ? AND user_id = ? AND session_id = ? ORDER BY turn_index`,
		scope.Namespace, scope.User, session)
	if err != nil {
		return nil, fmt.Errorf("session turns: %w", err)
	}
	defer quiet.Close(rows)
	var out []memory.Turn
	for rows.Next() {
		t := memory.Turn{Scope: scope, SessionID: session}
		var at int64
		if err := rows.Scan(&t.ID, &t.Agent, &t.TurnIndex, &t.Role, &t.Content, &t.ToolCalls, &t.ToolResults,
			&t.Attachments, &t.Channel, &t.Project, &at, &t.Tokens, &t.Extracted, &t.EventSource, &t.EventID); err != nil {
			return nil, fmt.Errorf("session turns: %w", err)
		}
		t.Time = nsTime(at)
		out = append(out, t)
	}
	return out, rows.Err()
}

// UnconsolidatedSessions returns sessions with at least minTurns turns,
// the last before before, that have no episode of their own yet (one built
// at session end or by a sweep), oldest first, at most limit.
func (s *Store) UnconsolidatedSessions(ctx context.Context, scope memory.Scope, before time.Time, minTurns, limit int) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT s.session_id FROM sessions s
		WHERE s.namespace = ? AND s.user_id = ? AND s.last_turn < ? AND s.turns >= ?
		AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.namespace = s.namespace AND e.user_id = s.user_id
			AND e.session_id = s.session_id AND e.source IN ('session_end', 'sweep'))
		ORDER BY s.last_turn, s.session_id LIMIT ?`,
		scope.Namespace, scope.User, before.UnixNano(), minTurns, limit)
	if err != nil {
		return nil, fmt.Errorf("unconsolidated sessions: %w", err)
	}
	defer quiet.Close(rows)
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// SessionMemoryIDs returns the ids of a session's current memories, oldest
// first: what an episode links to.
func (s *Store) SessionMemoryIDs(ctx context.Context, scope memory.Scope, session string, limit int) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM memories WHERE namespace = ? AND user_id = ? AND session_id = ?
		AND status = 'active' ORDER BY created, id LIMIT ?`, scope.Namespace, scope.User, session, limit)
	if err != nil {
		return nil, fmt.Errorf("session memories: %w", err)
	}
	defer quiet.Close(rows)
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ActiveMemories returns every active memory of a scope, by id: what the
// scheduled jobs (dedupe, decay, the cap, the profile) and the cards
// work on. Unlike Memories it has no limit.
func (s *Store) ActiveMemories(ctx context.Context, scope memory.Scope) ([]memory.Memory, error) {
	return s.queryMemories(ctx, "active memories", `SELECT rowid, `+memoryColumns+` FROM memories
		WHERE namespace = ? AND user_id = ? AND status = 'active' ORDER BY id`, scope.Namespace, scope.User)
}

// CoreMemories returns a scope's core profile: its active tier-1 memories,
// in the order the last refresh ranked them (migrated or unranked ones
// after, most important first).
func (s *Store) CoreMemories(ctx context.Context, scope memory.Scope) ([]memory.Memory, error) {
	return s.queryMemories(ctx, "core profile", `SELECT rowid, `+memoryColumns+` FROM memories m
		WHERE namespace = ? AND user_id = ? AND status = 'active' AND tier = 1
		ORDER BY coalesce((SELECT p.rank FROM profile p WHERE p.namespace = m.namespace AND p.user_id = m.user_id
			AND p.memory_id = m.id), 1000000000), importance DESC, id LIMIT 500`, scope.Namespace, scope.User)
}

func (s *Store) queryMemories(ctx context.Context, what, q string, args ...any) ([]memory.Memory, error) {
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := scanMemories(rows)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Scratchpad returns a scope's scratchpad; a user who has none gets an
// empty one (zero Updated, no Source).
func (s *Store) Scratchpad(ctx context.Context, scope memory.Scope) (memory.Scratchpad, error) {
	p := memory.Scratchpad{Namespace: scope.Namespace, User: scope.User,
		ActiveProjects: []string{}, OpenQuestions: []string{}, NextSteps: []string{}}
	var projects, questions, steps string
	var at int64
	rows, err := s.queryRead(ctx, `SELECT content, active_projects, current_focus, open_questions, next_steps,
		source, episode_id, updated FROM scratchpad WHERE namespace = ? AND user_id = ?`, scope.Namespace, scope.User)
	if err != nil {
		return p, fmt.Errorf("scratchpad: %w", err)
	}
	defer quiet.Close(rows)
	if !rows.Next() {
		return p, rows.Err()
	}
	err = rows.Scan(&p.Content, &projects, &p.CurrentFocus, &questions, &steps, &p.Source, &p.EpisodeID, &at)
	if err != nil {
		return p, fmt.Errorf("scratchpad: %w", err)
	}
	_ = json.Unmarshal([]byte(projects), &p.ActiveProjects)
	_ = json.Unmarshal([]byte(questions), &p.OpenQuestions)
	_ = json.Unmarshal([]byte(steps), &p.NextSteps)
	p.Updated = nsTime(at)
	return p, nil
}

const episodeColumns = `e.id, e.session_id, e.summary, e.goal, e.outcome, e.started, e.ended, e.actions, e.entities,
	e.tools, e.linked_memories, e.importance, e.source, e.turns, e.access_count`

// Episodes returns a scope's episodes, newest first; session, when not
// empty, keeps one session's; limit ≤ 0 means 100.
func (s *Store) Episodes(ctx context.Context, scope memory.Scope, session string, limit int) ([]memory.Episode, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	q := `SELECT ` + episodeColumns + ` FROM episodes e WHERE e.namespace = ? AND e.user_id = ?`
	args := []any{scope.Namespace, scope.User}
	if session != "" {
		q += ` AND e.session_id = ?`
		args = append(args, session)
	}
	return s.queryEpisodes(ctx, scope, q+` ORDER BY e.ended DESC, e.rid DESC`+limitSQL(limit), args...)
}

// EpisodesEnded returns a scope's episodes that ended in [from, to), in
// the order they ended.
func (s *Store) EpisodesEnded(ctx context.Context, scope memory.Scope, from, to time.Time) ([]memory.Episode, error) {
	return s.queryEpisodes(ctx, scope, `SELECT `+episodeColumns+` FROM episodes e
		WHERE e.namespace = ? AND e.user_id = ? AND e.ended >= ? AND e.ended < ? ORDER BY e.ended, e.rid LIMIT 1000`,
		scope.Namespace, scope.User, from.UnixNano(), to.UnixNano())
}

// SearchEpisodes finds a scope's episodes by what the user typed, best
// first.
func (s *Store) SearchEpisodes(ctx context.Context, scope memory.Scope, text string, limit int) ([]memory.Episode, error) {
	return s.RecallEpisodes(ctx, scope, textseg.Understand(text), limit)
}

// RecallEpisodes finds a scope's episodes for q (textseg.Understand, as
// every recall path), best first.
func (s *Store) RecallEpisodes(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.Episode, error) {
	match := textseg.MatchTerms(partition(scope), q.Terms[:min(len(q.Terms), maxMatchTerms)])
	if match == "" {
		return []memory.Episode{}, nil
	}
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	return s.queryEpisodes(ctx, scope, `SELECT `+episodeColumns+`
		FROM episodes_fts JOIN episodes e ON e.rid = episodes_fts.rowid
		WHERE episodes_fts MATCH ? AND e.namespace = ? AND e.user_id = ?
		ORDER BY bm25(episodes_fts)`+limitSQL(limit),
		match, scope.Namespace, scope.User)
}

func (s *Store) queryEpisodes(ctx context.Context, scope memory.Scope, q string, args ...any) ([]memory.Episode, error) {
	rows, err := s.queryRead(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("episodes: %w", err)
	}
	defer quiet.Close(rows)
	out := []memory.Episode{}
	for rows.Next() {
		e := memory.Episode{Namespace: scope.Namespace, User: scope.User}
		var started, ended int64
		var actions, entities, tools, linked, turns string
		if err := rows.Scan(&e.ID, &e.SessionID, &e.Summary, &e.Goal, &e.Outcome, &started, &ended, &actions, &entities,
			&tools, &linked, &e.Importance, &e.Source, &turns, &e.AccessCount); err != nil {
			return nil, fmt.Errorf("episodes: %w", err)
		}
		e.Started, e.Ended = nsTime(started), nsTime(ended)
		_ = json.Unmarshal([]byte(actions), &e.Actions)
		_ = json.Unmarshal([]byte(entities), &e.Entities)
		_ = json.Unmarshal([]byte(tools), &e.Tools)
		_ = json.Unmarshal([]byte(linked), &e.LinkedMemories)
		_ = json.Unmarshal([]byte(turns), &e.Turns)
		out = append(out, e)
	}
	return out, rows.Err()
}

// DailySummaries returns a scope's event log entries of one day
// (YYYY-MM-DD), by channel, each with its parts folded in (foldDays).
func (s *Store) DailySummaries(ctx context.Context, scope memory.Scope, date string) ([]memory.DailySummary, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT date, channel, part, summary, raw_tokens, compressed FROM daily_summaries
		WHERE namespace = ? AND user_id = ? AND date = ? ORDER BY channel, part != '', updated, part`,
		scope.Namespace, scope.User, date)
	if err != nil {
		return nil, fmt.Errorf("daily summaries: %w", err)
	}
	days, err := foldDays(rows, scope)
	if err != nil {
		return nil, fmt.Errorf("daily summaries: %w", err)
	}
	return days, nil
}

// foldDays reads rows of (date, channel, part, summary, raw_tokens,
// compressed), ordered by date and channel with each day's whole entry
// (part ”) before its parts in the order they were said, into one entry
// per day and channel: the whole entry and the parts one line each. When
// the whole entry is compressed it already says what the compressed parts
// did, so they are left out. A day is compressed when all of it is.
func foldDays(rows *sql.Rows, scope memory.Scope) ([]memory.DailySummary, error) {
	defer quiet.Close(rows)
	var out []memory.DailySummary
	wholeCompressed := false
	for rows.Next() {
		var d memory.DailySummary
		var part string
		if err := rows.Scan(&d.Date, &d.Channel, &part, &d.Summary, &d.RawTokens, &d.Compressed); err != nil {
			return nil, err
		}
		n := len(out)
		if n == 0 || out[n-1].Date != d.Date || out[n-1].Channel != d.Channel {
			d.Namespace, d.User = scope.Namespace, scope.User
			wholeCompressed = part == "" && d.Compressed
			out = append(out, d)
			continue
		}
		if wholeCompressed && d.Compressed {
			continue
		}
		day := &out[n-1]
		day.Summary += "\n" + d.Summary
		day.RawTokens += d.RawTokens
		day.Compressed = day.Compressed && d.Compressed
	}
	return out, rows.Err()
}

// maxDailyScored bounds the days one query scores: a user's latest.
const maxDailyScored = 400

// RecallDailySummaries finds a scope's daily summaries (tier 3: migrated
// dated logs, daily compression) for q, best first, among its latest
// maxDailyScored days; with from and to (YYYY-MM-DD, to exclusive) set,
// only days in that span, and those even when no word matches. Days are
// few, so they are scored in Go over the scope's own statistics, like
// every other recall path.
func (s *Store) RecallDailySummaries(ctx context.Context, scope memory.Scope, q textseg.Query, from, to string, limit int) ([]memory.DailySummary, error) {
	if from == "" {
		from = "0000"
	}
	if to == "" {
		to = "9999"
	}
	rows, err := s.queryRead(ctx, `SELECT date, channel, part, summary, raw_tokens, compressed FROM daily_summaries
		WHERE namespace = ?1 AND user_id = ?2 AND date IN (SELECT DISTINCT date FROM daily_summaries
			WHERE namespace = ?1 AND user_id = ?2 AND date >= ?3 AND date < ?4 ORDER BY date DESC`+limitSQL(maxDailyScored)+`)
		ORDER BY date DESC, channel, part != '', updated, part`,
		scope.Namespace, scope.User, from, to)
	if err != nil {
		return nil, fmt.Errorf("daily summaries: %w", err)
	}
	days, err := foldDays(rows, scope)
	if err != nil {
		return nil, fmt.Errorf("daily summaries: %w", err)
	}
	texts := make([]string, len(days))
	for i, d := range days {
		texts[i] = d.Date + " " + d.Summary
	}
	window := from != "0000" || to != "9999"
	sc := textseg.NewScorer(q, textseg.StatsOf(q, texts))
	type scored struct {
		d memory.DailySummary
		s float64
	}
	var out []scored
	for i, d := range days {
		score, _ := sc.Score(texts[i])
		if score > 0 || window {
			out = append(out, scored{d, score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].s > out[j].s })
	res := make([]memory.DailySummary, 0, min(len(out), limit))
	for _, o := range out[:min(len(out), limit)] {
		res = append(res, o.d)
	}
	return res, nil
}
