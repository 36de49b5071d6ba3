package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/extractreq"
	"github.com/engramhq/engram/internal/maintain"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// candidate is what a memory-creating event proposes, whatever its type.
type candidate struct {
	id         string
	tier       int
	kind       string
	category   string
	subject    string
	predicate  string
	content    string
	project    string
	topic      string
	importance float64
	confidence float64
	updates    bool
	source     string // rules, llm, manual
	session    string
	// said is when it was said; zero means the event's time.
	said time.Time
}

const memoryColumns = `id, namespace, user_id, agent, tier, kind, category, project, topic, subject, predicate,
	content, importance, confidence, status, supersedes, superseded_by, source, session_id, source_events,
	created, updated, valid_to, last_accessed, access_count, snoozed_until, said_at, updates`

// storedMemory is a memory row as apply reads it.
type storedMemory struct {
	rowid   int64
	updates bool
	memory.Memory
}

// said is when the memory was said, in unix nanoseconds.
func (m storedMemory) said() int64 { return m.SaidAt.UnixNano() }

// replaces reports whether the memory took its slot's place when said.
func (m storedMemory) replaces() bool { return memory.Replaces(m.Predicate, m.updates) }

func scanMemory(sc interface{ Scan(...any) error }) (storedMemory, error) {
	return scanMemoryWith(sc)
}

// scanMemoryWith scans a memory row followed by extra columns.
// scanStored reads every row of a query selecting rowid and
// memoryColumns, and closes rows.
func scanStored(rows *sql.Rows) ([]storedMemory, error) {
	defer quiet.Close(rows)
	var out []storedMemory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// scanMemories is scanStored's memories, an empty list rather than nil.
func scanMemories(rows *sql.Rows) ([]memory.Memory, error) {
	stored, err := scanStored(rows)
	if err != nil {
		return nil, err
	}
	out := make([]memory.Memory, len(stored))
	for i, m := range stored {
		out[i] = m.Memory
	}
	return out, nil
}

func scanMemoryWith(sc interface{ Scan(...any) error }, extra ...any) (storedMemory, error) {
	var (
		m                                   storedMemory
		events                              string
		created, updated, validTo, accessed int64
		snoozed, said                       int64
	)
	dst := append([]any{&m.rowid, &m.ID, &m.Namespace, &m.User, &m.Agent, &m.Tier, &m.Kind, &m.Category, &m.Project,
		&m.Topic, &m.Subject, &m.Predicate, &m.Content, &m.Importance, &m.Confidence, &m.Status, &m.Supersedes,
		&m.SupersededBy, &m.Source, &m.SessionID, &events, &created, &updated, &validTo, &accessed,
		&m.AccessCount, &snoozed, &said, &m.updates}, extra...)
	err := sc.Scan(dst...)
	if err != nil {
		return m, err
	}
	_ = json.Unmarshal([]byte(events), &m.SourceEvents)
	m.Created, m.Updated = nsTime(created), nsTime(updated)
	m.SaidAt, m.LearnedAt = nsTime(said), m.Created
	m.ValidTo, m.LastAccessed, m.SnoozedUntil = nsTime(validTo), nsTime(accessed), nsTime(snoozed)
	return m, nil
}

func nsTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// putCandidate routes a candidate by confidence and applies it: a
// near-duplicate of a current memory merges into it (keeping the higher
// importance); a fact that replaces its slot's value is placed in the
// slot's history by when it was said (place); anything else is a new
// memory. Every decision reads only the read model and the event, so
// replay decides the same.
func putCandidate(w *wtx, env memory.Envelope, c candidate) error {
	c.subject, c.predicate = memory.NormalizeKey(c.subject), memory.NormalizeKey(c.predicate)
	if c.said.IsZero() {
		c.said = env.Time // an event from before said_at: said when published
	}
	said := c.said.UnixNano()
	status := memory.Route(c.confidence)
	if status == memory.StatusRejected {
		// Dropped, but recorded: the row explains why nothing was written.
		if err := insertMemory(w, env, c, placement{status: memory.StatusRejected}); err != nil {
			return err
		}
		return historyAt(w, env, said, c.id, change{kind: "dropped", new: c.content,
			note: fmt.Sprintf("confidence %.2f < %.2f", c.confidence, memory.ConfidencePending)})
	}
	if status == memory.StatusPending {
		if at, ok, err := ignoredLately(w, env, c); err != nil {
			return err
		} else if ok {
			// The user said no to this lately: recorded, not asked again.
			if err := insertMemory(w, env, c, placement{status: memory.StatusRejected}); err != nil {
				return err
			}
			return historyAt(w, env, said, c.id, change{kind: "dropped", new: c.content, note: "ignored by the user on " +
				at.Format(time.DateOnly) + "; not proposed again until " + at.Add(memory.IgnoreCooldown).Format(time.DateOnly)})
		}
	}
	// Near-duplicates are looked for among the memories the index finds
	// for the candidate's text (bounded, whatever the subject's size).
	similar, err := currentMemories(w, env.Scope, c.subject, "", 51)
	if err == nil && len(similar) > 50 {
		similar, err = similarMemories(w, env.Scope, c.subject, c.content)
	}
	if err != nil {
		return err
	}
	for _, m := range similar {
		if memory.Similarity(m.Content, c.content) <= memory.MergeSimilarity {
			continue
		}
		// The same fact said again is the memory that says it, unless
		// another value was said in between: then it is a version of its
		// own, and merging would bring an old value back.
		again, err := sayAgain(w, env, m, said)
		if err != nil {
			return err
		}
		if again {
			return merge(w, env, m, c, status, said)
		}
	}
	p := placement{status: status}
	if status == memory.StatusActive {
		replaces := memory.Replaces(c.predicate, c.updates)
		if p, err = place(w, env, slotOf(c.subject, c.predicate, c.topic), c.id, said, newest, replaces); err != nil {
			return err
		}
		if c.source == events.ExtractorLLM {
			// (A reading in the slot the fact replaces is retired above.)
			if err := restate(w, env, c, said); err != nil {
				return err
			}
		}
	}
	if c.tier == 0 && p.status == memory.StatusActive && coreAtWrite(c.kind, c.category, c.importance) {
		c.tier = 1
	}
	if err := insertMemory(w, env, c, p); err != nil {
		return err
	}
	if err := historyAt(w, env, said, c.id, change{kind: "created", new: c.content}); err != nil {
		return err
	}
	return p.record(w, env, c.id, c.content)
}

// RestateSimilarity is how alike the model's wording of a fact and the
// rules' reading of the same session's turn must be for the model's to
// replace it ("User likes green tea" and "likes green tea": 0.75; "likes
// coffee" and "likes tea": 0.33).
const RestateSimilarity = 0.5

// restate retires the rules' readings (memory.extracted with pass "turn")
// of the candidate's session that the model, reading the same turns as a
// batch, said again in its own words: same subject and predicate, similar
// content. A reading is the rules' first guess, made at once so the agent
// need not wait; the model's wording replaces it rather than standing
// beside it. (Near-duplicates were merged before this: that is a
// confirmation.)
func restate(w *wtx, env memory.Envelope, c candidate, said int64) error {
	current, err := currentMemories(w, env.Scope, c.subject, c.predicate, 0)
	if err != nil {
		return err
	}
	for _, m := range current {
		if m.Source != events.ExtractorRules || m.SessionID != c.session || len(m.SourceEvents) == 0 ||
			!strings.HasPrefix(m.SourceEvents[0], extractreq.ReadingEventPrefix) ||
			memory.Similarity(m.Content, c.content) < RestateSimilarity {
			continue
		}
		if err := retire(w, env, m, c.id, said); err != nil {
			return err
		}
	}
	return nil
}

// placement is where a version goes in its slot's history: its status,
// the version it follows, and, when a version said after it already
// replaced it, that version and when it was said.
type placement struct {
	status       memory.Status
	supersedes   string
	supersededBy string
	validTo      int64
}

// record writes the history of a version that enters already superseded.
func (p placement) record(w *wtx, env memory.Envelope, id, content string) error {
	if p.supersededBy == "" {
		return nil
	}
	return historyAt(w, env, p.validTo, id, change{kind: "superseded", old: content, new: content,
		note: "superseded by " + p.supersededBy + ", said after it", fields: status(memory.StatusActive, memory.StatusSuperseded)})
}

// newest is the row id of a version not written yet: it is the last in
// its slot of those said at the same time.
const newest = math.MaxInt64

// slot is what a version replaces, and what replaces it: the subject's
// single value of a predicate like location; a topic of the subject's
// preferences ("drinks": likes, dislikes and prefers alike); else a
// predicate's values of one topic.
type slot struct {
	subject, predicate, topic string
}

func slotOf(subject, predicate, topic string) slot {
	return slot{memory.NormalizeKey(subject), memory.NormalizeKey(predicate), topic}
}

func (s slot) where() (string, []any) {
	switch {
	case memory.SingleValued(s.predicate):
		return `subject = ? AND predicate = ?`, []any{s.subject, s.predicate}
	case memory.Preference(s.predicate) && s.topic != "":
		return `subject = ? AND predicate IN ('likes', 'dislikes', 'prefers') AND topic = ?`, []any{s.subject, s.topic}
	}
	return `subject = ? AND predicate = ? AND topic = ?`, []any{s.subject, s.predicate, s.topic}
}

// versions are the memories of a slot that are or were current, in the
// order they were said; rowid breaks ties, in the order the stream
// applied them, so a rebuild orders them the same.
func versions(w *wtx, scope memory.Scope, sl slot) ([]storedMemory, error) {
	cond, args := sl.where()
	rows, err := w.tx.QueryContext(w.ctx, `SELECT rowid, `+memoryColumns+` FROM memories
		WHERE namespace = ? AND user_id = ? AND `+cond+` AND status IN ('active', 'superseded', 'archived')
		ORDER BY said_at, rowid`, append([]any{scope.Namespace, scope.User}, args...)...)
	if err != nil {
		return nil, err
	}
	return scanStored(rows)
}

// place puts the version id, said at said (rowid orders it among those
// said at the same time), into its slot's history. If a version said
// after it already replaced the slot, it enters superseded by the first
// such, and if it replaces too, it takes over what that one had retired
// among the versions said before it. Otherwise it is current, and if it
// replaces, the current versions said before it are retired. So the
// version said last is current whatever order they come in.
func place(w *wtx, env memory.Envelope, sl slot, id string, said, rowid int64, replaces bool) (placement, error) {
	vs, err := versions(w, env.Scope, sl)
	if err != nil {
		return placement{}, err
	}
	after := func(v storedMemory) bool { return v.said() > said || v.said() == said && v.rowid > rowid }
	var later *storedMemory
	for i := range vs {
		if vs[i].rowid != rowid && after(vs[i]) && vs[i].replaces() {
			later = &vs[i]
			break
		}
	}
	p := placement{status: memory.StatusActive}
	if later != nil {
		p = placement{status: memory.StatusSuperseded, supersededBy: later.ID, validTo: later.said()}
	}
	if !replaces {
		return p, nil
	}
	for _, v := range vs {
		if v.rowid == rowid || after(v) {
			continue
		}
		switch {
		case later == nil && v.Status == memory.StatusActive:
		case later != nil && v.Status == memory.StatusSuperseded && v.SupersededBy == later.ID:
		default:
			continue
		}
		if err := retire(w, env, v, id, said); err != nil {
			return placement{}, err
		}
		p.supersedes = v.ID
	}
	if later != nil {
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET supersedes = ? WHERE rowid = ?`, id, later.rowid); err != nil {
			return placement{}, err
		}
	}
	return p, nil
}

// retire marks v superseded by the version id, said at said: v stopped
// being current then.
func retire(w *wtx, env memory.Envelope, v storedMemory, id string, said int64) error {
	if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET status = 'superseded', superseded_by = ?,
		valid_to = ?, updated = ? WHERE rowid = ?`, id, said, env.Time.UnixNano(), v.rowid); err != nil {
		return err
	}
	return historyAt(w, env, said, v.ID, change{kind: "superseded", old: v.Content, new: v.Content, note: "superseded by " + id,
		fields: status(v.Status, memory.StatusSuperseded)})
}

// sayAgain reports whether a fact said at said is m said again: said
// after m was, or before it with no other value of m's slot said in
// between. Said before, m has held since then: its start moves back, and
// the version it replaced ends there.
func sayAgain(w *wtx, env memory.Envelope, m storedMemory, said int64) (bool, error) {
	if said >= m.said() {
		return true, nil
	}
	vs, err := versions(w, env.Scope, slotOf(m.Subject, m.Predicate, m.Topic))
	if err != nil {
		return false, err
	}
	for _, v := range vs {
		if v.rowid != m.rowid && v.replaces() && v.said() > said && (v.said() < m.said() || v.said() == m.said() && v.rowid < m.rowid) {
			return false, nil
		}
	}
	if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET said_at = ? WHERE rowid = ?`, said, m.rowid); err != nil {
		return false, err
	}
	_, err = w.tx.ExecContext(w.ctx, `UPDATE memories SET valid_to = ?
		WHERE namespace = ? AND user_id = ? AND superseded_by = ? AND status = 'superseded' AND valid_to > ?`,
		said, env.Scope.Namespace, env.Scope.User, m.ID, said)
	return true, err
}

// coreAtWrite reports whether a memory joins the core profile (tier 1) as
// it is written, rather than at the next refresh_profile: who the user is,
// their rules and their strong preferences, by the same bar the weekly
// job applies (maintain.CoreProfile). The weekly job still trims the
// profile to its size.
func coreAtWrite(kind, category string, importance float64) bool {
	switch memory.Kind(kind) {
	case memory.KindIdentity, memory.KindRule, memory.KindPreference:
	default:
		return false
	}
	return importance >= maintain.CoreImportance && maintain.PriorityOf(memory.Category(category)).TTL() == 0
}

// ignoredLately reports whether the user ignored a candidate with the same
// subject, predicate and (near-)same value within memory.IgnoreCooldown
// before env's time, and when.
func ignoredLately(w *wtx, env memory.Envelope, c candidate) (time.Time, bool, error) {
	since := env.Time.Add(-memory.IgnoreCooldown).UnixNano()
	rows, err := w.tx.QueryContext(w.ctx, `SELECT m.content, h.time FROM memory_history h
		JOIN memories m ON m.namespace = h.namespace AND m.user_id = h.user_id AND m.id = h.memory_id
		WHERE h.namespace = ? AND h.user_id = ? AND h.change = 'ignored' AND h.time >= ?
			AND m.subject = ? AND m.predicate = ? AND m.status = 'rejected'
		ORDER BY h.time DESC LIMIT 50`, env.Scope.Namespace, env.Scope.User, since, c.subject, c.predicate)
	if err != nil {
		return time.Time{}, false, err
	}
	defer quiet.Close(rows)
	for rows.Next() {
		var content string
		var at int64
		if err := rows.Scan(&content, &at); err != nil {
			return time.Time{}, false, err
		}
		if content == c.content || memory.Similarity(content, c.content) > memory.MergeSimilarity {
			return nsTime(at), true, nil
		}
	}
	return time.Time{}, false, rows.Err()
}

// similarMemories are the active and pending memories of a subject that
// the full-text index finds closest to text (at most 20).
func similarMemories(w *wtx, scope memory.Scope, subject, text string) ([]storedMemory, error) {
	match := textseg.MatchIn(partition(scope), text)
	if match == "" {
		return nil, nil
	}
	rows, err := w.tx.QueryContext(w.ctx, `SELECT m.rowid, `+prefixed("m.", memoryColumns)+`
		FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.namespace = ? AND m.user_id = ? AND m.subject = ?
			AND m.status IN ('active', 'pending')
		ORDER BY bm25(memories_fts), m.id LIMIT 20`,
		match, scope.Namespace, scope.User, subject)
	if err != nil {
		return nil, err
	}
	return scanStored(rows)
}

// currentMemories are a subject's active and pending memories, with one
// predicate ("" = any), oldest first, at most limit (0 = all).
func currentMemories(w *wtx, scope memory.Scope, subject, predicate string, limit int) ([]storedMemory, error) {
	q := `SELECT rowid, ` + memoryColumns + ` FROM memories
		WHERE namespace = ? AND user_id = ? AND subject = ? AND status IN ('active', 'pending')`
	args := []any{scope.Namespace, scope.User, subject}
	if predicate != "" {
		q += ` AND predicate = ?`
		args = append(args, predicate)
	}
	q += ` ORDER BY created, id`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := w.tx.QueryContext(w.ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanStored(rows)
}

// merge folds a near-duplicate candidate into m: the higher importance
// wins, the event joins its sources, and the fact stated again is more
// likely true: confidence combines as independent evidence, 1 − (1−a)(1−b),
// up to memory.ConfidenceMax (seed 004 §7). A pending memory whose
// confidence so reaches the active level becomes active, placed in its
// slot's history like any new version.
func merge(w *wtx, env memory.Envelope, m storedMemory, c candidate, status memory.Status, said int64) error {
	conf := m.Confidence
	if c.confidence > 0 && status != memory.StatusRejected {
		conf = max(conf, c.confidence, min(memory.ConfidenceMax, 1-(1-m.Confidence)*(1-c.confidence)))
	}
	p := placement{status: m.Status, supersedes: m.Supersedes, supersededBy: m.SupersededBy, validTo: m.ValidTo.UnixNano()}
	if m.ValidTo.IsZero() {
		p.validTo = 0
	}
	promoted := m.Status == memory.StatusPending && (status == memory.StatusActive || memory.Route(conf) == memory.StatusActive)
	if promoted {
		var err error
		if p, err = place(w, env, slotOf(m.Subject, m.Predicate, m.Topic), m.ID, m.said(), m.rowid, m.replaces()); err != nil {
			return err
		}
	}
	tier := m.Tier
	if p.status == memory.StatusActive && coreAtWrite(string(m.Kind), string(m.Category), max(m.Importance, c.importance)) {
		tier = 1
	}
	sources, _ := json.Marshal(append(m.SourceEvents, env.ID))
	if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET importance = max(importance, ?), confidence = ?,
		status = ?, supersedes = ?, superseded_by = ?, valid_to = ?, tier = ?, source_events = ?, updated = ? WHERE rowid = ?`,
		c.importance, conf, p.status, p.supersedes, p.supersededBy, p.validTo, tier, string(sources), env.Time.UnixNano(), m.rowid); err != nil {
		return err
	}
	fields := map[string]memory.Delta{}
	diff(fields, "status", string(m.Status), string(p.status))
	diff(fields, "confidence", num(m.Confidence), num(conf))
	diff(fields, "importance", num(m.Importance), num(max(m.Importance, c.importance)))
	diff(fields, "tier", strconv.Itoa(m.Tier), strconv.Itoa(tier))
	if err := historyAt(w, env, said, m.ID, change{kind: "merged", old: m.Content, new: m.Content, fields: fields,
		note: "said again: " + c.content}); err != nil {
		return err
	}
	if !promoted {
		return nil
	}
	return p.record(w, env, m.ID, m.Content)
}

func insertMemory(w *wtx, env memory.Envelope, c candidate, p placement) error {
	if c.tier == 0 {
		c.tier = 2
	}
	sources, _ := json.Marshal([]string{env.ID})
	at := env.Time.UnixNano()
	res, err := w.tx.ExecContext(w.ctx, `INSERT INTO memories (`+memoryColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?)`,
		c.id, env.Scope.Namespace, env.Scope.User, env.Agent, c.tier, c.kind, c.category, c.project, c.topic,
		c.subject, c.predicate, c.content, c.importance, c.confidence, p.status, p.supersedes, p.supersededBy, c.source, c.session,
		string(sources), at, at, p.validTo, c.said.UnixNano(), c.updates)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return memory.Errorf(memory.EINVALID, "memory id %s already exists", c.id)
		}
		return err
	}
	if p.status == memory.StatusRejected {
		return nil // not searchable
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return err
	}
	return indexMemory(w, rowid, env.Scope, c.subject, c.predicate, c.content)
}

func indexMemory(w *wtx, rowid int64, scope memory.Scope, subject, predicate, content string) error {
	_, err := w.tx.ExecContext(w.ctx, `INSERT INTO memories_fts (rowid, body) VALUES (?, ?)`,
		rowid, memoryBody(scope, subject, predicate, content))
	return err
}

// unindexMemory takes m's words, as loaded before any change, off the
// full-text index.
func unindexMemory(w *wtx, m storedMemory) error {
	return w.unindexRow(memoriesFTS, m.rowid, memoryBody(memory.Scope{Namespace: m.Namespace, User: m.User},
		m.Subject, m.Predicate, m.Content))
}

// change is one entry of a memory's history (memory.Change): old and new
// are the content before and after, fields the other fields changed, note
// what else explains it.
type change struct {
	kind     string
	old, new string
	fields   map[string]memory.Delta
	note     string
}

// history records a change that was said when its event was.
func history(w *wtx, env memory.Envelope, id string, c change) error {
	return historyAt(w, env, env.Time.UnixNano(), id, c)
}

// historyAt records a change caused by env, said at said.
func historyAt(w *wtx, env memory.Envelope, said int64, id string, c change) error {
	fields := ""
	if len(c.fields) > 0 {
		b, _ := json.Marshal(c.fields)
		fields = string(b)
	}
	_, err := w.tx.ExecContext(w.ctx, `INSERT INTO memory_history
		(memory_id, namespace, user_id, change, old, new, fields, note, cause, time, said_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, env.Scope.Namespace, env.Scope.User, c.kind, c.old, c.new, fields, c.note,
		env.ID, env.Time.UnixNano(), said)
	return err
}

// status is the fields of a change of status.
func status(from, to memory.Status) map[string]memory.Delta {
	return map[string]memory.Delta{"status": {Old: string(from), New: string(to)}}
}

// diff adds a field to fields when its value changed.
func diff(fields map[string]memory.Delta, name, old, new string) {
	if old != new {
		fields[name] = memory.Delta{Old: old, New: new}
	}
}

// timeText is a time as history shows it ("" for none).
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// num is a score as history shows it.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func fromCandidate(c events.Candidate) candidate {
	return candidate{kind: c.Kind, category: c.Category, subject: c.Subject, predicate: c.Predicate,
		content: c.Content, project: c.Project, topic: c.Topic, importance: c.Importance,
		confidence: c.Confidence, updates: c.Updates, said: c.SaidAt}
}

func applyExtractionRequested(w *wtx, env memory.Envelope, d *events.ExtractionRequested) error {
	idx := make([]int, len(d.Turns))
	for i, t := range d.Turns {
		idx[i] = t.TurnIndex
	}
	turns, _ := json.Marshal(idx)
	_, err := w.tx.ExecContext(w.ctx, `INSERT INTO extractions
		(request_id, namespace, user_id, session_id, reason, turns, status, requested)
		VALUES (?, ?, ?, ?, ?, ?, 'requested', ?) ON CONFLICT DO NOTHING`,
		d.RequestID, env.Scope.Namespace, env.Scope.User, d.SessionID, d.Reason, string(turns), env.Time.UnixNano())
	return err
}

func applyMemoryExtracted(w *wtx, env memory.Envelope, d *events.MemoryExtracted) error {
	if d.Pass == events.PassTurn {
		// A turn's reading as it arrived: its memories, but neither a
		// request nor the turn's extraction, which its batch still does.
		return putCandidates(w, env, d)
	}
	turns, _ := json.Marshal(d.Turns)
	if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO extractions
		(request_id, namespace, user_id, session_id, reason, turns, status, extractor, model, calls,
		 prompt_tokens, completion_tokens, requested, done)
		VALUES (?, ?, ?, ?, '', ?, 'extracted', ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (namespace, user_id, request_id) DO UPDATE SET status = 'extracted',
			extractor = CASE WHEN extractor = '' THEN excluded.extractor ELSE extractor || '+' || excluded.extractor END,
			model = CASE WHEN excluded.model = '' THEN model ELSE excluded.model END,
			calls = calls + excluded.calls, prompt_tokens = prompt_tokens + excluded.prompt_tokens,
			completion_tokens = completion_tokens + excluded.completion_tokens, done = excluded.done`,
		d.RequestID, env.Scope.Namespace, env.Scope.User, d.SessionID, string(turns), d.Extractor, d.Model,
		d.Calls, d.Usage.PromptTokens, d.Usage.CompletionTokens, env.Time.UnixNano(), env.Time.UnixNano()); err != nil {
		return err
	}
	if err := markExtracted(w, env.Scope, d.SessionID, d.Turns); err != nil {
		return err
	}
	return putCandidates(w, env, d)
}

// putCandidates applies a memory.extracted's candidates.
func putCandidates(w *wtx, env memory.Envelope, d *events.MemoryExtracted) error {
	for i, c := range d.Candidates {
		cand := fromCandidate(c)
		cand.id, cand.source, cand.session = memory.MemoryID(env.Source, env.ID, i), d.Extractor, d.SessionID
		if err := putCandidate(w, env, cand); err != nil {
			return fmt.Errorf("candidates[%d]: %w", i, err)
		}
	}
	if len(d.Candidates) == 0 {
		return nil
	}
	return linkExtracted(w, env.Scope, d.SessionID)
}

// markExtracted flags a session's turns as extracted, in one statement
// (as applyEpisode links its turns).
func markExtracted(w *wtx, scope memory.Scope, session string, turns []int) error {
	if len(turns) == 0 {
		return nil
	}
	_, err := w.tx.ExecContext(w.ctx, `UPDATE turns SET extracted = 1
		WHERE namespace = ? AND user_id = ? AND session_id = ? AND turn_index IN (SELECT value FROM json_each(?))`,
		scope.Namespace, scope.User, session, jsonList(turns))
	return err
}

func applyExtractionFailed(w *wtx, env memory.Envelope, d *events.ExtractionFailed) error {
	turns, _ := json.Marshal(d.Turns)
	_, err := w.tx.ExecContext(w.ctx, `INSERT INTO extractions
		(request_id, namespace, user_id, session_id, reason, turns, status, failure, requested, done)
		VALUES (?, ?, ?, ?, '', ?, 'failed', ?, ?, ?)
		ON CONFLICT (namespace, user_id, request_id) DO UPDATE SET
			status = CASE WHEN status = 'extracted' THEN status ELSE 'failed' END,
			failure = excluded.failure, done = excluded.done`,
		d.RequestID, env.Scope.Namespace, env.Scope.User, d.SessionID, string(turns), d.Reason,
		env.Time.UnixNano(), env.Time.UnixNano())
	return err
}

func applyMemoryAdded(w *wtx, env memory.Envelope, d *events.MemoryAdded) error {
	id := d.MemoryID
	if id == "" {
		id = memory.MemoryID(env.Source, env.ID, 0)
	}
	return putCandidate(w, env, candidate{id: id, tier: d.Tier, kind: d.Kind, category: d.Category,
		subject: d.Subject, predicate: d.Predicate, content: d.Content, project: d.Project, topic: d.Topic,
		importance: d.Importance, confidence: d.Confidence, source: "manual", session: d.SessionID, said: d.SaidAt})
}

// loadMemory reads one memory of scope, or an EINVALID error naming it.
func loadMemory(w *wtx, scope memory.Scope, id string) (storedMemory, error) {
	m, err := scanMemory(w.tx.QueryRowContext(w.ctx, `SELECT rowid, `+memoryColumns+` FROM memories
		WHERE namespace = ? AND user_id = ? AND id = ?`, scope.Namespace, scope.User, id))
	if errors.Is(err, sql.ErrNoRows) {
		return m, memory.Errorf(memory.EINVALID, "memory %s does not exist for this user", id)
	}
	return m, err
}

func applyMemoryUpdated(w *wtx, env memory.Envelope, d *events.MemoryUpdated) error {
	m, err := loadMemory(w, env.Scope, d.MemoryID)
	if err != nil {
		return err
	}
	before := m.Memory
	// Its words leave the index while m still says what they were.
	if err := unindexMemory(w, m); err != nil {
		return err
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	kind, category := string(m.Kind), string(m.Category)
	set(&m.Content, d.Content)
	set(&kind, d.Kind)
	set(&category, d.Category)
	set(&m.Subject, d.Subject)
	set(&m.Predicate, d.Predicate)
	set(&m.Project, d.Project)
	set(&m.Topic, d.Topic)
	if d.Importance != nil {
		m.Importance = *d.Importance
	}
	if d.Confidence != nil {
		m.Confidence = *d.Confidence
	}
	m.Subject, m.Predicate = memory.NormalizeKey(m.Subject), memory.NormalizeKey(m.Predicate)
	if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET content = ?, kind = ?, category = ?, subject = ?,
		predicate = ?, project = ?, topic = ?, importance = ?, confidence = ?, updated = ? WHERE rowid = ?`,
		m.Content, kind, category, m.Subject, m.Predicate, m.Project, m.Topic, m.Importance, m.Confidence,
		env.Time.UnixNano(), m.rowid); err != nil {
		return err
	}
	if err := indexMemory(w, m.rowid, env.Scope, m.Subject, m.Predicate, m.Content); err != nil {
		return err
	}
	m.Kind, m.Category = memory.Kind(kind), memory.Category(category)
	fields := map[string]memory.Delta{}
	for _, f := range [][3]string{
		{"kind", string(before.Kind), kind}, {"category", string(before.Category), category},
		{"subject", before.Subject, m.Subject}, {"predicate", before.Predicate, m.Predicate},
		{"project", before.Project, m.Project}, {"topic", before.Topic, m.Topic},
		{"importance", num(before.Importance), num(m.Importance)}, {"confidence", num(before.Confidence), num(m.Confidence)},
	} {
		diff(fields, f[0], f[1], f[2])
	}
	return history(w, env, m.ID, change{kind: "updated", old: before.Content, new: m.Content, fields: fields})
}

// applyMemoryDeleted removes a memory and its history: what a person
// deletes is gone from the read model (the stream still holds the events;
// erasing a user purges those too). One history row records the deletion,
// without the content.
func applyMemoryDeleted(w *wtx, env memory.Envelope, d *events.MemoryDeleted) error {
	m, err := loadMemory(w, env.Scope, d.MemoryID)
	if err != nil {
		return err
	}
	if err := unindexMemory(w, m); err != nil {
		return err
	}
	if _, err := w.tx.ExecContext(w.ctx, `DELETE FROM memories WHERE rowid = ?`, m.rowid); err != nil {
		return err
	}
	if _, err := w.tx.ExecContext(w.ctx, `DELETE FROM memory_history WHERE namespace = ? AND user_id = ? AND memory_id = ?`,
		env.Scope.Namespace, env.Scope.User, m.ID); err != nil {
		return err
	}
	return history(w, env, m.ID, change{kind: "deleted", note: d.Reason})
}

// applyPending settles a pending memory: confirmed becomes active (and
// supersedes like any new active memory), ignored is rejected, snoozed
// stays pending but out of the queue until the time given.
func applyPending(w *wtx, env memory.Envelope, d *events.PendingDecision) error {
	m, err := loadMemory(w, env.Scope, d.MemoryID)
	if err != nil {
		return err
	}
	if m.Status != memory.StatusPending {
		return memory.Errorf(memory.EINVALID, "memory %s is %s, not pending", m.ID, m.Status)
	}
	at := env.Time.UnixNano()
	switch env.Type {
	case events.TypePendingConfirmed:
		// Confirmed, it is a version like any other: said before what
		// replaced it, it goes into the history.
		p, err := place(w, env, slotOf(m.Subject, m.Predicate, m.Topic), m.ID, m.said(), m.rowid, m.replaces())
		if err != nil {
			return err
		}
		tier := m.Tier
		if p.status == memory.StatusActive && coreAtWrite(string(m.Kind), string(m.Category), m.Importance) {
			tier = 1
		}
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET status = ?, supersedes = ?, superseded_by = ?,
			valid_to = ?, snoozed_until = 0, tier = ?, updated = ? WHERE rowid = ?`,
			p.status, p.supersedes, p.supersededBy, p.validTo, tier, at, m.rowid); err != nil {
			return err
		}
		fields := status(memory.StatusPending, p.status)
		diff(fields, "tier", strconv.Itoa(m.Tier), strconv.Itoa(tier))
		note := ""
		if p.supersedes != "" {
			note = "supersedes " + p.supersedes
		}
		if err := history(w, env, m.ID, change{kind: "confirmed", old: m.Content, new: m.Content, fields: fields, note: note}); err != nil {
			return err
		}
		return p.record(w, env, m.ID, m.Content)
	case events.TypePendingIgnored:
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET status = 'rejected', updated = ? WHERE rowid = ?`, at, m.rowid); err != nil {
			return err
		}
		if err := unindexMemory(w, m); err != nil {
			return err
		}
		return history(w, env, m.ID, change{kind: "ignored", old: m.Content, new: m.Content,
			fields: status(memory.StatusPending, memory.StatusRejected)})
	default: // snoozed
		until := int64(0)
		if d.Until != nil {
			until = d.Until.UnixNano()
		}
		if _, err := w.tx.ExecContext(w.ctx, `UPDATE memories SET snoozed_until = ?, updated = ? WHERE rowid = ?`, until, at, m.rowid); err != nil {
			return err
		}
		return history(w, env, m.ID, change{kind: "snoozed", old: m.Content, new: m.Content,
			fields: map[string]memory.Delta{"snoozed_until": {Old: timeText(m.SnoozedUntil), New: timeText(nsTime(until))}},
			note:   "until " + timeText(nsTime(until))})
	}
}
