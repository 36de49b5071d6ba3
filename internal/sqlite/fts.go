package sqlite

import (
	"fmt"

	"github.com/engramhq/engram/internal/quiet"
)

// ftsTable is a full-text table and how the text of each of its rows is
// made from the row it indexes. The tables are contentless (the text
// lives in turns, memories and episodes), so FTS5 removes a row's words
// only when told them again: unindex reads them back from the row with
// the same body functions that index it and the migrations reindex with.
// Whatever changes what a body holds (textseg, turnText, episodeText,
// memoryBody) needs a migration that reindexes, or a delete would name
// other words than those indexed.
type ftsTable struct {
	name string
	// rows selects the rowid and the columns body reads, from the base
	// table under the alias the where clauses use.
	rows string
	body func(scan func(...any) error) (int64, string, error)
	// held counts the table's rows of an id; unindex deletes one by its words.
	held, unindex stmt
}

var (
	turnsFTS = ftsTable{"turns_fts", `SELECT t.id, t.namespace, t.user_id, t.speaker, t.content, t.tool_calls,
		t.tool_results, t.attachments FROM turns t`, turnBody, stmtHeldTurns, stmtUnindexTurns}
	memoriesFTS = ftsTable{"memories_fts", `SELECT m.rowid, m.namespace, m.user_id, m.subject, m.predicate, m.content
		FROM memories m`, storedMemoryBody, stmtHeldMemories, stmtUnindexMemories}
	episodesFTS = ftsTable{"episodes_fts", `SELECT e.rid, e.namespace, e.user_id, e.summary, e.goal, e.actions,
		e.entities, e.tools FROM episodes e`, episodeBody, stmtHeldEpisodes, stmtUnindexEpisodes}
)

// unindex removes from f the rows of its base table that where (a WHERE
// clause on the alias of f.rows) selects, before they are deleted or
// changed. With the table's secure-delete option on, FTS5's 'delete'
// takes each word off the index's pages at once, so an erasure costs
// what it erases rather than a merge of the whole index, and an edited
// or deleted memory leaves none of its old words behind.
func (w *wtx) unindex(f ftsTable, where string, args ...any) error {
	if f.name == turnsFTS.name {
		// A row to remove may be one held back in this transaction.
		if _, err := w.flushText(); err != nil {
			return err
		}
	}
	rows, err := w.tx.QueryContext(w.ctx, f.rows+" "+where, args...)
	if err != nil {
		return fmt.Errorf("unindex %s: %w", f.name, err)
	}
	defer quiet.Close(rows)
	// The base table is only read while the index is written: the
	// deletes never move the rows this cursor walks.
	for rows.Next() {
		id, body, err := f.body(rows.Scan)
		if err != nil {
			return fmt.Errorf("unindex %s: %w", f.name, err)
		}
		if err := w.unindexRow(f, id, body); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("unindex %s: %w", f.name, err)
	}
	return nil
}

// unindexRow removes row id, indexed with body, from table, if the table
// holds it: a row never indexed (a rejected memory) must not be deleted,
// since FTS5 would count one row fewer than it holds.
func (w *wtx) unindexRow(f ftsTable, id int64, body string) error {
	var held int
	if err := w.queryRow(f.held, id).Scan(&held); err != nil {
		return fmt.Errorf("unindex %s row %d: %w", f.name, id, err)
	}
	if held == 0 {
		return nil
	}
	if _, err := w.exec(f.unindex, id, body); err != nil {
		return fmt.Errorf("unindex %s row %d: %w", f.name, id, err)
	}
	return nil
}
