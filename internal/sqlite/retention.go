package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// expireTurns applies a turns.expired receipt: the user's turns whose
// every event (first record, re-records, snapshots) is below d.BeforeSeq
// go, with their full-text rows, their attachments (a column of the turn)
// and the applied rows of the events that recorded them, and each session
// they were in is left as a replay of what the stream still holds would
// leave it. The user's extraction requests below the bound, which carried
// turns' text to the extractor, go too: their applied rows, and the reason
// each was made (the extraction's row keeps what its result recorded).
// The stream drops the same events (stream.ExpireTurns), so a rebuild
// agrees.
func expireTurns(w *wtx, env memory.Envelope, d *events.TurnsExpired) error {
	ns, user, before := env.Scope.Namespace, env.Scope.User, int64(d.BeforeSeq)
	rows, err := w.tx.QueryContext(w.ctx, `SELECT DISTINCT session_id FROM turns
		WHERE namespace = ? AND user_id = ? AND carried_seq < ?`, ns, user, before)
	if err != nil {
		return err
	}
	var sessions []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			quiet.Close(rows)
			return err
		}
		sessions = append(sessions, s)
	}
	quiet.Close(rows)
	if err := rows.Err(); err != nil {
		return err
	}
	// First, while the turns still say which rows are theirs.
	if err := w.unindex(turnsFTS, `WHERE t.namespace = ?1 AND t.user_id = ?2 AND t.carried_seq < ?3`, ns, user, before); err != nil {
		return err
	}
	for _, q := range []string{
		// Applied before schema 7, with no scope: found by the turn's seq.
		`DELETE FROM applied WHERE namespace = '' AND user_id = '' AND type IN ('` + events.TypeTurnRecorded + `', '` +
			events.TypeContextCompressing + `') AND seq IN (SELECT seq FROM turns WHERE namespace = ?1 AND user_id = ?2 AND carried_seq < ?3)`,
		`DELETE FROM applied WHERE namespace = ?1 AND user_id = ?2 AND type IN ('` + events.TypeTurnRecorded + `', '` +
			events.TypeContextCompressing + `') AND seq < ?3`,
		// A rebuild, without the request, has the extraction's row from
		// its result alone, which does not say why it was asked for.
		`UPDATE extractions SET reason = '' WHERE namespace = ?1 AND user_id = ?2 AND request_id IN
			(SELECT id FROM applied WHERE namespace = ?1 AND user_id = ?2 AND type = '` + events.TypeExtractionRequested + `' AND seq < ?3)`,
		`DELETE FROM applied WHERE namespace = ?1 AND user_id = ?2 AND type = '` + events.TypeExtractionRequested + `' AND seq < ?3`,
		`DELETE FROM turns WHERE namespace = ?1 AND user_id = ?2 AND carried_seq < ?3`,
	} {
		if _, err := w.tx.ExecContext(w.ctx, q, ns, user, before); err != nil {
			return err
		}
	}
	for _, s := range sessions {
		if err := resession(w, env.Scope, s); err != nil {
			return fmt.Errorf("session %s: %w", s, err)
		}
	}
	// The events the retention replaced left the stream: forgotten here as
	// a rebuild never applied them (their replacements are applied).
	for _, r := range d.Replaced {
		if _, err := w.tx.ExecContext(w.ctx, `DELETE FROM applied WHERE source = ? AND id = ?`, r.Source, r.ID); err != nil {
			return err
		}
	}
	return nil
}

// resession sets a session's row to what replaying its remaining turns
// and its session.ended gives: no row when neither is left; the end's
// time when only it is; else the span and count of the turns, started at
// the end when the end was recorded before them (a session resumed).
func resession(w *wtx, scope memory.Scope, session string) error {
	var n int
	var first, last sql.NullInt64
	if err := w.tx.QueryRowContext(w.ctx, `SELECT count(*), min(time), max(time) FROM turns
		WHERE namespace = ? AND user_id = ? AND session_id = ?`, scope.Namespace, scope.User, session).Scan(&n, &first, &last); err != nil {
		return err
	}
	var ended int64
	err := w.tx.QueryRowContext(w.ctx, `SELECT ended FROM sessions WHERE namespace = ? AND user_id = ? AND session_id = ?`,
		scope.Namespace, scope.User, session).Scan(&ended)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	key := []any{scope.Namespace, scope.User, session}
	switch {
	case n == 0 && ended == 0:
		_, err = w.tx.ExecContext(w.ctx, `DELETE FROM sessions WHERE namespace = ? AND user_id = ? AND session_id = ?`, key...)
	case n == 0:
		_, err = w.tx.ExecContext(w.ctx, `UPDATE sessions SET started = ended, last_turn = ended, turns = 0
			WHERE namespace = ? AND user_id = ? AND session_id = ?`, key...)
	default:
		started := first.Int64
		if ended != 0 && ended < started {
			started = ended
		}
		_, err = w.tx.ExecContext(w.ctx, `UPDATE sessions SET started = ?, last_turn = ?, turns = ?
			WHERE namespace = ? AND user_id = ? AND session_id = ?`, append([]any{started, last.Int64, n}, key...)...)
	}
	return err
}

// Expiry is what retention may drop of one user's raw turns.
type Expiry struct {
	Scope memory.Scope
	// Before is the stream sequence below which the user's turns go: the
	// cutoff, or the first turn still waiting for extraction if lower.
	Before uint64
	// Turns is how many of the user's turns go; Requests, how many of
	// their extraction requests.
	Turns, Requests int
}

// RetentionPlan is what retention does at one cutoff.
type RetentionPlan struct {
	Expire []Expiry
	// Held are the turns older than the cutoff that are not extracted yet
	// (at most heldLimit): they, and every later turn of their user, stay
	// until they are.
	Held []memory.Turn
}

// heldLimit bounds the held turns a plan lists.
const heldLimit = 10000

// PlanRetention lists, per user, the turns that may go at the stream
// sequence cutoff: those whose every event (first record, re-records,
// compression snapshots) is below it; and the extraction requests below
// it, which carry turns' text. A user's bound is lowered so that it never
// falls inside a turn's span of events, which would have a rebuild record
// the turn again from the events kept; below the first turn not yet
// extracted, which is never dropped, nor any of its user's after it (so a
// session idle past the cutoff is extracted first); below the first
// request made since waitSince whose extraction has no result yet, which
// the extractor may still need; and so that no request id (the batcher,
// the consolidator and retention make the same one for the same turns)
// has copies on both sides of it.
func (s *Store) PlanRetention(ctx context.Context, cutoff uint64, waitSince time.Time) (RetentionPlan, error) {
	var plan RetentionPlan
	rows, err := s.r.QueryContext(ctx, `SELECT namespace, user_id FROM turns WHERE first_seq < ?1
		UNION SELECT namespace, user_id FROM applied WHERE type = '`+events.TypeExtractionRequested+`' AND seq < ?1
			AND namespace != ''
		ORDER BY namespace, user_id`, int64(cutoff))
	if err != nil {
		return plan, fmt.Errorf("plan retention: %w", err)
	}
	var scopes []memory.Scope
	for rows.Next() {
		var sc memory.Scope
		if err := rows.Scan(&sc.Namespace, &sc.User); err != nil {
			quiet.Close(rows)
			return plan, fmt.Errorf("plan retention: %w", err)
		}
		scopes = append(scopes, sc)
	}
	quiet.Close(rows)
	if err := rows.Err(); err != nil {
		return plan, fmt.Errorf("plan retention: %w", err)
	}
	for _, sc := range scopes {
		x, err := s.expiry(ctx, sc, cutoff, waitSince)
		if err != nil {
			return plan, fmt.Errorf("plan retention: %w", err)
		}
		if x.Turns > 0 || x.Requests > 0 {
			plan.Expire = append(plan.Expire, x)
		}
	}
	rows, err = s.r.QueryContext(ctx, `SELECT `+turnColumns+` FROM turns WHERE extracted = 0 AND first_seq < ?
		ORDER BY namespace, user_id, session_id, turn_index LIMIT ?`, int64(cutoff), heldLimit)
	if err != nil {
		return plan, fmt.Errorf("plan retention: held turns: %w", err)
	}
	if plan.Held, err = scanTurns(rows); err != nil {
		return plan, fmt.Errorf("plan retention: held turns: %w", err)
	}
	return plan, nil
}

// expiry is one user's bound at cutoff and what falls below it.
func (s *Store) expiry(ctx context.Context, sc memory.Scope, cutoff uint64, waitSince time.Time) (Expiry, error) {
	x := Expiry{Scope: sc, Before: cutoff}
	lower := func(q string) error {
		var m sql.NullInt64
		if err := s.r.QueryRowContext(ctx, q, sc.Namespace, sc.User, int64(x.Before), waitSince.UnixNano()).Scan(&m); err != nil {
			return err
		}
		if m.Valid && uint64(m.Int64) < x.Before {
			x.Before = uint64(m.Int64)
		}
		return nil
	}
	if err := lower(`SELECT min(first_seq) FROM turns WHERE namespace = ?1 AND user_id = ?2 AND extracted = 0 AND first_seq < ?3`); err != nil {
		return x, err
	}
	// A request is the extractor's copy of its turns until a result is
	// recorded (one that failed is retried, or falls back to the rules,
	// which records a result too); one made before waitSince with none is
	// not waited for. (A compression's request has its rules' result
	// recorded before the model's pass, which may still read it; that
	// pass is over long before the request is as old as a retention age.)
	if err := lower(`SELECT min(a.seq) FROM applied a JOIN extractions x
			ON x.namespace = a.namespace AND x.user_id = a.user_id AND x.request_id = a.id
		WHERE a.namespace = ?1 AND a.user_id = ?2 AND a.type = '` + events.TypeExtractionRequested + `' AND a.seq < ?3
			AND x.status != 'extracted' AND x.requested >= ?4`); err != nil {
		return x, err
	}
	for {
		// A turn whose events straddle the bound, or a request id with
		// copies on both sides of it (a rebuild would keep the later
		// copy's reason), moves it to the first: each move can only bring
		// in lower spans, so this ends.
		before := x.Before
		if err := lower(`SELECT min(first_seq) FROM turns WHERE namespace = ?1 AND user_id = ?2
			AND first_seq < ?3 AND carried_seq >= ?3`); err != nil {
			return x, err
		}
		if err := lower(`SELECT min(a.seq) FROM applied a WHERE a.namespace = ?1 AND a.user_id = ?2
			AND a.type = '` + events.TypeExtractionRequested + `' AND a.seq < ?3
			AND EXISTS (SELECT 1 FROM applied b WHERE b.namespace = ?1 AND b.user_id = ?2 AND b.id = a.id
				AND b.type = '` + events.TypeExtractionRequested + `' AND b.seq >= ?3)`); err != nil {
			return x, err
		}
		if x.Before == before {
			break
		}
	}
	err := s.r.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM turns WHERE namespace = ?1 AND user_id = ?2 AND carried_seq < ?3),
			(SELECT count(*) FROM applied WHERE namespace = ?1 AND user_id = ?2
				AND type = '`+events.TypeExtractionRequested+`' AND seq < ?3)`,
		sc.Namespace, sc.User, int64(x.Before)).Scan(&x.Turns, &x.Requests)
	return x, err
}
