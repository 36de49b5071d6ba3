package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// stmt names one of the statements Apply runs. writeSQL is indexed by it,
// so a statement that does not exist does not compile.
type stmt int

const (
	stmtSavepoint stmt = iota
	stmtRollback
	stmtRelease
	stmtApplied
	stmtForgotten
	stmtPosition
	stmtSessionEnded
	stmtTurnID
	stmtTurnInsert
	stmtTurnUpdate
	stmtTurnCarried
	stmtFTSInsert
	stmtHeldTurns
	stmtUnindexTurns
	stmtHeldMemories
	stmtUnindexMemories
	stmtHeldEpisodes
	stmtUnindexEpisodes
	stmtSessionTouch
	numStmts
)

// writeSQL is every statement Apply runs, prepared once on the writer
// connection: parsing SQL was a quarter of apply's CPU. The turn's insert
// and update keep plain "?" in column order: naming the parameters
// (sql.Named, or numbering them ?NN) made the driver copy each name out
// of SQLite, 19 to 38 more allocations per turn applied, about 15% of its
// time (BenchmarkApplyTurns).
var writeSQL = [numStmts]string{
	stmtSavepoint: `SAVEPOINT ev`,
	stmtRollback:  `ROLLBACK TO ev`,
	stmtRelease:   `RELEASE ev`,
	stmtApplied: `INSERT INTO applied (namespace, user_id, source, id, seq, type) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, user_id, source, id) DO NOTHING`,
	stmtForgotten: `SELECT time FROM forgotten WHERE namespace = ? AND user_id = ?`,
	stmtPosition: `INSERT INTO meta (key, value) VALUES ('last_seq', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
	stmtSessionEnded: `INSERT INTO sessions
		(namespace, user_id, session_id, started, last_turn, ended, message_count, end_reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, user_id, session_id) DO UPDATE SET
			ended = excluded.ended, message_count = excluded.message_count, end_reason = excluded.end_reason`,
	stmtTurnID: `SELECT id FROM turns
		WHERE namespace = ? AND user_id = ? AND session_id = ? AND turn_index = ?`,
	stmtTurnInsert: `INSERT INTO turns
		(namespace, user_id, agent, session_id, turn_index, role, speaker, content, tool_calls, tool_results,
		 attachments, has_tool_calls, channel, project, time, tokens, event_source, event_id, seq, first_seq, carried_seq)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?19, ?19, ?19)
		ON CONFLICT (namespace, user_id, session_id, turn_index) DO NOTHING`,
	stmtTurnUpdate: `UPDATE turns SET agent = ?, role = ?, speaker = ?, content = ?, tool_calls = ?,
		tool_results = ?, attachments = ?, has_tool_calls = ?, channel = ?, project = ?, time = ?,
		tokens = ?, extracted = 0, event_source = ?, event_id = ?, seq = ?15, carried_seq = max(carried_seq, ?15) WHERE id = ?16`,
	// A snapshot that leaves a recorded turn alone still carries it.
	stmtTurnCarried: `UPDATE turns SET carried_seq = max(carried_seq, ?) WHERE id = ?`,
	stmtFTSInsert:   `INSERT INTO turns_fts (rowid, body) VALUES (?, ?)`,
	// wtx.unindex, per full-text table: whether it holds a row, and the
	// delete that names the row's words.
	stmtHeldTurns:       `SELECT count(*) FROM turns_fts_docsize WHERE id = ?`,
	stmtUnindexTurns:    `INSERT INTO turns_fts (turns_fts, rowid, body) VALUES ('delete', ?, ?)`,
	stmtHeldMemories:    `SELECT count(*) FROM memories_fts_docsize WHERE id = ?`,
	stmtUnindexMemories: `INSERT INTO memories_fts (memories_fts, rowid, body) VALUES ('delete', ?, ?)`,
	stmtHeldEpisodes:    `SELECT count(*) FROM episodes_fts_docsize WHERE id = ?`,
	stmtUnindexEpisodes: `INSERT INTO episodes_fts (episodes_fts, rowid, body) VALUES ('delete', ?, ?)`,
	stmtSessionTouch: `INSERT INTO sessions (namespace, user_id, session_id, started, last_turn, turns)
		VALUES (?, ?, ?, ?, ?, 1)
		ON CONFLICT (namespace, user_id, session_id) DO UPDATE SET
			started = min(started, excluded.started), last_turn = max(last_turn, excluded.last_turn),
			turns = turns + 1`,
}

// wtx is one apply transaction with the prepared statements bound to it.
type wtx struct {
	ctx   context.Context
	tx    *sql.Tx
	stmts *[numStmts]*sql.Stmt
	// bound holds the statements bound to tx so far, each bound once per
	// transaction rather than once per use (Tx.StmtContext allocates and
	// locks every time); the transaction's end closes them.
	bound [numStmts]*sql.Stmt
	// forgot caches, per scope, when its user was last forgotten (0:
	// never) as the forgotten table says within this transaction; a
	// user.forgotten event clears it.
	forgot map[memory.Scope]forgotten
	// deferText holds the turns' full-text rows back until the
	// transaction ends (flushText), so that a batch adds one segment to
	// the index rather than one per turn: FTS5 writes what it holds to a
	// segment of its own at every statement savepoint, and the next
	// turn's insert opens one (ten turns applied together made ten
	// segments). Only where a failing event rolls back the whole batch:
	// an event's savepoint would drop rows it had not written.
	deferText bool
	text      []textRow
	event     int // the index in the batch of the event being applied
}

// textRow is a turn's full-text row held back, and the event it came from.
type textRow struct {
	id    int64
	body  string
	event int
}

type forgotten struct {
	at  int64 // Unix ns
	was bool
}

// forgottenAt is when scope's user was last forgotten, if ever.
func (w *wtx) forgottenAt(scope memory.Scope) (forgotten, error) {
	if f, ok := w.forgot[scope]; ok {
		return f, nil
	}
	var f forgotten
	switch err := w.queryRow(stmtForgotten, scope.Namespace, scope.User).Scan(&f.at); {
	case err == nil:
		f.was = true
	case !errors.Is(err, sql.ErrNoRows):
		return f, err
	}
	if w.forgot == nil {
		w.forgot = map[memory.Scope]forgotten{}
	}
	w.forgot[scope] = f
	return f, nil
}

func (w *wtx) stmt(id stmt) *sql.Stmt {
	st := w.bound[id]
	if st == nil {
		st = w.tx.StmtContext(w.ctx, w.stmts[id])
		w.bound[id] = st
	}
	return st
}

func (w *wtx) exec(id stmt, args ...any) (sql.Result, error) {
	return w.stmt(id).ExecContext(w.ctx, args...)
}

// indexTurn adds a turn's row to the full-text index, or holds it back
// until flushText.
func (w *wtx) indexTurn(id int64, body string) error {
	if w.deferText {
		w.text = append(w.text, textRow{id: id, body: body, event: w.event})
		return nil
	}
	_, err := w.exec(stmtFTSInsert, id, body)
	return err
}

// flushText writes the turns' full-text rows held back. On an error it
// returns the index in the batch of the event whose row failed; the
// transaction is then rolled back.
func (w *wtx) flushText() (event int, err error) {
	for _, r := range w.text {
		if _, err := w.exec(stmtFTSInsert, r.id, r.body); err != nil {
			return r.event, fmt.Errorf("index turn %d: %w", r.id, err)
		}
	}
	w.text = w.text[:0]
	return 0, nil
}

func (w *wtx) queryRow(id stmt, args ...any) *sql.Row {
	return w.stmt(id).QueryRowContext(w.ctx, args...)
}

// Apply applies a batch of events in one transaction. An event that
// cannot be applied is left out, reported with its error, and the others
// commit. If the transaction itself fails, every event gets that error,
// marked EUNAVAILABLE (retry). Events at or below the stored position, and
// events already applied (same namespace, user, source and id), are skipped.
//
// The fast path runs the batch with no savepoints, because each savepoint
// makes FTS5 flush its pending index to disk (it was a fifth of apply's
// time), and indexes its turns at the end (wtx.deferText): a statement's
// own savepoint flushes too. Only when an event fails is the batch rolled
// back and applied again with a savepoint around each event.
func (s *Store) Apply(ctx context.Context, batch []memory.Applied) []error {
	errs, ok := s.applyBatch(ctx, batch, false, 0)
	if !ok {
		errs, _ = s.applyBatch(ctx, batch, true, 0)
	}
	for _, err := range errs {
		if err != nil {
			return errs
		}
	}
	return nil
}

// ApplyNext applies batch, whose sequences follow one another, only when
// it starts right after the stored position and every event of it
// applies: all or nothing, in one transaction. It reports false with no
// error when the position is elsewhere, and an error when an event does
// not apply (nothing is applied then either).
// It lets events known before the stream delivers them (those this
// process has just stored) be applied early without ever being applied
// out of order: what it declines, the stream delivers in its turn to
// Apply, which decides each event's fate.
func (s *Store) ApplyNext(ctx context.Context, batch []memory.Applied) (bool, error) {
	for i := 1; i < len(batch); i++ {
		if batch[i].Seq != batch[i-1].Seq+1 {
			return false, fmt.Errorf("apply next: seq %d follows %d", batch[i].Seq, batch[i-1].Seq)
		}
	}
	if len(batch) == 0 || batch[0].Seq == 0 {
		return false, nil
	}
	errs, ok := s.applyBatch(ctx, batch, false, batch[0].Seq)
	if err := firstError(errs); err != nil {
		return false, err
	}
	return ok, nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// fewRows says whether an event type's statements each touch only rows
// of the event itself (a turn, a session's row), so that they run in a
// blink and need no interrupting. The statements of these run under a
// context that cannot be cancelled, because modernc/sqlite watches a
// cancellable one with a goroutine per statement: about a fifth of the
// cost of applying a turn. Cancelling still ends the transaction
// promptly: database/sql rolls it back, and its next statement fails.
func fewRows(eventType string) bool {
	switch eventType {
	case events.TypeTurnRecorded, events.TypeContextCompressing, events.TypeSessionEnded:
		return true
	}
	return false
}

// applyBatch runs one apply transaction. Without isolate, the first event
// error rolls everything back, ok is false and that event's error is set.
// With next > 0, the batch is applied only if the stored position is
// next-1 (otherwise ok is false and no error set).
func (s *Store) applyBatch(ctx context.Context, batch []memory.Applied, isolate bool, next uint64) (errs []error, ok bool) {
	errs = make([]error, len(batch))
	fail := func(err error) ([]error, bool) {
		err = fmt.Errorf("%w: %w", memory.Errorf(memory.EUNAVAILABLE, "read model unavailable"), err)
		for i := range errs {
			errs[i] = err
		}
		return errs, true
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(fmt.Errorf("begin apply: %w", err))
	}
	defer quiet.Rollback(tx)
	w := &wtx{ctx: ctx, tx: tx, stmts: &s.stmts, deferText: !isolate}
	last, err := lastSeq(ctx, tx)
	if err != nil {
		return fail(err)
	}
	s.seen.Store(last)
	if next > 0 && last+1 != next {
		return make([]error, len(batch)), false
	}
	top := last
	uncancelled := context.WithoutCancel(ctx)
	for i, a := range batch {
		if a.Seq != 0 && a.Seq <= last {
			continue
		}
		w.ctx, w.event = ctx, i
		if fewRows(a.Type) {
			w.ctx = uncancelled
		}
		if isolate {
			if _, err := w.exec(stmtSavepoint); err != nil {
				return fail(fmt.Errorf("savepoint: %w", err))
			}
		}
		if err := applyOne(w, a); err != nil {
			if !isolate {
				errs[i] = fmt.Errorf("apply %s %s: %w", a.Type, a.ID, err)
				return errs, false
			}
			if _, rerr := w.exec(stmtRollback); rerr != nil {
				return fail(fmt.Errorf("rollback event %s: %w", a.ID, rerr))
			}
			errs[i] = fmt.Errorf("apply %s %s: %w", a.Type, a.ID, err)
		}
		if isolate {
			if _, err := w.exec(stmtRelease); err != nil {
				return fail(fmt.Errorf("release savepoint: %w", err))
			}
		}
		top = max(top, a.Seq)
	}
	w.ctx = uncancelled // each insert touches one turn's row (fewRows)
	if i, err := w.flushText(); err != nil {
		errs[i] = fmt.Errorf("apply %s %s: %w", batch[i].Type, batch[i].ID, err)
		return errs, false
	}
	w.ctx = ctx
	if top != last {
		if _, err := w.exec(stmtPosition, strconv.FormatUint(top, 10)); err != nil {
			return fail(fmt.Errorf("store position: %w", err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("commit apply: %w", err))
	}
	s.seen.Store(top)
	// After the commit, so that an index built from what a reader saw
	// before it is never taken for current.
	for _, a := range batch {
		if changesVectors(a.Type) {
			s.vectors.invalidate(a.Scope)
		}
		if erasesText(a.Type) {
			s.scrubDue.Store(true)
		}
	}
	return errs, true
}

// erasesText says whether an event type erases text that must leave the
// disk too: secure_delete writes the zeroed pages to the log, but the
// database file keeps the text until a checkpoint and the log its older
// copies until Scrub. Forget scrubs the read model of the process that
// ran it; Compact scrubs every other (a partition's copy, a retriever
// apart) at its next look.
func erasesText(eventType string) bool {
	return eventType == events.TypeUserForgotten || eventType == events.TypeTurnsExpired
}

func applyOne(w *wtx, a memory.Applied) error {
	if a.Type == events.TypeUserForgotten {
		w.forgot = nil // it changes the forgotten table
	} else {
		// Dated before the user was forgotten: erased with them, and not
		// even recorded as applied, since forget may erase it from the
		// stream too (stream.Erase) and a rebuild must agree.
		erased, err := w.forgottenAt(a.Scope)
		if err != nil {
			return err
		}
		if erased.was && a.Time.UnixNano() < erased.at {
			return nil
		}
	}
	res, err := w.exec(stmtApplied, a.Scope.Namespace, a.Scope.User, a.Source, a.ID, a.Seq, a.Type)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // already applied: the same event delivered again
	}
	switch d := a.Data.(type) {
	case *events.TurnRecorded:
		return putTurn(w, a.Envelope, d, true)
	case *events.ContextCompressing:
		for i := range d.Turns {
			t := d.Turns[i]
			if t.SessionID == "" {
				t.SessionID = d.SessionID
			}
			// A snapshot of turns leaving the agent's window: keep any the
			// stream has not seen, never overwrite a recorded one.
			if err := putTurn(w, a.Envelope, &t, false); err != nil {
				return fmt.Errorf("turns[%d]: %w", i, err)
			}
		}
		return nil
	case *events.SessionEnded:
		_, err := w.exec(stmtSessionEnded, a.Scope.Namespace, a.Scope.User, d.SessionID, a.Time.UnixNano(), a.Time.UnixNano(),
			a.Time.UnixNano(), d.MessageCount, d.Reason)
		return err
	case *events.ExtractionRequested:
		return applyExtractionRequested(w, a.Envelope, d)
	case *events.MemoryExtracted:
		return applyMemoryExtracted(w, a.Envelope, d)
	case *events.ExtractionFailed:
		return applyExtractionFailed(w, a.Envelope, d)
	case *events.MemoryAdded:
		return applyMemoryAdded(w, a.Envelope, d)
	case *events.MemoryUpdated:
		return applyMemoryUpdated(w, a.Envelope, d)
	case *events.MemoryDeleted:
		return applyMemoryDeleted(w, a.Envelope, d)
	case *events.PendingDecision:
		return applyPending(w, a.Envelope, d)
	case *events.MemoryImportant:
		return nil // an announcement for rules and subscribers; nothing to keep
	case *events.MemoriesAccessed:
		for _, acc := range d.Accesses {
			// A memory deleted since it was read is simply not there.
			if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET access_count = access_count + ?,
				last_accessed = max(last_accessed, ?) WHERE namespace = ? AND user_id = ? AND id = ?`,
				acc.Count, acc.Last.UnixNano(), a.Scope.Namespace, a.Scope.User, acc.MemoryID); err != nil {
				return err
			}
		}
		return nil
	case *events.MemoryEmbedded:
		return applyEmbedded(w, a.Envelope, d)
	default:
		if ok, err := applyConsolidation(w, a); ok {
			return err
		}
		return memory.Errorf(memory.EINVALID, "event type %q has no projection", a.Type)
	}
}

// putTurn stores a turn. A turn with the same scope, session and index as
// a stored one replaces it when replace is set (an agent re-recorded it)
// and is left alone otherwise.
func putTurn(w *wtx, env memory.Envelope, t *events.TurnRecorded, replace bool) error {
	ns, user := env.Scope.Namespace, env.Scope.User
	toolCalls, err := marshalIfAny(t.ToolCalls)
	if err != nil {
		return err
	}
	toolResults, err := marshalIfAny(t.ToolResults)
	if err != nil {
		return err
	}
	attachments, err := marshalIfAny(t.Attachments)
	if err != nil {
		return err
	}
	body := turnText(t)
	tokens := memory.EstimateTokens(body)
	// The insert comes first and the turn's id is looked up only when it
	// is already stored: a query's rows cost a goroutine of database/sql's
	// inside a transaction (it watches the transaction's context), one
	// per event on the way every turn takes. Those queued up behind the
	// apply on a two-core machine and kept the embedded JetStream's
	// writer, back from each fsync, waiting for a core.
	res, err := w.exec(stmtTurnInsert, ns, user, env.Agent, t.SessionID, t.TurnIndex, t.Role, t.Speaker, t.Content, toolCalls, toolResults,
		attachments, len(t.ToolCalls) > 0, t.Channel, t.Project, env.Time.UnixNano(), tokens,
		env.Source, env.ID, env.Seq)
	if err != nil {
		return err
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return err
	}
	var id int64
	if inserted > 0 {
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := touchSession(w, env, t.SessionID); err != nil {
			return err
		}
	} else {
		// Stored before (same scope, session and index).
		if err := w.queryRow(stmtTurnID, ns, user, t.SessionID, t.TurnIndex).Scan(&id); err != nil {
			return err
		}
		if !replace {
			_, err := w.exec(stmtTurnCarried, env.Seq, id)
			return err
		}
		// Its words leave the index while the row still says what they were.
		if err := w.unindex(turnsFTS, `WHERE t.id = ?`, id); err != nil {
			return err
		}
		if _, err := w.exec(stmtTurnUpdate, env.Agent, t.Role, t.Speaker, t.Content, toolCalls, toolResults, attachments, len(t.ToolCalls) > 0,
			t.Channel, t.Project, env.Time.UnixNano(), tokens, env.Source, env.ID, env.Seq, id); err != nil {
			return err
		}
	}
	return w.indexTurn(id, textseg.IndexIn(partition(env.Scope), body))
}

func touchSession(w *wtx, env memory.Envelope, session string) error {
	at := env.Time.UnixNano()
	_, err := w.exec(stmtSessionTouch, env.Scope.Namespace, env.Scope.User, session, at, at)
	return err
}

// turnText is what a turn is found by: its content, the names of the tools
// it called, what they returned, and its attachments' names, descriptions
// and transcriptions (seed 000 §4.4: "that picture of the cat").
func turnText(t *events.TurnRecorded) string {
	var b strings.Builder
	if t.Speaker != "" {
		// Who said it is searchable: "what did Caroline say about …".
		b.WriteString(t.Speaker)
		b.WriteString(": ")
	}
	b.WriteString(t.Content)
	for _, c := range t.ToolCalls {
		b.WriteString("\n")
		b.WriteString(c.Name)
	}
	for _, r := range t.ToolResults {
		b.WriteString("\n")
		b.WriteString(r.Content)
	}
	for _, a := range t.Attachments {
		for _, s := range []string{a.Name, a.Description, a.Transcription} {
			if s != "" {
				b.WriteString("\n")
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

func marshalIfAny[T any](v []T) (string, error) {
	if len(v) == 0 {
		return "", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// partition is the full-text partition of a namespace and user: every
// token of their turns, memories and episodes is indexed in it, so a query
// reads only their posting lists (see textseg.Partition). The SQL filter on
// namespace and user_id still decides what a query returns, so a hash
// collision could cost speed, never privacy.
func partition(s memory.Scope) string {
	return textseg.Partition(s.Namespace + "\x00" + s.User)
}

// memoryBody is what a memory is found by: its subject, predicate and
// content.
func memoryBody(scope memory.Scope, subject, predicate, content string) string {
	return textseg.IndexIn(partition(scope), subject+" "+predicate+"\n"+content)
}
