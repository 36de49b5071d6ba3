package sqlite

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// applyConsolidation applies the consolidation event types (episodes,
// scratchpad, profile, daily summaries, merges, archives, a user's
// erasure); it reports whether it knew the event's type.
//
// Like every apply, it reads only the read model and the event, and takes
// every time from the event, so a rebuild decides exactly as the live
// projector did. A merge or archive that names a memory the user no longer
// has (deleted since the consolidator planned it) skips that memory rather
// than failing: the plan was right when made, and refusing it would only
// park a harmless event among the dead letters.
func applyConsolidation(w *wtx, a memory.Applied) (handled bool, err error) {
	switch d := a.Data.(type) {
	case *events.Episode:
		return true, applyEpisode(w, a.Envelope, d)
	case *events.Scratchpad:
		return true, applyScratchpad(w, a.Envelope, d)
	case *events.ProfileRefreshed:
		return true, applyProfile(w, a.Envelope, d)
	case *events.DailySummary:
		return true, applyDailySummary(w, a.Envelope, d)
	case *events.MemoriesMerged:
		return true, applyMerged(w, a.Envelope, d)
	case *events.MemoriesArchived:
		return true, applyArchived(w, a.Envelope, d)
	case *events.UserForgotten:
		return true, forgetUser(w, a.Envelope)
	case *events.TurnsExpired:
		return true, expireTurns(w, a.Envelope, d)
	case *events.RetrievalDegraded:
		return true, nil // an announcement for operators; nothing to keep
	case *events.IdentityConfirmed:
		return true, applyIdentity(w, a.Envelope, d)
	case *events.ConsolidationReport:
		return true, applyReport(w, a.Envelope, d)
	}
	return false, nil
}

func jsonList[T any](v []T) string {
	if v == nil {
		return "[]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// episodeText is what an episode is found by.
func episodeText(d *events.Episode) string {
	parts := []string{d.Goal, d.Summary, strings.Join(d.Entities, " "), strings.Join(d.Tools, " ")}
	for _, a := range d.Actions {
		parts = append(parts, a.Decision, a.Params)
	}
	return strings.Join(parts, "\n")
}

// applyEpisode stores an episode. The same episode built again (a later
// build of the same turns) replaces the first. The turns it covers point
// to it, except that a compression episode does not take turns from the
// session's own episode: the complete story wins over a part of it.
func applyEpisode(w *wtx, env memory.Envelope, d *events.Episode) error {
	ns, user := env.Scope.Namespace, env.Scope.User
	for i, a := range d.Actions {
		if a.Tool == "" && a.Decision != "" {
			// A decision is a step taken, not a failed one; episodes
			// written before said otherwise.
			d.Actions[i].Success = true
		}
	}
	linked := d.LinkedMemories
	if d.Source != events.SourceCompression {
		var err error
		if linked, err = sessionLinks(w, env.Scope, d.SessionID, linked); err != nil {
			return err
		}
	}
	// The same episode built before leaves the index by the words it had.
	if err := w.unindex(episodesFTS, `WHERE e.namespace = ? AND e.user_id = ? AND e.id = ?`, ns, user, d.ID); err != nil {
		return err
	}
	var rid int64
	err := w.tx.QueryRowContext(w.ctx, `INSERT INTO episodes (namespace, user_id, id, session_id, summary, goal, outcome,
		started, ended, actions, entities, tools, linked_memories, importance, source, turns, built, event_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, user_id, id) DO UPDATE SET session_id = excluded.session_id,
			summary = excluded.summary, goal = excluded.goal, outcome = excluded.outcome, started = excluded.started,
			ended = excluded.ended, actions = excluded.actions, entities = excluded.entities, tools = excluded.tools,
			linked_memories = excluded.linked_memories, importance = excluded.importance, source = excluded.source,
			turns = excluded.turns, built = excluded.built, event_id = excluded.event_id
		RETURNING rid`,
		ns, user, d.ID, d.SessionID, d.Summary, d.Goal, d.Outcome, d.Started.UnixNano(), d.Ended.UnixNano(),
		jsonList(d.Actions), jsonList(d.Entities), jsonList(d.Tools), jsonList(linked), d.Importance,
		d.Source, jsonList(d.Turns), env.Time.UnixNano(), env.ID).Scan(&rid)
	if err != nil {
		return err
	}
	if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO episodes_fts (rowid, body) VALUES (?, ?)`,
		rid, textseg.IndexIn(partition(env.Scope), episodeText(d))); err != nil {
		return err
	}
	cond := ""
	if d.Source == events.SourceCompression {
		cond = ` AND episode_id = ''`
	}
	_, err = w.tx.ExecContext(w.ctx, `UPDATE turns SET episode_id = ?
		WHERE namespace = ? AND user_id = ? AND session_id = ? AND turn_index IN (SELECT value FROM json_each(?))`+cond,
		d.ID, ns, user, d.SessionID, jsonList(d.Turns))
	return err
}

// sessionLinks is what an episode built from a session's stored turns
// links: the memories its event names and those the read model holds from
// the session (all but rejected candidates), once each, in id order, at
// most events.MaxEpisodeActions. The consolidator links what its own read
// model holds when it builds, and the session's extraction may not be
// there yet (a consolidator run apart has its own read model; the
// extraction of a session that just ended runs at the same time), so the
// read model completes the list from both sides — here, and in
// linkExtracted when the extraction comes after the episode. Either order
// of the two events then ends in the same episode.
func sessionLinks(w *wtx, scope memory.Scope, session string, named []string) ([]string, error) {
	rows, err := w.tx.QueryContext(w.ctx, `SELECT id FROM memories WHERE namespace = ? AND user_id = ? AND session_id = ?
		AND status != 'rejected'`, scope.Namespace, scope.User, session)
	if err != nil {
		return nil, fmt.Errorf("session memories: %w", err)
	}
	defer quiet.Close(rows)
	set := map[string]bool{}
	for _, id := range named {
		set[id] = true
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("session memories: %w", err)
		}
		set[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session memories: %w", err)
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	if len(out) > events.MaxEpisodeActions {
		out = out[:events.MaxEpisodeActions]
	}
	return out, nil
}

// linkExtracted adds a session's newly extracted memories to the episodes
// already built from its stored turns (see sessionLinks).
func linkExtracted(w *wtx, scope memory.Scope, session string) error {
	rows, err := w.tx.QueryContext(w.ctx, `SELECT rid, linked_memories FROM episodes
		WHERE namespace = ? AND user_id = ? AND session_id = ? AND source != ?`,
		scope.Namespace, scope.User, session, events.SourceCompression)
	if err != nil {
		return fmt.Errorf("session episodes: %w", err)
	}
	type ep struct {
		rid    int64
		linked []string
	}
	var eps []ep
	for rows.Next() {
		var e ep
		var raw string
		if err := rows.Scan(&e.rid, &raw); err != nil {
			quiet.Close(rows)
			return fmt.Errorf("session episodes: %w", err)
		}
		_ = json.Unmarshal([]byte(raw), &e.linked)
		eps = append(eps, e)
	}
	quiet.Close(rows)
	if err := rows.Err(); err != nil {
		return fmt.Errorf("session episodes: %w", err)
	}
	for _, e := range eps {
		linked, err := sessionLinks(w, scope, session, e.linked)
		if err != nil {
			return err
		}
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE episodes SET linked_memories = ? WHERE rid = ?`, jsonList(linked), e.rid); err != nil {
			return fmt.Errorf("link episode: %w", err)
		}
	}
	return nil
}

func applyScratchpad(w *wtx, env memory.Envelope, d *events.Scratchpad) error {
	_, err := w.tx.ExecContext(w.ctx, `INSERT INTO scratchpad (namespace, user_id, content, active_projects,
		current_focus, open_questions, next_steps, source, episode_id, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, user_id) DO UPDATE SET content = excluded.content,
			active_projects = excluded.active_projects, current_focus = excluded.current_focus,
			open_questions = excluded.open_questions, next_steps = excluded.next_steps, source = excluded.source,
			episode_id = excluded.episode_id, updated = excluded.updated`,
		env.Scope.Namespace, env.Scope.User, d.Content, jsonList(d.ActiveProjects), d.CurrentFocus,
		jsonList(d.OpenQuestions), jsonList(d.NextSteps), d.Source, d.EpisodeID, env.Time.UnixNano())
	return err
}

// applyProfile makes the listed memories the core profile (tier 1), in
// order, and returns the demoted ones to knowledge (tier 2). Memories the
// user no longer has are left out.
func applyProfile(w *wtx, env memory.Envelope, d *events.ProfileRefreshed) error {
	ns, user := env.Scope.Namespace, env.Scope.User
	if _, err := w.tx.ExecContext(w.ctx, `DELETE FROM profile WHERE namespace = ? AND user_id = ?`, ns, user); err != nil {
		return err
	}
	for _, id := range d.Demoted {
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET tier = 2 WHERE namespace = ? AND user_id = ? AND id = ?`,
			ns, user, id); err != nil {
			return err
		}
	}
	for i, id := range d.MemoryIDs {
		res, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET tier = 1 WHERE namespace = ? AND user_id = ? AND id = ?`,
			ns, user, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO profile (namespace, user_id, memory_id, rank, refreshed)
			VALUES (?, ?, ?, ?, ?)`, ns, user, id, i, env.Time.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// applyDailySummary keeps a day's log per channel: the day written whole
// (part ”) and the parts extraction writes as it goes, each replaced by a
// later version of itself. An entry written by compression covers the
// whole day: it and every part of the day so far are compressed (in tier
// 2); a later migration or part of the same day does not undo that.
func applyDailySummary(w *wtx, env memory.Envelope, d *events.DailySummary) error {
	compressed := d.Source == events.SourceCompression
	ns, user := env.Scope.Namespace, env.Scope.User
	if compressed {
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE daily_summaries SET compressed = 1
			WHERE namespace = ? AND user_id = ? AND date = ? AND channel = ?`, ns, user, d.Date, d.Channel); err != nil {
			return err
		}
	}
	_, err := w.tx.ExecContext(w.ctx, `INSERT INTO daily_summaries (namespace, user_id, date, channel, part, summary,
		raw_tokens, source, compressed, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, user_id, date, channel, part) DO UPDATE SET summary = excluded.summary,
			raw_tokens = excluded.raw_tokens, source = excluded.source,
			compressed = max(compressed, excluded.compressed), updated = excluded.updated`,
		ns, user, d.Date, d.Channel, d.Part, d.Summary, d.RawTokens, d.Source, compressed, env.Time.UnixNano())
	return err
}

// applyMerged folds the merged memories into the kept one: each becomes
// superseded by it (kept as history, found through status and as_of), and
// the kept one takes the merge's importance and, when a model rewrote it,
// its content. A merge whose kept memory is gone or no longer current is
// skipped whole.
func applyMerged(w *wtx, env memory.Envelope, d *events.MemoriesMerged) error {
	into, err := loadMemory(w, env.Scope, d.Into)
	switch {
	case memory.ErrorCode(err) == memory.EINVALID, err == nil && into.Status != memory.StatusActive:
		return nil // gone, or no longer current: the merge is skipped whole
	case err != nil:
		return err // a failed read is not a memory that is gone
	}
	at := env.Time.UnixNano()
	folded := 0
	for _, id := range d.Merged {
		m, err := loadMemory(w, env.Scope, id)
		if err != nil || (m.Status != memory.StatusActive && m.Status != memory.StatusPending) {
			continue
		}
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET status = 'superseded', superseded_by = ?,
			valid_to = ?, updated = ? WHERE rowid = ?`, into.ID, at, at, m.rowid); err != nil {
			return err
		}
		if err := history(w, env, m.ID, change{kind: "merged", old: m.Content, new: m.Content, note: "merged into " + into.ID,
			fields: status(m.Status, memory.StatusSuperseded)}); err != nil {
			return err
		}
		folded++
	}
	if folded == 0 {
		return nil
	}
	content := into.Content
	if d.Content != nil {
		content = *d.Content
	}
	sources, _ := json.Marshal(append(into.SourceEvents, env.ID))
	if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET content = ?, importance = ?, source_events = ?, updated = ?
		WHERE rowid = ?`, content, d.Importance, string(sources), at, into.rowid); err != nil {
		return err
	}
	if content != into.Content {
		if err := unindexMemory(w, into); err != nil {
			return err
		}
		if err := indexMemory(w, into.rowid, env.Scope, into.Subject, into.Predicate, content); err != nil {
			return err
		}
	}
	fields := map[string]memory.Delta{}
	diff(fields, "importance", num(into.Importance), num(d.Importance))
	return history(w, env, into.ID, change{kind: "merged", old: into.Content, new: content, fields: fields,
		note: fmt.Sprintf("absorbed %d (cluster %s)", folded, d.ClusterID)})
}

// applyArchived archives current memories: kept with their history, no
// longer retrieved.
func applyArchived(w *wtx, env memory.Envelope, d *events.MemoriesArchived) error {
	at := env.Time.UnixNano()
	for _, id := range d.MemoryIDs {
		m, err := loadMemory(w, env.Scope, id)
		if memory.ErrorCode(err) == memory.EINVALID || err == nil && m.Status != memory.StatusActive && m.Status != memory.StatusPending {
			continue // gone, or no longer current
		}
		if err != nil {
			return err
		}
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET status = 'archived', valid_to = ?, updated = ?
			WHERE rowid = ?`, at, at, m.rowid); err != nil {
			return err
		}
		if err := history(w, env, id, change{kind: "archived", old: m.Content, new: m.Content, note: d.Reason,
			fields: status(m.Status, memory.StatusArchived)}); err != nil {
			return err
		}
	}
	return nil
}

// forgetUser erases everything the read model holds of a user: turns,
// sessions, memories and their history, extractions, episodes, the
// scratchpad, daily summaries, the profile and the embeddings, with their
// indexes, and the applied ids of their events, all but the receipt's
// own: the stream erases those events (stream.Erase), so a rebuild sees
// only the receipt and must reach the same rows. The database deletes
// securely (secure_delete), and the full-text rows go by their words
// (wtx.unindex), so no page keeps the text.
func forgetUser(w *wtx, env memory.Envelope) error {
	ns, user := env.Scope.Namespace, env.Scope.User
	if _, err := w.tx.ExecContext(w.ctx, `DELETE FROM applied WHERE namespace = ? AND user_id = ?
		AND NOT (source = ? AND id = ?)`, ns, user, env.Source, env.ID); err != nil {
		return err
	}
	if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO forgotten (namespace, user_id, time) VALUES (?, ?, ?)
		ON CONFLICT (namespace, user_id) DO UPDATE SET time = max(time, excluded.time)`,
		ns, user, env.Time.UnixNano()); err != nil {
		return err
	}
	for _, f := range []struct {
		f     ftsTable
		where string
	}{
		{turnsFTS, `WHERE t.namespace = ? AND t.user_id = ?`},
		{memoriesFTS, `WHERE m.namespace = ? AND m.user_id = ?`},
		{episodesFTS, `WHERE e.namespace = ? AND e.user_id = ?`},
	} {
		if err := w.unindex(f.f, f.where, ns, user); err != nil {
			return err
		}
	}
	for _, q := range []string{
		`DELETE FROM turns WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM sessions WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM memories WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM memory_history WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM extractions WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM episodes WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM scratchpad WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM daily_summaries WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM profile WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM embeddings WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM identities WHERE namespace = ? AND user_id = ?`,
		`DELETE FROM reports WHERE namespace = ? AND user_id = ?`,
	} {
		if _, err := w.tx.ExecContext(w.ctx, q, ns, user); err != nil {
			return err
		}
	}
	return nil
}
