package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

const turnHitColumns = `t.id, t.session_id, t.turn_index, t.role, t.speaker, t.content, t.attachments, t.time`

func scanTurnHits(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}, withRank bool) ([]memory.TurnHit, error) {
	var out []memory.TurnHit
	for rows.Next() {
		var h memory.TurnHit
		var at int64
		dst := []any{&h.ID, &h.SessionID, &h.TurnIndex, &h.Role, &h.Speaker, &h.Content, &h.Attachments, &at}
		if withRank {
			dst = append(dst, &h.BM25)
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		h.Time = time.Unix(0, at).UTC()
		h.Key = TurnID(h.ID)
		h.BM25 = -h.BM25
		out = append(out, h)
	}
	return out, rows.Err()
}

// RecallTurns searches a scope's turns for the text a user typed and
// returns up to limit, best BM25 first. A query of stopwords alone
// (textseg.Informative) matches nearly every turn and BM25 has nothing to
// rank them by, so its matches come newest first, which costs only the
// rows returned instead of scoring all of them.
func (s *Store) RecallTurns(ctx context.Context, scope memory.Scope, query string, limit int) ([]memory.TurnHit, error) {
	match := textseg.MatchIn(partition(scope), query)
	if match == "" {
		return nil, nil
	}
	order := matchOrder(query, "rowid")
	// The index ranks and cuts first, then the best few are read from
	// turns: joining before the LIMIT read every matching turn's row. The
	// partition makes the index's matches the user's own; the SQL filter
	// still decides (after a partition collision it may return fewer).
	rows, err := s.queryRead(ctx, `SELECT `+turnHitColumns+`, f.rank
		FROM (SELECT rowid, rank FROM turns_fts WHERE turns_fts MATCH ? ORDER BY `+order+limitSQL(limit)+`) f
		JOIN turns t ON t.id = f.rowid
		WHERE t.namespace = ? AND t.user_id = ?
		ORDER BY f.`+order,
		match, scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	defer rows.Close()
	return scanTurnHits(rows, true)
}

// TurnsAround returns the turns within radius of each key (the keys'
// own turns excluded), for neighbour expansion.
func (s *Store) TurnsAround(ctx context.Context, scope memory.Scope, keys []memory.TurnKey, radius int) ([]memory.TurnHit, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	// A keyed join, so each key is one range on the unique index (a long
	// OR of conditions made SQLite scan every turn of the user); the keys
	// go in as one JSON argument, so the SQL is fixed and prepared once.
	ranges := make([][3]any, len(keys))
	for i, k := range keys {
		ranges[i] = [3]any{k.SessionID, k.TurnIndex - radius, k.TurnIndex + radius}
	}
	js, err := json.Marshal(ranges)
	if err != nil {
		return nil, fmt.Errorf("turns around: %w", err)
	}
	rows, err := s.queryRead(ctx, `SELECT DISTINCT `+turnHitColumns+` FROM json_each(?) k CROSS JOIN turns t
		WHERE t.namespace = ? AND t.user_id = ? AND t.session_id = k.value->>0
			AND t.turn_index BETWEEN k.value->>1 AND k.value->>2`, string(js), scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("turns around: %w", err)
	}
	defer rows.Close()
	hits, err := scanTurnHits(rows, false)
	if err != nil {
		return nil, err
	}
	own := make(map[memory.TurnKey]bool, len(keys))
	for _, k := range keys {
		own[k] = true
	}
	out := hits[:0]
	for _, h := range hits {
		if !own[memory.TurnKey{SessionID: h.SessionID, TurnIndex: h.TurnIndex}] {
			out = append(out, h)
		}
	}
	return out, nil
}

// RecentTurns returns a scope's turns since a time, newest first.
func (s *Store) RecentTurns(ctx context.Context, scope memory.Scope, since time.Time, limit int) ([]memory.TurnHit, error) {
	rows, err := s.queryRead(ctx, `SELECT `+turnHitColumns+` FROM turns t
		WHERE t.namespace = ? AND t.user_id = ? AND t.time >= ? ORDER BY t.time DESC, t.id DESC`+limitSQL(limit),
		scope.Namespace, scope.User, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("recent turns: %w", err)
	}
	defer rows.Close()
	return scanTurnHits(rows, false)
}

// RecallMemories searches a scope's active memories for the text a user
// typed and returns up to limit, best BM25 first (newest first for a
// query of stopwords alone, as RecallTurns).
func (s *Store) RecallMemories(ctx context.Context, scope memory.Scope, query string, limit int) ([]memory.MemoryHit, error) {
	match := textseg.MatchIn(partition(scope), query)
	if match == "" {
		return nil, nil
	}
	rows, err := s.queryRead(ctx, `SELECT m.rowid, `+prefixed("m.", memoryColumns)+`, bm25(memories_fts) AS rank
		FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.namespace = ? AND m.user_id = ? AND m.status = 'active'
		ORDER BY `+matchOrder(query, "memories_fts.rowid")+limitSQL(limit),
		match, scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	defer rows.Close()
	var out []memory.MemoryHit
	for rows.Next() {
		var rank float64
		m, err := scanMemoryWith(rows, &rank)
		if err != nil {
			return nil, fmt.Errorf("recall memories: %w", err)
		}
		out = append(out, memory.MemoryHit{Memory: m.Memory, BM25: -rank})
	}
	return out, rows.Err()
}

// matchOrder is how a full-text query's matches are ordered: by BM25
// (rank), or newest first (the rowid column given, descending) for a query
// of stopwords alone.
func matchOrder(query, rowid string) string {
	if !textseg.Informative(query) {
		return rowid + " DESC"
	}
	return "rank"
}

// limitSQL is a LIMIT clause with its value written in. A bound LIMIT
// made SQLite prepare the statement again on every run (its value feeds the
// planner), which cost half of a small query; a literal gives one cached
// statement per limit, and limits come from a handful of values.
func limitSQL(n int) string {
	return " LIMIT " + strconv.Itoa(max(n, 0))
}

// prefixed qualifies a comma-separated column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
