package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// applyIdentity keeps what a user confirmed on first meeting the agent
// (seed 004 §3): the agent's card replaces any before it, and the row
// says the user was asked, so they are not asked again. Who the user said
// they are becomes core memories (tier 1, confidence 1), one per item,
// named by the event: how to address them, their background, their tech
// and habits, which USER.md shows in its sections.
func applyIdentity(w *wtx, env memory.Envelope, d *events.IdentityConfirmed) error {
	agent, _ := json.Marshal(d.Agent)
	if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO identities (namespace, user_id, agent, summary, confirmed)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace, user_id) DO UPDATE SET agent = excluded.agent,
		summary = excluded.summary, confirmed = excluded.confirmed`,
		env.Scope.Namespace, env.Scope.User, string(agent), d.Summary, env.Time.UnixNano()); err != nil {
		return err
	}
	type fact struct{ kind, category, predicate, content string }
	u := d.User
	var facts []fact
	if u.Name != "" {
		facts = append(facts, fact{events.KindIdentity, events.CategoryIdentity, "name", u.Name})
	}
	if u.Background != "" {
		facts = append(facts, fact{events.KindIdentity, events.CategoryIdentity, "occupation", u.Background})
	}
	for _, t := range u.Tech {
		facts = append(facts, fact{events.KindFact, events.CategoryConfig, "tech", t})
	}
	for _, h := range u.Habits {
		facts = append(facts, fact{events.KindPreference, events.CategoryConfig, "prefers", h})
	}
	for i, f := range facts {
		content := strings.TrimSpace(f.content)
		if content == "" || len(content) > events.MaxMemoryContentBytes {
			continue
		}
		err := putCandidate(w, env, candidate{id: memory.MemoryID(env.Source, env.ID, i), tier: events.TierCore,
			kind: f.kind, category: f.category, subject: "user", predicate: f.predicate, content: content,
			importance: 0.9, confidence: 1, source: "manual"})
		if err != nil {
			return err
		}
	}
	return nil
}

// Identity is what a user confirmed on first meeting the agent; ok is
// false when they have not been asked and confirmed yet.
func (s *Store) Identity(ctx context.Context, scope memory.Scope) (id memory.Identity, ok bool, err error) {
	var agent string
	var at int64
	// Asked before every block: through a prepared statement (queryRead).
	rows, err := s.queryRead(ctx, `SELECT agent, summary, confirmed FROM identities WHERE namespace = ? AND user_id = ?`,
		scope.Namespace, scope.User)
	if err != nil {
		return id, false, fmt.Errorf("identity: %w", err)
	}
	defer quiet.Close(rows)
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return id, false, fmt.Errorf("identity: %w", err)
		}
		return id, false, nil
	}
	if err := rows.Scan(&agent, &id.Summary, &at); err != nil {
		return id, false, fmt.Errorf("identity: %w", err)
	}
	var a events.AgentIdentity
	_ = json.Unmarshal([]byte(agent), &a)
	id.Agent = memory.AgentIdentity{Name: a.Name, Role: a.Role, Tone: a.Tone, Boundaries: a.Boundaries, Avoid: a.Avoid,
		Priorities: a.Priorities}
	id.Confirmed = nsTime(at)
	return id, true, nil
}

// applyReport keeps a user's nightly report, one per night: the same
// night reported again replaces it.
func applyReport(w *wtx, env memory.Envelope, d *events.ConsolidationReport) error {
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = w.tx.ExecContext(w.ctx, `INSERT INTO reports (namespace, user_id, date, data, time) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (namespace, user_id, date) DO UPDATE SET data = excluded.data, time = excluded.time`,
		env.Scope.Namespace, env.Scope.User, d.Date, string(data), env.Time.UnixNano())
	return err
}

// Reports returns a user's latest nightly reports, newest first.
func (s *Store) Reports(ctx context.Context, scope memory.Scope, limit int) ([]memory.Report, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT data, time FROM reports WHERE namespace = ? AND user_id = ?
		ORDER BY date DESC`+limitSQL(limit), scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	defer quiet.Close(rows)
	out := []memory.Report{}
	for rows.Next() {
		var data string
		var at int64
		if err := rows.Scan(&data, &at); err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		var d events.ConsolidationReport
		if err := json.Unmarshal([]byte(data), &d); err != nil {
			return nil, fmt.Errorf("reports: %w", err)
		}
		out = append(out, memory.Report{Date: d.Date, Since: d.Since, Until: nsTime(at), Episodes: d.Episodes,
			Learned: d.Learned, Superseded: d.Superseded, Merged: d.Merged, Archived: d.Archived,
			DaysCompressed: d.DaysCompressed, Pending: d.Pending, Traits: d.Traits, Text: d.Text})
	}
	return out, rows.Err()
}

// Changes counts what changed for a user in (since, until]: episodes
// built (by the time of their event), memories created, superseded, merged into another and archived
// (from their history, by the time of the event that changed them), days
// of the log compressed, and the memories waiting for the user now.
func (s *Store) Changes(ctx context.Context, scope memory.Scope, since, until time.Time) (memory.Report, error) {
	r := memory.Report{Since: since, Until: until}
	from, to := since.UnixNano(), until.UnixNano()
	ns, user := scope.Namespace, scope.User
	for _, q := range []struct {
		n   *int
		sql string
	}{
		{&r.Episodes, `SELECT count(*) FROM episodes WHERE namespace = ?1 AND user_id = ?2 AND built > ?3 AND built <= ?4`},
		{&r.Learned, `SELECT count(*) FROM memory_history WHERE namespace = ?1 AND user_id = ?2 AND change = 'created'
			AND time > ?3 AND time <= ?4`},
		{&r.Superseded, `SELECT count(*) FROM memory_history WHERE namespace = ?1 AND user_id = ?2 AND change = 'superseded'
			AND time > ?3 AND time <= ?4`},
		{&r.Merged, `SELECT count(*) FROM memory_history WHERE namespace = ?1 AND user_id = ?2 AND change = 'merged'
			AND new LIKE 'merged into %' AND time > ?3 AND time <= ?4`},
		{&r.Archived, `SELECT count(*) FROM memory_history WHERE namespace = ?1 AND user_id = ?2 AND change = 'archived'
			AND time > ?3 AND time <= ?4`},
		{&r.DaysCompressed, `SELECT count(*) FROM daily_summaries WHERE namespace = ?1 AND user_id = ?2 AND part = ''
			AND compressed = 1 AND source = 'compression' AND updated > ?3 AND updated <= ?4`},
		{&r.Pending, `SELECT count(*) FROM memories WHERE namespace = ?1 AND user_id = ?2 AND status = 'pending'
			AND ?3 = ?3 AND snoozed_until <= ?4`},
	} {
		if err := s.r.QueryRowContext(ctx, q.sql, ns, user, from, to).Scan(q.n); err != nil {
			return r, fmt.Errorf("changes: %w", err)
		}
	}
	return r, nil
}

// ExpiringTurns are a user's turns whose every event is below the stream
// sequence before: those a turns.expired receipt with that bound removes.
func (s *Store) ExpiringTurns(ctx context.Context, scope memory.Scope, before uint64) ([]memory.Turn, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+turnColumns+` FROM turns
		WHERE namespace = ? AND user_id = ? AND carried_seq < ? ORDER BY session_id, turn_index`,
		scope.Namespace, scope.User, int64(before))
	if err != nil {
		return nil, fmt.Errorf("expiring turns: %w", err)
	}
	return scanTurns(rows)
}

// DailyRows are a user's stored daily log rows of the given dates, each
// as it is: the day written whole and each part, with its source.
func (s *Store) DailyRows(ctx context.Context, scope memory.Scope, dates []string) ([]memory.DailySummary, error) {
	var out []memory.DailySummary
	for _, date := range dates {
		rows, err := s.r.QueryContext(ctx, `SELECT date, channel, part, source, summary, raw_tokens, compressed FROM daily_summaries
			WHERE namespace = ? AND user_id = ? AND date = ? ORDER BY channel, part != '', updated, part`, scope.Namespace, scope.User, date)
		if err != nil {
			return nil, fmt.Errorf("daily rows: %w", err)
		}
		for rows.Next() {
			d := memory.DailySummary{Namespace: scope.Namespace, User: scope.User}
			if err := rows.Scan(&d.Date, &d.Channel, &d.Part, &d.Source, &d.Summary, &d.RawTokens, &d.Compressed); err != nil {
				quiet.Close(rows) // the scan's error is the one to report
				return nil, fmt.Errorf("daily rows: %w", err)
			}
			out = append(out, d)
		}
		quiet.Close(rows) // read to the end; Err says whether all of it came
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("daily rows: %w", err)
		}
	}
	return out, nil
}
