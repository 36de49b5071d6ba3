package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
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

// RecallTurns searches a scope's turns for q and returns up to limit,
// best first. FTS5 finds the candidates (its own BM25 orders them, which
// only decides the margin of a long list); they are then scored in Go by
// BM25 with the scope's own statistics and q's term weights, so another
// tenant's text never moves a user's ranking (textseg.Scorer).
func (s *Store) RecallTurns(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.TurnHit, error) {
	if q.Empty() {
		return nil, nil
	}
	part := partition(scope)
	st, q, err := s.lexicalStats(ctx, "turns_fts", `SELECT count(*) FROM turns WHERE namespace = ? AND user_id = ?`, scope, part, q)
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	if q.Empty() {
		return nil, nil
	}
	order := "rank"
	if q.Uninformative {
		order = "rowid DESC"
	}
	// The index ranks and cuts first, then the best few are read from
	// turns: joining before the LIMIT read every matching turn's row. The
	// partition makes the index's matches the user's own; the SQL filter
	// still decides (after a partition collision it may return fewer).
	rows, err := s.queryRead(ctx, `SELECT `+turnHitColumns+`, f.rank
		FROM (SELECT rowid, rank FROM turns_fts WHERE turns_fts MATCH ? ORDER BY `+order+limitSQL(max(limit, candidateFloor))+`) f
		JOIN turns t ON t.id = f.rowid
		WHERE t.namespace = ? AND t.user_id = ?`,
		textseg.MatchTerms(part, q.Terms), scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	defer quiet.Close(rows)
	hits, err := scanTurnHits(rows, true)
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = h.Text()
	}
	scores := scoreAll(q, st, texts)
	for i := range hits {
		hits[i].BM25 = scores[i]
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if q.Uninformative {
			return hits[i].ID > hits[j].ID
		}
		if hits[i].BM25 != hits[j].BM25 {
			return hits[i].BM25 > hits[j].BM25
		}
		return hits[i].ID > hits[j].ID
	})
	return hits[:min(len(hits), limit)], nil
}

// candidateFloor is the fewest candidates a lexical path scores in Go.
const candidateFloor = 100

// maxMatchTerms bounds the terms of one MATCH: a dialogue-length query
// keeps its most informative ones by the user's own statistics.
const maxMatchTerms = 32

// lexicalStats reads the scope's statistics for q from one full-text
// table: its document count (countSQL, with namespace and user) and each
// term's document frequency in the scope's partition. It returns q cut to
// its maxMatchTerms most informative terms. The average length is left to
// scoreAll, which takes it from the documents it scores.
func (s *Store) lexicalStats(ctx context.Context, fts, countSQL string, scope memory.Scope, part string, q textseg.Query) (textseg.Stats, textseg.Query, error) {
	st := textseg.Stats{DF: make(map[string]int, len(q.Terms))}
	if err := s.r.QueryRowContext(ctx, countSQL, scope.Namespace, scope.User).Scan(&st.Docs); err != nil {
		return st, q, err
	}
	// Terms by weight first: the document frequencies of the heaviest
	// maxDFTerms are read, the rest cannot be among the most informative
	// unless they are rarer than any of those.
	terms := q.Terms[:min(len(q.Terms), maxDFTerms)]
	matches := make([]string, len(terms))
	for i, t := range terms {
		matches[i] = textseg.MatchTerms(part, []textseg.Term{t})
	}
	js, err := json.Marshal(matches)
	if err != nil {
		return st, q, err
	}
	rows, err := s.queryRead(ctx, `SELECT j.key, (SELECT count(*) FROM `+fts+` WHERE `+fts+` MATCH j.value) FROM json_each(?) j`, string(js))
	if err != nil {
		return st, q, err
	}
	defer quiet.Close(rows)
	for rows.Next() {
		var i, n int
		if err := rows.Scan(&i, &n); err != nil {
			return st, q, err
		}
		st.DF[terms[i].Token] = n
	}
	if err := rows.Err(); err != nil {
		return st, q, err
	}
	q.Terms = terms
	// A term no row of the scope holds can match nothing: leave it out of
	// the MATCH.
	q.Terms = slices.DeleteFunc(slices.Clone(q.Terms), func(t textseg.Term) bool { return st.DF[t.Token] == 0 })
	return st, textseg.Select(q, st, maxMatchTerms), nil
}

// maxDFTerms bounds the document-frequency lookups of one query (each is
// a count over the scope's own posting list of the term).
const maxDFTerms = 48

// scoreAll scores texts for q with the scope's statistics, the average
// length taken from texts themselves.
func scoreAll(q textseg.Query, st textseg.Stats, texts []string) []float64 {
	total := 0
	for _, t := range texts {
		total += len(textseg.Tokens(t))
	}
	if len(texts) > 0 {
		st.AvgLen = float64(total) / float64(len(texts))
	}
	sc := textseg.NewScorer(q, st)
	out := make([]float64, len(texts))
	for i, t := range texts {
		out[i], _ = sc.Score(t)
	}
	return out
}

// TurnsAround returns the turns within radius of each key (the keys'
// own turns excluded), for neighbour expansion; the first far keys (the
// best hits) reach one turn further, in the same read.
func (s *Store) TurnsAround(ctx context.Context, scope memory.Scope, keys []memory.TurnKey, radius, far int) ([]memory.TurnHit, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	// A keyed join, so each key is one range on the unique index (a long
	// OR of conditions made SQLite scan every turn of the user); the keys
	// go in as one JSON argument, so the SQL is fixed and prepared once.
	ranges := make([][3]any, len(keys))
	for i, k := range keys {
		r := radius
		if i < far {
			r++
		}
		ranges[i] = [3]any{k.SessionID, k.TurnIndex - r, k.TurnIndex + r}
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
	defer quiet.Close(rows)
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

// TurnsWithin returns a scope's turns said within [from, to), each
// session's first turns first (a conversation opens with its news), up to
// limit.
func (s *Store) TurnsWithin(ctx context.Context, scope memory.Scope, from, to time.Time, limit int) ([]memory.TurnHit, error) {
	rows, err := s.queryRead(ctx, `SELECT `+turnHitColumns+` FROM turns t
		WHERE t.namespace = ? AND t.user_id = ? AND t.time >= ? AND t.time < ?
		ORDER BY t.turn_index, t.time, t.id`+limitSQL(limit),
		scope.Namespace, scope.User, from.UnixNano(), to.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("turns within: %w", err)
	}
	defer quiet.Close(rows)
	return scanTurnHits(rows, false)
}

// SaidWithin reports whether a scope has a turn said within [from, to),
// from the index alone.
func (s *Store) SaidWithin(ctx context.Context, scope memory.Scope, from, to time.Time) (bool, error) {
	var said bool
	err := s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM turns
		WHERE namespace = ? AND user_id = ? AND time >= ? AND time < ?)`,
		scope.Namespace, scope.User, from.UnixNano(), to.UnixNano()).Scan(&said)
	if err != nil {
		return false, fmt.Errorf("turns said within: %w", err)
	}
	return said, nil
}

// RecentTurns returns a scope's turns since a time, newest first.
func (s *Store) RecentTurns(ctx context.Context, scope memory.Scope, since time.Time, limit int) ([]memory.TurnHit, error) {
	rows, err := s.queryRead(ctx, `SELECT `+turnHitColumns+` FROM turns t
		WHERE t.namespace = ? AND t.user_id = ? AND t.time >= ? ORDER BY t.time DESC, t.id DESC`+limitSQL(limit),
		scope.Namespace, scope.User, since.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("recent turns: %w", err)
	}
	defer quiet.Close(rows)
	return scanTurnHits(rows, false)
}

// RecallMemories searches a scope's active memories for q and returns up
// to limit, best first, scored as RecallTurns scores turns. Every active
// memory the MATCH finds is scored (a user holds thousands at most), so
// the ranking depends on the scope's data alone.
func (s *Store) RecallMemories(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.MemoryHit, error) {
	if q.Empty() {
		return nil, nil
	}
	part := partition(scope)
	st, q, err := s.lexicalStats(ctx, "memories_fts", `SELECT count(*) FROM memories WHERE namespace = ? AND user_id = ?`, scope, part, q)
	if err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	if q.Empty() {
		return nil, nil
	}
	rows, err := s.queryRead(ctx, `SELECT m.rowid, `+prefixed("m.", memoryColumns)+`
		FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.namespace = ? AND m.user_id = ? AND m.status = 'active'`+limitSQL(maxMemoryCandidates),
		textseg.MatchTerms(part, q.Terms), scope.Namespace, scope.User)
	if err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	defer quiet.Close(rows)
	var out []memory.MemoryHit
	var texts []string
	for rows.Next() {
		m, err := scanMemoryWith(rows)
		if err != nil {
			return nil, fmt.Errorf("recall memories: %w", err)
		}
		out = append(out, memory.MemoryHit{Memory: m.Memory})
		texts = append(texts, m.Subject+" "+m.Predicate+"\n"+m.Content)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	scores := scoreAll(q, st, texts)
	for i := range out {
		out[i].BM25 = scores[i]
	}
	sort.SliceStable(out, func(i, j int) bool {
		if q.Uninformative && !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		if out[i].BM25 != out[j].BM25 {
			return out[i].BM25 > out[j].BM25
		}
		return out[i].ID < out[j].ID
	})
	return out[:min(len(out), limit)], nil
}

// maxMemoryCandidates bounds the memories one query scores.
const maxMemoryCandidates = 2000

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
