package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// migration is one schema step: SQL, then, if the step needs Go (text
// segmentation, say), fill, in the same transaction.
type migration struct {
	sql  string
	fill func(ctx context.Context, tx *sql.Tx) error
}

// memoryTableColumns are the memories table's columns after its id, the same
// in the table migration 2 makes and in the one that scopes its id to a
// user (memories_scoped).
const memoryTableColumns = `
	namespace     TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	agent         TEXT NOT NULL DEFAULT '',
	tier          INTEGER NOT NULL DEFAULT 2,
	kind          TEXT NOT NULL,
	category      TEXT NOT NULL,
	project       TEXT NOT NULL DEFAULT '',
	topic         TEXT NOT NULL DEFAULT '',
	subject       TEXT NOT NULL,
	predicate     TEXT NOT NULL,
	content       TEXT NOT NULL,
	importance    REAL NOT NULL,
	confidence    REAL NOT NULL,
	status        TEXT NOT NULL,
	supersedes    TEXT NOT NULL DEFAULT '',
	superseded_by TEXT NOT NULL DEFAULT '',
	source        TEXT NOT NULL,
	session_id    TEXT NOT NULL DEFAULT '',`

// migrations are applied in order; the index+1 of the last one applied is
// stored as user_version. Never edit a released migration: append one.
var migrations = []migration{
	// 1: events applied, raw turns with full-text index, sessions.
	{sql: `
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per applied event: the idempotency key of the projection.
CREATE TABLE applied (
	source TEXT NOT NULL,
	id     TEXT NOT NULL,
	seq    INTEGER NOT NULL,
	type   TEXT NOT NULL,
	PRIMARY KEY (source, id)
) WITHOUT ROWID;

CREATE TABLE turns (
	id             INTEGER PRIMARY KEY,
	namespace      TEXT NOT NULL,
	user_id        TEXT NOT NULL,
	agent          TEXT NOT NULL DEFAULT '',
	session_id     TEXT NOT NULL,
	turn_index     INTEGER NOT NULL,
	role           TEXT NOT NULL,
	speaker        TEXT NOT NULL DEFAULT '',
	content        TEXT NOT NULL,
	tool_calls     TEXT NOT NULL DEFAULT '',
	tool_results   TEXT NOT NULL DEFAULT '',
	attachments    TEXT NOT NULL DEFAULT '',
	has_tool_calls INTEGER NOT NULL DEFAULT 0,
	channel        TEXT NOT NULL DEFAULT '',
	project        TEXT NOT NULL DEFAULT '',
	time           INTEGER NOT NULL, -- unix nanoseconds, from the event
	tokens         INTEGER NOT NULL,
	extracted      INTEGER NOT NULL DEFAULT 0,
	episode_id     TEXT NOT NULL DEFAULT '',
	event_source   TEXT NOT NULL,
	event_id       TEXT NOT NULL,
	seq            INTEGER NOT NULL,
	UNIQUE (namespace, user_id, session_id, turn_index)
);
CREATE INDEX turns_scope_time ON turns (namespace, user_id, time);
CREATE INDEX turns_unextracted ON turns (namespace, user_id, session_id) WHERE extracted = 0;

-- Contentless: the text lives in turns; the index holds segmented tokens
-- (see textseg) plus a per-scope token so a query only walks its own user.
CREATE VIRTUAL TABLE turns_fts USING fts5(
	scope, body, content='', contentless_delete=1, tokenize='` + textseg.Tokenizer + `'
);

CREATE TABLE sessions (
	namespace     TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	session_id    TEXT NOT NULL,
	started       INTEGER NOT NULL,
	last_turn     INTEGER NOT NULL,
	turns         INTEGER NOT NULL DEFAULT 0,
	ended         INTEGER NOT NULL DEFAULT 0,
	message_count INTEGER NOT NULL DEFAULT 0,
	end_reason    TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (namespace, user_id, session_id)
) WITHOUT ROWID;
`},
	// 2: semantic memories, their history, extraction bookkeeping.
	{sql: `
CREATE TABLE memories (
	id            TEXT PRIMARY KEY,` + memoryTableColumns + `
	source_events TEXT NOT NULL, -- JSON array of event ids
	created       INTEGER NOT NULL, -- unix ns, event time
	updated       INTEGER NOT NULL,
	valid_to      INTEGER NOT NULL DEFAULT 0, -- when it stopped being current (0: still is)
	last_accessed INTEGER NOT NULL DEFAULT 0,
	access_count  INTEGER NOT NULL DEFAULT 0,
	snoozed_until INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_scope_status ON memories (namespace, user_id, status, updated);
CREATE INDEX memories_scope_key ON memories (namespace, user_id, subject, predicate);

CREATE VIRTUAL TABLE memories_fts USING fts5(
	scope, body, content='', contentless_delete=1, tokenize='` + textseg.Tokenizer + `'
);

CREATE TABLE memory_history (
	id        INTEGER PRIMARY KEY,
	memory_id TEXT NOT NULL,
	namespace TEXT NOT NULL,
	user_id   TEXT NOT NULL,
	change    TEXT NOT NULL,
	old       TEXT NOT NULL DEFAULT '',
	new       TEXT NOT NULL DEFAULT '',
	cause     TEXT NOT NULL,
	time      INTEGER NOT NULL
);
CREATE INDEX memory_history_memory ON memory_history (namespace, user_id, memory_id);

-- One row per extraction request: what was asked, and how it ended.
CREATE TABLE extractions (
	request_id        TEXT NOT NULL,
	namespace         TEXT NOT NULL,
	user_id           TEXT NOT NULL,
	session_id        TEXT NOT NULL,
	reason            TEXT NOT NULL,
	turns             TEXT NOT NULL, -- JSON array of turn indices
	status            TEXT NOT NULL, -- requested, extracted, failed
	extractor         TEXT NOT NULL DEFAULT '',
	model             TEXT NOT NULL DEFAULT '',
	calls             INTEGER NOT NULL DEFAULT 0,
	prompt_tokens     INTEGER NOT NULL DEFAULT 0,
	completion_tokens INTEGER NOT NULL DEFAULT 0,
	failure           TEXT NOT NULL DEFAULT '',
	requested         INTEGER NOT NULL,
	done              INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (namespace, user_id, request_id)
) WITHOUT ROWID;
`},
	// 3: consolidation — episodes, the scratchpad, daily summaries and the
	// core profile's order.
	{sql: `
-- One row per episode; rid orders them as the stream applied them.
CREATE TABLE episodes (
	rid             INTEGER PRIMARY KEY,
	namespace       TEXT NOT NULL,
	user_id         TEXT NOT NULL,
	id              TEXT NOT NULL,
	session_id      TEXT NOT NULL,
	summary         TEXT NOT NULL,
	goal            TEXT NOT NULL DEFAULT '',
	outcome         TEXT NOT NULL,
	started         INTEGER NOT NULL, -- unix ns
	ended           INTEGER NOT NULL,
	actions         TEXT NOT NULL, -- JSON arrays
	entities        TEXT NOT NULL,
	tools           TEXT NOT NULL,
	linked_memories TEXT NOT NULL,
	importance      REAL NOT NULL,
	source          TEXT NOT NULL,
	turns           TEXT NOT NULL,
	access_count    INTEGER NOT NULL DEFAULT 0,
	built           INTEGER NOT NULL, -- the event's time
	event_id        TEXT NOT NULL,
	UNIQUE (namespace, user_id, id)
);
CREATE INDEX episodes_scope_ended ON episodes (namespace, user_id, ended);
CREATE INDEX episodes_scope_session ON episodes (namespace, user_id, session_id);

CREATE VIRTUAL TABLE episodes_fts USING fts5(
	scope, body, content='', contentless_delete=1, tokenize='` + textseg.Tokenizer + `'
);

CREATE TABLE scratchpad (
	namespace       TEXT NOT NULL,
	user_id         TEXT NOT NULL,
	content         TEXT NOT NULL,
	active_projects TEXT NOT NULL, -- JSON arrays
	current_focus   TEXT NOT NULL DEFAULT '',
	open_questions  TEXT NOT NULL,
	next_steps      TEXT NOT NULL,
	source          TEXT NOT NULL,
	episode_id      TEXT NOT NULL DEFAULT '',
	updated         INTEGER NOT NULL,
	PRIMARY KEY (namespace, user_id)
) WITHOUT ROWID;

-- Tier 3 event log (seed 001 §3.2.3): one entry per day and channel.
CREATE TABLE daily_summaries (
	namespace  TEXT NOT NULL,
	user_id    TEXT NOT NULL,
	date       TEXT NOT NULL,
	channel    TEXT NOT NULL,
	summary    TEXT NOT NULL,
	raw_tokens INTEGER NOT NULL,
	source     TEXT NOT NULL,
	compressed INTEGER NOT NULL DEFAULT 0,
	updated    INTEGER NOT NULL,
	PRIMARY KEY (namespace, user_id, date, channel)
) WITHOUT ROWID;

-- The core profile's members in the order the last refresh chose; a
-- member's tier in memories is 1.
CREATE TABLE profile (
	namespace TEXT NOT NULL,
	user_id   TEXT NOT NULL,
	memory_id TEXT NOT NULL,
	rank      INTEGER NOT NULL,
	refreshed INTEGER NOT NULL,
	PRIMARY KEY (namespace, user_id, memory_id)
) WITHOUT ROWID;
`},
	// 4: full-text partitions. The scope column gives way to the scope's
	// partition written into every token (textseg.Partition): a query
	// reads only its own user's posting lists, and BM25 counts only their
	// text. Rows are reindexed in Go, the only place that segments text.
	{sql: `
CREATE TEMP TABLE fts_turns AS SELECT rowid AS id FROM turns_fts;
CREATE TEMP TABLE fts_memories AS SELECT rowid AS id FROM memories_fts;
CREATE TEMP TABLE fts_episodes AS SELECT rowid AS id FROM episodes_fts;
DROP TABLE turns_fts;
DROP TABLE memories_fts;
DROP TABLE episodes_fts;
CREATE VIRTUAL TABLE turns_fts USING fts5(
	body, content='', contentless_delete=1, tokenize='` + textseg.Tokenizer + `'
);
CREATE VIRTUAL TABLE memories_fts USING fts5(
	body, content='', contentless_delete=1, tokenize='` + textseg.Tokenizer + `'
);
CREATE VIRTUAL TABLE episodes_fts USING fts5(
	body, content='', contentless_delete=1, tokenize='` + textseg.Tokenizer + `'
);
`, fill: reindex},
	// 5: embeddings, content-addressed: a vector is filed under the hash of
	// the text embedded (events.TextHash), so a memory finds its vector by
	// its content whatever id the projection gave it.
	{sql: `
CREATE TABLE embeddings (
	namespace TEXT NOT NULL,
	user_id   TEXT NOT NULL,
	model     TEXT NOT NULL,
	hash      TEXT NOT NULL,
	vector    BLOB NOT NULL, -- vector.Encode
	PRIMARY KEY (namespace, user_id, model, hash)
) WITHOUT ROWID;
`},
	// 6: indexes for what every /v1/context asks: the core profile card and
	// the user's projects, without reading each active memory's row.
	{sql: `
CREATE INDEX memories_profile ON memories (namespace, user_id, updated)
	WHERE status = 'active' AND (tier = 1 OR kind = 'identity');
CREATE INDEX memories_projects ON memories (namespace, user_id, project)
	WHERE status = 'active' AND project != '';
`},
	// 7: identity is the tenant's. An event applied is keyed by namespace,
	// user, source and id, so another namespace's event with the same
	// source and id is applied too; a memory id is unique within its
	// namespace and user, so a client's memory_id reused elsewhere is
	// another memory. Rows applied before keep an empty scope: the stream
	// position already skips their redelivery. Memories keep their rowids,
	// which the full-text index refers to.
	{sql: `
CREATE TABLE applied_scoped (
	source    TEXT NOT NULL,
	id        TEXT NOT NULL,
	seq       INTEGER NOT NULL,
	type      TEXT NOT NULL,
	namespace TEXT NOT NULL DEFAULT '',
	user_id   TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (namespace, user_id, source, id)
) WITHOUT ROWID;
INSERT INTO applied_scoped (source, id, seq, type) SELECT source, id, seq, type FROM applied;
DROP TABLE applied;
ALTER TABLE applied_scoped RENAME TO applied;

CREATE TABLE memories_scoped (
	id            TEXT NOT NULL,` + memoryTableColumns + `
	source_events TEXT NOT NULL,
	created       INTEGER NOT NULL,
	updated       INTEGER NOT NULL,
	valid_to      INTEGER NOT NULL DEFAULT 0,
	last_accessed INTEGER NOT NULL DEFAULT 0,
	access_count  INTEGER NOT NULL DEFAULT 0,
	snoozed_until INTEGER NOT NULL DEFAULT 0,
	UNIQUE (namespace, user_id, id)
);
INSERT INTO memories_scoped (rowid, id, namespace, user_id, agent, tier, kind, category, project, topic, subject,
	predicate, content, importance, confidence, status, supersedes, superseded_by, source, session_id,
	source_events, created, updated, valid_to, last_accessed, access_count, snoozed_until)
SELECT rowid, id, namespace, user_id, agent, tier, kind, category, project, topic, subject,
	predicate, content, importance, confidence, status, supersedes, superseded_by, source, session_id,
	source_events, created, updated, valid_to, last_accessed, access_count, snoozed_until FROM memories;
DROP TABLE memories;
ALTER TABLE memories_scoped RENAME TO memories;
CREATE INDEX memories_scope_status ON memories (namespace, user_id, status, updated);
CREATE INDEX memories_scope_key ON memories (namespace, user_id, subject, predicate);
CREATE INDEX memories_profile ON memories (namespace, user_id, updated)
	WHERE status = 'active' AND (tier = 1 OR kind = 'identity');
CREATE INDEX memories_projects ON memories (namespace, user_id, project)
	WHERE status = 'active' AND project != '';
`},
	// 8: FTS5 secure-delete. It was meant to remove a deleted row's tokens
	// from the index's pages at once, but on these contentless tables a
	// delete cannot know the tokens and only marks the row; an erasure
	// merged the whole index instead, until migration 13. Kept: a
	// migration that ran is never taken back.
	{sql: `
INSERT INTO turns_fts (turns_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('secure-delete', 1);
`},
	// 9: when each forgotten user was erased: an event of theirs dated
	// before it (a worker's conclusion in flight at the time) is not
	// applied, live or in a rebuild.
	{sql: `
CREATE TABLE forgotten (
	namespace TEXT NOT NULL,
	user_id   TEXT NOT NULL,
	time      INTEGER NOT NULL, -- unix ns of the last user.forgotten
	PRIMARY KEY (namespace, user_id)
) WITHOUT ROWID;
`},
	// 10: the span of stream sequences of the events that carried each
	// turn (its first record, re-records, compression snapshots), so that
	// retention never drops some of a turn's events and keeps others
	// (PlanRetention). Rows from before know only their last event.
	{sql: `
ALTER TABLE turns ADD COLUMN first_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN carried_seq INTEGER NOT NULL DEFAULT 0;
UPDATE turns SET first_seq = seq, carried_seq = seq;
CREATE INDEX turns_carried ON turns (namespace, user_id, carried_seq);
`},
	// 11: a memory's two times. said_at is when the fact was said (its
	// turn's time): it orders the versions of a fact, so the one said last
	// is current whatever order they were extracted in; created stays when
	// engram learned it. updates records that the extractor said the fact
	// replaces what was known, for facts of keys that hold many values.
	// A history row says when what caused it was said. Rows from before
	// were said when they were learned, and a memory that superseded
	// another had replaced it.
	{sql: `
ALTER TABLE memories ADD COLUMN said_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN updates INTEGER NOT NULL DEFAULT 0;
UPDATE memories SET said_at = created, updates = (supersedes != '');
ALTER TABLE memory_history ADD COLUMN said_at INTEGER NOT NULL DEFAULT 0;
UPDATE memory_history SET said_at = time;
`},
	// 12: each user's count of turns and of memories, kept by triggers on
	// every insert and delete (apply, merge, forget, retention alike):
	// BM25's document count, which a query read by counting the user's
	// rows (100,000 index entries for a user with 100k turns); a user
	// with neither has no row, as after a rebuild. And how often each
	// collection's text changed (inserts, deletes, new text): a document
	// frequency read n changes ago is n documents from the truth at most
	// (Store.dfs).
	{sql: `
CREATE TABLE scope_counts (
	namespace        TEXT NOT NULL,
	user_id          TEXT NOT NULL,
	turns            INTEGER NOT NULL DEFAULT 0,
	memories         INTEGER NOT NULL DEFAULT 0,
	turn_changes     INTEGER NOT NULL DEFAULT 0,
	memory_changes   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (namespace, user_id)
) WITHOUT ROWID;
INSERT INTO scope_counts (namespace, user_id, turns)
	SELECT namespace, user_id, count(*) FROM turns GROUP BY namespace, user_id;
INSERT INTO scope_counts (namespace, user_id, memories)
	SELECT namespace, user_id, count(*) FROM memories GROUP BY namespace, user_id
	ON CONFLICT (namespace, user_id) DO UPDATE SET memories = excluded.memories;
CREATE TRIGGER turns_counted AFTER INSERT ON turns BEGIN
	INSERT INTO scope_counts (namespace, user_id, turns, turn_changes) VALUES (new.namespace, new.user_id, 1, 1)
	ON CONFLICT (namespace, user_id) DO UPDATE SET turns = turns + 1, turn_changes = turn_changes + 1;
END;
CREATE TRIGGER turns_uncounted AFTER DELETE ON turns BEGIN
	UPDATE scope_counts SET turns = turns - 1, turn_changes = turn_changes + 1
	WHERE namespace = old.namespace AND user_id = old.user_id;
	DELETE FROM scope_counts WHERE namespace = old.namespace AND user_id = old.user_id AND turns = 0 AND memories = 0;
END;
CREATE TRIGGER turns_rewritten AFTER UPDATE OF content, tool_calls, tool_results, attachments ON turns BEGIN
	UPDATE scope_counts SET turn_changes = turn_changes + 1 WHERE namespace = new.namespace AND user_id = new.user_id;
END;
CREATE TRIGGER memories_counted AFTER INSERT ON memories BEGIN
	INSERT INTO scope_counts (namespace, user_id, memories, memory_changes) VALUES (new.namespace, new.user_id, 1, 1)
	ON CONFLICT (namespace, user_id) DO UPDATE SET memories = memories + 1, memory_changes = memory_changes + 1;
END;
CREATE TRIGGER memories_uncounted AFTER DELETE ON memories BEGIN
	UPDATE scope_counts SET memories = memories - 1, memory_changes = memory_changes + 1
	WHERE namespace = old.namespace AND user_id = old.user_id;
	DELETE FROM scope_counts WHERE namespace = old.namespace AND user_id = old.user_id AND turns = 0 AND memories = 0;
END;
CREATE TRIGGER memories_rewritten AFTER UPDATE OF subject, predicate, content, status ON memories BEGIN
	UPDATE scope_counts SET memory_changes = memory_changes + 1 WHERE namespace = new.namespace AND user_id = new.user_id;
END;
`},
	// 13: full-text rows deleted by their words. With contentless_delete a
	// delete only marked the row gone, its words stayed on the index's
	// pages until a merge, and an erasure had to merge the whole index
	// (about 0.4 s a forget at 100,000 turns, growing with the index).
	// Without it, a delete names the row's words (FTS5's 'delete', from
	// the text the read model keeps: wtx.unindex), and secure-delete
	// takes them off the pages at once. The tables are recreated and
	// filled from the rows the old ones held, which also drops the words
	// of every row deleted or edited before.
	{sql: `
CREATE TEMP TABLE fts_turns AS SELECT rowid AS id FROM turns_fts;
CREATE TEMP TABLE fts_memories AS SELECT rowid AS id FROM memories_fts;
CREATE TEMP TABLE fts_episodes AS SELECT rowid AS id FROM episodes_fts;
DROP TABLE turns_fts;
DROP TABLE memories_fts;
DROP TABLE episodes_fts;
CREATE VIRTUAL TABLE turns_fts USING fts5(body, content='', tokenize='` + textseg.Tokenizer + `');
CREATE VIRTUAL TABLE memories_fts USING fts5(body, content='', tokenize='` + textseg.Tokenizer + `');
CREATE VIRTUAL TABLE episodes_fts USING fts5(body, content='', tokenize='` + textseg.Tokenizer + `');
INSERT INTO turns_fts (turns_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('secure-delete', 1);
`, fill: reindex},
	// 14: history entries in one shape: old and new are the content before
	// and after, fields the other fields changed (JSON), note the rest.
	// Rows from before are rewritten so (fillHistoryShape).
	{sql: `
ALTER TABLE memory_history ADD COLUMN fields TEXT NOT NULL DEFAULT '';
ALTER TABLE memory_history ADD COLUMN note TEXT NOT NULL DEFAULT '';
`, fill: fillHistoryShape},
	// 15: a day's log in parts (seed 001 §6.3 step 5): each extraction
	// writes the part of the day its turns were in, named by the part
	// column; a day written whole (migration, compression) is part ''.
	{sql: `
CREATE TABLE daily_parts (
	namespace  TEXT NOT NULL,
	user_id    TEXT NOT NULL,
	date       TEXT NOT NULL,
	channel    TEXT NOT NULL,
	part       TEXT NOT NULL DEFAULT '',
	summary    TEXT NOT NULL,
	raw_tokens INTEGER NOT NULL,
	source     TEXT NOT NULL,
	compressed INTEGER NOT NULL DEFAULT 0,
	updated    INTEGER NOT NULL,
	PRIMARY KEY (namespace, user_id, date, channel, part)
) WITHOUT ROWID;
INSERT INTO daily_parts (namespace, user_id, date, channel, part, summary, raw_tokens, source, compressed, updated)
	SELECT namespace, user_id, date, channel, '', summary, raw_tokens, source, compressed, updated FROM daily_summaries;
DROP TABLE daily_summaries;
ALTER TABLE daily_parts RENAME TO daily_summaries;
`},
	// 16: the identity a user confirmed on first meeting the agent (seed
	// 004 §3), whose row also says they were asked; and the nightly
	// reports (seed 000 §7.4 step 8), one per user and night.
	{sql: `
CREATE TABLE identities (
	namespace TEXT NOT NULL,
	user_id   TEXT NOT NULL,
	agent     TEXT NOT NULL, -- JSON of events.AgentIdentity
	summary   TEXT NOT NULL,
	confirmed INTEGER NOT NULL, -- unix ns, the event's time
	PRIMARY KEY (namespace, user_id)
) WITHOUT ROWID;
CREATE TABLE reports (
	namespace TEXT NOT NULL,
	user_id   TEXT NOT NULL,
	date      TEXT NOT NULL,
	data      TEXT NOT NULL, -- JSON of events.ConsolidationReport
	time      INTEGER NOT NULL,
	PRIMARY KEY (namespace, user_id, date)
) WITHOUT ROWID;
`},
}

func migrate(ctx context.Context, db *sql.DB) error {
	var version int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this engram (%d): upgrade engram or rebuild", version, len(migrations))
	}
	for i := version; i < len(migrations); i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[i].sql); err != nil {
			quiet.Rollback(tx)
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if fill := migrations[i].fill; fill != nil {
			if err := fill(ctx, tx); err != nil {
				quiet.Rollback(tx)
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, i+1)); err != nil {
			quiet.Rollback(tx)
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
	}
	return nil
}

// fillHistoryShape rewrites the history rows written before migration 14
// into its one shape. A rebuild from the stream writes them exactly; this
// gives an existing read model the same shape without one, with the
// memory's current content where a row did not keep the content it had.
func fillHistoryShape(ctx context.Context, tx *sql.Tx) error {
	current := `(SELECT m.content FROM memories m WHERE m.namespace = memory_history.namespace
		AND m.user_id = memory_history.user_id AND m.id = memory_history.memory_id)`
	for _, q := range []string{
		`UPDATE memory_history SET note = new, new = old WHERE change = 'superseded' OR change = 'merged' AND new LIKE 'merged into %'`,
		`UPDATE memory_history SET note = substr(new, 1, instr(new, '): ')), new = substr(new, instr(new, '): ') + 3)
			WHERE change = 'merged' AND new LIKE 'absorbed %' AND instr(new, '): ') > 0`,
		`UPDATE memory_history SET note = 'said again: ' || new, old = coalesce(` + current + `, ''), new = coalesce(` + current + `, '')
			WHERE change = 'merged' AND old = '' AND note = ''`,
		`UPDATE memory_history SET note = new, new = coalesce(` + current + `, '') WHERE change = 'dropped'`,
		`UPDATE memory_history SET note = new, old = coalesce(` + current + `, ''), new = coalesce(` + current + `, '')
			WHERE change = 'archived'`,
		`UPDATE memory_history SET note = 'until ' || new, old = coalesce(` + current + `, ''), new = coalesce(` + current + `, '')
			WHERE change = 'snoozed'`,
		`UPDATE memory_history SET old = coalesce(` + current + `, ''), new = coalesce(` + current + `, '')
			WHERE change IN ('confirmed', 'ignored')`,
		`UPDATE memory_history SET note = new, new = '' WHERE change = 'deleted'`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("history shape: %w", err)
		}
	}
	// "updated" rows held the whole memory as JSON, before and after.
	rows, err := tx.QueryContext(ctx, `SELECT id, old, new FROM memory_history WHERE change = 'updated' AND old LIKE '{%'`)
	if err != nil {
		return fmt.Errorf("history shape: %w", err)
	}
	type row struct {
		id               int64
		old, new, fields string
	}
	var fix []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.old, &r.new); err != nil {
			quiet.Close(rows)
			return fmt.Errorf("history shape: %w", err)
		}
		var before, after map[string]any
		if json.Unmarshal([]byte(r.old), &before) != nil || json.Unmarshal([]byte(r.new), &after) != nil {
			continue
		}
		fields := map[string]memory.Delta{}
		for _, k := range []string{"kind", "category", "subject", "predicate", "project", "topic", "importance", "confidence"} {
			diff(fields, k, text(before[k]), text(after[k]))
		}
		r.old, r.new = text(before["content"]), text(after["content"])
		if len(fields) > 0 {
			b, _ := json.Marshal(fields)
			r.fields = string(b)
		}
		fix = append(fix, r)
	}
	quiet.Close(rows)
	if err := rows.Err(); err != nil {
		return fmt.Errorf("history shape: %w", err)
	}
	for _, r := range fix {
		if _, err := tx.ExecContext(ctx, `UPDATE memory_history SET old = ?, new = ?, fields = ? WHERE id = ?`,
			r.old, r.new, r.fields, r.id); err != nil {
			return fmt.Errorf("history shape: %w", err)
		}
	}
	return nil
}

// text is a JSON value of a memory as history shows it.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return num(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
