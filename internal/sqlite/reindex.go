package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// reindex fills the full-text tables a migration recreated, for the rows
// the old tables held (listed in temp.fts_*), from the text the read model
// keeps: the same bodies apply writes.
func reindex(ctx context.Context, tx *sql.Tx) error {
	steps := []struct {
		f     ftsTable
		query string
	}{
		{turnsFTS, turnsFTS.rows + ` JOIN temp.fts_turns f ON f.id = t.id`},
		{memoriesFTS, memoriesFTS.rows + ` JOIN temp.fts_memories f ON f.id = m.rowid`},
		{episodesFTS, episodesFTS.rows + ` JOIN temp.fts_episodes f ON f.id = e.rid`},
	}
	for _, st := range steps {
		if err := reindexTable(ctx, tx, st.f.name, st.query, st.f.body); err != nil {
			return fmt.Errorf("reindex %s: %w", st.f.name, err)
		}
	}
	_, err := tx.ExecContext(ctx, `DROP TABLE temp.fts_turns; DROP TABLE temp.fts_memories; DROP TABLE temp.fts_episodes`)
	return err
}

func reindexTable(ctx context.Context, tx *sql.Tx, table, query string, body func(func(...any) error) (int64, string, error)) error {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer quiet.Close(rows)
	ins, err := tx.PrepareContext(ctx, `INSERT INTO `+table+` (rowid, body) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer quiet.Close(ins)
	for rows.Next() {
		id, text, err := body(rows.Scan)
		if err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, id, text); err != nil {
			return fmt.Errorf("row %d: %w", id, err)
		}
	}
	return rows.Err()
}

func turnBody(scan func(...any) error) (int64, string, error) {
	var id int64
	var scope memory.Scope
	var t events.TurnRecorded
	var calls, results, attachments string
	if err := scan(&id, &scope.Namespace, &scope.User, &t.Speaker, &t.Content, &calls, &results, &attachments); err != nil {
		return 0, "", err
	}
	for _, f := range []struct {
		raw string
		dst any
	}{{calls, &t.ToolCalls}, {results, &t.ToolResults}, {attachments, &t.Attachments}} {
		if err := unmarshalIfAny(f.raw, f.dst); err != nil {
			return 0, "", fmt.Errorf("turn %d: %w", id, err)
		}
	}
	return id, textseg.IndexIn(partition(scope), turnText(&t)), nil
}

func storedMemoryBody(scan func(...any) error) (int64, string, error) {
	var id int64
	var scope memory.Scope
	var subject, predicate, content string
	if err := scan(&id, &scope.Namespace, &scope.User, &subject, &predicate, &content); err != nil {
		return 0, "", err
	}
	return id, memoryBody(scope, subject, predicate, content), nil
}

func episodeBody(scan func(...any) error) (int64, string, error) {
	var id int64
	var scope memory.Scope
	var d events.Episode
	var actions, entities, tools string
	if err := scan(&id, &scope.Namespace, &scope.User, &d.Summary, &d.Goal, &actions, &entities, &tools); err != nil {
		return 0, "", err
	}
	for _, f := range []struct {
		raw string
		dst any
	}{{actions, &d.Actions}, {entities, &d.Entities}, {tools, &d.Tools}} {
		if err := unmarshalIfAny(f.raw, f.dst); err != nil {
			return 0, "", fmt.Errorf("episode %d: %w", id, err)
		}
	}
	return id, textseg.IndexIn(partition(scope), episodeText(&d)), nil
}

// unmarshalIfAny reads what marshalIfAny or jsonList wrote ("" for none).
func unmarshalIfAny(raw string, dst any) error {
	if raw == "" {
		return nil
	}
	return json.Unmarshal([]byte(raw), dst)
}
