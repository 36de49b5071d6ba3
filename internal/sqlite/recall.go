package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/gencache"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

const turnHitColumns = `t.id, t.session_id, t.turn_index, t.role, t.speaker, t.content, t.attachments, t.time`

// scanTurnHits reads rows of turnHitColumns; n is how many are expected
// (a hint, bounded).
// Each is scanned in place in the slice: a TurnHit scanned on its own
// (its fields' addresses go to Scan) was a heap allocation per row.
func scanTurnHits(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}, n int) ([]memory.TurnHit, error) {
	out := make([]memory.TurnHit, 0, min(max(n, 0), 1000))
	var at int64
	for rows.Next() {
		out = append(out, memory.TurnHit{})
		h := &out[len(out)-1]
		if err := rows.Scan(&h.ID, &h.SessionID, &h.TurnIndex, &h.Role, &h.Speaker, &h.Content, &h.Attachments, &at); err != nil {
			return nil, err
		}
		h.Time = time.Unix(0, at).UTC()
		h.Key = TurnID(h.ID)
	}
	return out, rows.Err()
}

// RecallTurns searches a scope's turns for q and returns up to limit,
// best first. The index finds the candidates (candidates: a long list is
// cut by what the postings and lengths tell); they are then scored in Go
// by BM25 with the scope's own statistics and q's term weights, so
// another tenant's text never moves a user's ranking (textseg.Scorer).
func (s *Store) RecallTurns(ctx context.Context, scope memory.Scope, q textseg.Query, limit int) ([]memory.TurnHit, error) {
	if q.Empty() {
		return nil, nil
	}
	part := partition(scope)
	st, q, err := s.lexicalStats(ctx, turnTexts, scope, part, q)
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	if q.Empty() {
		return nil, nil
	}
	k := max(limit, candidateFloor)
	var ids []int64
	if q.Uninformative {
		// Stopwords alone: the newest turns that hold them.
		ids, err = s.rowids(ctx, `SELECT rowid FROM turns_fts WHERE turns_fts MATCH ? ORDER BY rowid DESC`+limitSQL(k),
			textseg.MatchTerms(part, q.Terms))
	} else {
		ids, err = s.candidates(ctx, turnTexts, part, st, matchTerms(q, st), k, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	rows, err := s.turnRows(ctx, scope, ids)
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	defer quiet.Close(rows)
	hits, err := scanTurnHits(rows, len(ids))
	if err != nil {
		return nil, fmt.Errorf("recall turns: %w", err)
	}
	texts := make([]string, len(hits))
	for i, h := range hits {
		texts[i] = h.Text()
	}
	scores, toks := scoreAll(q, st, texts)
	for i := range hits {
		hits[i].BM25, hits[i].Tokens = scores[i], toks[i]
	}
	slices.SortStableFunc(hits, func(a, b memory.TurnHit) int { // generic: no reflection to move the hits
		if !q.Uninformative && a.BM25 != b.BM25 {
			return cmp.Compare(b.BM25, a.BM25)
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return hits[:min(len(hits), limit)], nil
}

// turnRows reads the turns of ids that are scope's: the partition makes
// the index's rows the user's own, and the SQL filter still decides
// (after a partition collision it may return fewer). The ids lead the
// join, each read by its primary key: left to itself, the planner walked
// every one of the user's turns in an index and probed the few for each
// (100,000 entries a query for a user with 100k turns).
func (s *Store) turnRows(ctx context.Context, scope memory.Scope, ids []int64) (*sql.Rows, error) {
	js, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	return s.queryRead(ctx, turnRowsSQL, string(js), scope.Namespace, scope.User)
}

const turnRowsSQL = `SELECT ` + turnHitColumns + ` FROM json_each(?) j CROSS JOIN turns t ON t.id = j.value
	WHERE t.namespace = ? AND t.user_id = ?`

// candidateFloor is the fewest candidates a lexical path scores in Go.
const candidateFloor = 100

// maxScoreTerms bounds the terms a candidate is scored by, and
// maxMatchTerms those of the MATCH that finds the candidates: a
// dialogue-length query keeps its most informative ones by the user's own
// statistics.
const (
	maxScoreTerms = 128
	maxMatchTerms = 16
	// matchPostings bounds the postings one MATCH walks (the sum of its
	// terms' document frequencies; its cost, as the index ranks every
	// row it finds): past the first minMatchTerms, a term that would
	// pass it is left to scoring. Such a term is a common one, whose
	// rows the rarer terms find when they matter.
	matchPostings = 3000
	minMatchTerms = 4
)

// matchTerms are the terms of q that find its candidates: the most
// informative first, up to maxMatchTerms and matchPostings.
func matchTerms(q textseg.Query, st textseg.Stats) []textseg.Term {
	if len(q.Terms) <= minMatchTerms {
		return q.Terms
	}
	sc := textseg.NewScorer(q, st)
	idx := make([]int, len(q.Terms))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(sc.Informativeness(b), sc.Informativeness(a)) })
	out := make([]textseg.Term, 0, min(len(idx), maxMatchTerms))
	postings := 0
	for _, i := range idx {
		df := st.DF[q.Terms[i].Token]
		if len(out) >= maxMatchTerms || (len(out) >= minMatchTerms && postings+df > matchPostings) {
			continue
		}
		postings += df
		out = append(out, q.Terms[i])
	}
	return out
}

// collection is one full-text table and the columns of scope_counts that
// count its documents and their changes.
type collection struct{ fts, docs, changes string }

var (
	turnTexts   = collection{fts: "turns_fts", docs: "turns", changes: "turn_changes"}
	memoryTexts = collection{fts: "memories_fts", docs: "memories", changes: "memory_changes"}
)

// lexicalStats reads the scope's statistics for q from one collection:
// its document count, kept per user by triggers (scope_counts), and each
// term's document frequency in the scope's partition, from Store.dfs or
// else counted in the index. Every term is weighed (up to maxDFTerms), so
// a long query keeps its rare words wherever they stand. It returns q
// without the terms no document holds, cut to its maxScoreTerms most
// informative terms (its candidates are found by fewer: matchTerms). The
// average length is left to scoreAll, which takes it from the documents
// it scores.
func (s *Store) lexicalStats(ctx context.Context, c collection, scope memory.Scope, part string, q textseg.Query) (textseg.Stats, textseg.Query, error) {
	st := textseg.Stats{DF: make(map[string]int, len(q.Terms))}
	rows, err := s.queryRead(ctx, `SELECT `+c.docs+`, `+c.changes+` FROM scope_counts WHERE namespace = ? AND user_id = ?`,
		scope.Namespace, scope.User)
	if err != nil {
		return st, q, err
	}
	var changes int64
	found := rows.Next()
	if found {
		err = rows.Scan(&st.Docs, &changes)
	}
	quiet.Close(rows)
	if err = errors.Join(err, rows.Err()); err != nil {
		return st, q, err
	}
	if !found || st.Docs == 0 {
		return st, textseg.Query{}, nil
	}
	terms := q.Terms[:min(len(q.Terms), maxDFTerms)]
	keys := make([]dfKey, len(terms))
	var missing []int
	for i, t := range terms {
		keys[i] = dfKeyOf(c.fts, part, t)
		if n, ok := s.cachedDF(keys[i], int64(st.Docs), changes); ok {
			st.DF[t.Token] = n
		} else {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		matches := make([]string, len(missing))
		for j, i := range missing {
			matches[j] = textseg.MatchTerms(part, terms[i:i+1])
		}
		js, err := json.Marshal(matches)
		if err != nil {
			return st, q, err
		}
		rows, err := s.queryRead(ctx, `SELECT j.key, (SELECT count(*) FROM `+c.fts+` WHERE `+c.fts+` MATCH j.value) FROM json_each(?) j`, string(js))
		if err != nil {
			return st, q, err
		}
		defer quiet.Close(rows)
		for rows.Next() {
			var j, n int
			if err := rows.Scan(&j, &n); err != nil {
				return st, q, err
			}
			i := missing[j]
			st.DF[terms[i].Token] = n
			s.dfs.Put(keys[i], dfSeen{df: n, docs: int64(st.Docs), changes: changes})
		}
		if err := rows.Err(); err != nil {
			return st, q, err
		}
	}
	// A term no row of the scope holds can match nothing: leave it out of
	// the MATCH.
	q.Terms = slices.DeleteFunc(slices.Clone(terms), func(t textseg.Term) bool { return st.DF[t.Token] == 0 })
	return st, textseg.Select(q, st, maxScoreTerms), nil
}

// maxDFTerms bounds the document-frequency lookups of one query (each is
// a count over the scope's own posting list of the term, or a cache hit).
const maxDFTerms = 1000

// dfKey names a term's document frequency in one collection's partition.
// A struct, not the three joined: a dialogue looks up hundreds of terms
// in each collection, and joining them was an allocation each.
type dfKey struct {
	fts, part, token string
	prefix           bool
}

func dfKeyOf(fts, part string, t textseg.Term) dfKey {
	return dfKey{fts: fts, part: part, token: t.Token, prefix: t.Prefix}
}

// The document frequencies lexicalStats counted are kept (Store.dfs), each with
// how many changes its collection had had (scope_counts): an agent sends
// much of its window again with every request, and counting a common
// word's postings is the dearest read of a query. A frequency is used
// again while the collection has not changed since, or, for a word at
// least dfSteady documents hold, while it has changed by no more than a
// dfDrift-th of them: its IDF then moves by a few percent at most, and a
// rare or absent word (whose appearance decides whether a new document is
// found at all) is always counted anew. Two generations bound its size.
type dfSeen struct {
	df            int
	docs, changes int64
}

const (
	dfSteady       = 20
	dfDrift        = 10
	dfCacheEntries = 1 << 16 // per generation
)

func newDFCache() *gencache.Cache[dfKey, dfSeen] {
	return gencache.New[dfKey, dfSeen](dfCacheEntries, nil)
}

// cachedDF is key's document frequency from the cache, when it may be used
// again with the collection at docs documents after changes changes.
func (s *Store) cachedDF(key dfKey, docs, changes int64) (int, bool) {
	e, ok := s.dfs.Get(key)
	// The documents can have moved by no more than the changes counted
	// (else the user was forgotten and written anew).
	drift := changes - e.changes
	if !ok || drift < 0 || max(docs-e.docs, e.docs-docs) > drift ||
		(drift > 0 && (e.df < dfSteady || drift*dfDrift > int64(e.df))) {
		return 0, false
	}
	return e.df, true
}

// scoreAll scores texts for q with the scope's statistics, the average
// length taken from texts themselves; it returns each text's tokens too.
func scoreAll(q textseg.Query, st textseg.Stats, texts []string) ([]float64, [][]string) {
	toks := make([][]string, len(texts))
	total := 0
	for i, t := range texts {
		toks[i] = textseg.StoredTokens(t)
		total += len(toks[i])
	}
	if len(texts) > 0 {
		st.AvgLen = float64(total) / float64(len(texts))
	}
	sc := textseg.NewScorer(q, st)
	out := make([]float64, len(texts))
	for i, t := range texts {
		out[i], _ = sc.ScoreTokens(t, toks[i])
	}
	return out, toks
}

// TurnsAround returns the turns within radius of each of hits (their
// own turns excluded), for neighbour expansion; the first far hits (the
// best) reach one turn further, in the same read.
func (s *Store) TurnsAround(ctx context.Context, scope memory.Scope, hits []memory.TurnHit, radius, far int) ([]memory.TurnHit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	// A keyed join, so each run of turns is one range on the unique index
	// (a long OR of conditions made SQLite scan every turn of the user);
	// the runs go in as one JSON argument, so the SQL is fixed and
	// prepared once. The hits' own turns are left out by their row ids,
	// which the index holds: the caller has them, and read again they
	// were most of the rows (in a long session the best hits are each
	// other's neighbours).
	js, err := json.Marshal(aroundRuns(hits, radius, far))
	if err != nil {
		return nil, fmt.Errorf("turns around: %w", err)
	}
	own := make([]int64, len(hits))
	for i, h := range hits {
		own[i] = h.ID
	}
	ids, err := json.Marshal(own)
	if err != nil {
		return nil, fmt.Errorf("turns around: %w", err)
	}
	rows, err := s.queryRead(ctx, turnsAroundSQL, string(js), scope.Namespace, scope.User, string(ids))
	if err != nil {
		return nil, fmt.Errorf("turns around: %w", err)
	}
	defer quiet.Close(rows)
	return scanTurnHits(rows, 0)
}

// turnsAroundSQL reads runs of turns (aroundRun) but those of some ids.
var turnsAroundSQL = fmt.Sprintf(`SELECT %s FROM json_each(?) k CROSS JOIN turns t
	WHERE t.namespace = ? AND t.user_id = ? AND t.session_id = substr(k.value, %d)
		AND t.turn_index BETWEEN CAST(substr(k.value, 1, %d) AS INTEGER) AND CAST(substr(k.value, %d, %[3]d) AS INTEGER)
		AND t.id NOT IN (SELECT value FROM json_each(?))`, turnHitColumns, 2*runDigits+1, runDigits, runDigits+1)

// aroundRuns are the runs of turns TurnsAround reads (aroundRun): each
// hit's window, those of a session that overlap or touch merged, so that
// each turn is read once (overlapping windows were each read whole, then
// each turn kept once).
func aroundRuns(hits []memory.TurnHit, radius, far int) []string {
	type span struct {
		session string
		lo, hi  int
	}
	spans := make([]span, len(hits))
	for i, h := range hits {
		r := radius
		if i < far {
			r++
		}
		spans[i] = span{h.SessionID, h.TurnIndex - r, h.TurnIndex + r}
	}
	slices.SortFunc(spans, func(a, b span) int {
		return cmp.Or(strings.Compare(a.session, b.session), cmp.Compare(a.lo, b.lo))
	})
	runs := make([]string, 0, len(spans))
	cur := spans[0]
	for _, sp := range spans[1:] {
		if sp.session == cur.session && sp.lo <= cur.hi+1 {
			cur.hi = max(cur.hi, sp.hi)
			continue
		}
		runs = append(runs, aroundRun(cur.session, cur.lo, cur.hi))
		cur = sp
	}
	return append(runs, aroundRun(cur.session, cur.lo, cur.hi))
}

// aroundRun is one session's turns first to last as turnsAroundSQL reads
// it: the two turn indexes in runDigits characters each (zero-padded, a
// minus first), then the session. One string a run: reading the three
// fields of a JSON array in SQL parsed it three times, a third of the
// read for a dialogue's 200 hits.
func aroundRun(session string, first, last int) string {
	b := make([]byte, 0, 2*runDigits+len(session))
	b = appendPadded(b, first)
	b = appendPadded(b, last)
	return string(append(b, session...))
}

// runDigits is the width of a turn index in aroundRun: an int64's digits
// and its sign.
const runDigits = 20

func appendPadded(b []byte, n int) []byte {
	var buf [runDigits]byte
	digits := strconv.AppendInt(buf[:0], int64(n), 10)
	width := runDigits
	if digits[0] == '-' {
		b = append(b, '-')
		digits, width = digits[1:], width-1
	}
	for range width - len(digits) {
		b = append(b, '0')
	}
	return append(b, digits...)
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
	return scanTurnHits(rows, limit)
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
	return scanTurnHits(rows, limit)
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
	st, q, err := s.lexicalStats(ctx, memoryTexts, scope, part, q)
	if err != nil {
		return nil, fmt.Errorf("recall memories: %w", err)
	}
	if q.Empty() {
		return nil, nil
	}
	var rows *sql.Rows
	if q.Uninformative {
		// Stopwords alone match nearly every memory, which are listed
		// newest first: every one is read.
		rows, err = s.queryRead(ctx, `SELECT m.rowid, `+prefixed("m.", memoryColumns)+`
			FROM memories_fts CROSS JOIN memories m ON m.rowid = memories_fts.rowid
			WHERE memories_fts MATCH ? AND m.namespace = ? AND m.user_id = ? AND m.status = 'active'`+limitSQL(maxMemoryCandidates),
			textseg.MatchTerms(part, q.Terms), scope.Namespace, scope.User)
	} else {
		var ids []int64
		if ids, err = s.activeCandidates(ctx, scope, part, q, st, max(limit, candidateFloor)); err != nil {
			return nil, fmt.Errorf("recall memories: %w", err)
		}
		js, jerr := json.Marshal(ids)
		if jerr != nil {
			return nil, fmt.Errorf("recall memories: %w", jerr)
		}
		rows, err = s.queryRead(ctx, `SELECT m.rowid, `+prefixed("m.", memoryColumns)+`
			FROM json_each(?) j CROSS JOIN memories m ON m.rowid = j.value
			WHERE m.namespace = ? AND m.user_id = ? AND m.status = 'active'`,
			string(js), scope.Namespace, scope.User)
	}
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
	scores, _ := scoreAll(q, st, texts)
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

// activeCandidates are the candidates (see candidates) among the
// scope's active memories: the index also holds the versions a memory
// superseded (history and as_of read them), which must not take an
// active memory's place. They are few beside the active ones, and found
// in the status index without reading a memory.
func (s *Store) activeCandidates(ctx context.Context, scope memory.Scope, part string, q textseg.Query, st textseg.Stats, k int) ([]int64, error) {
	inactive, err := s.rowids(ctx, `SELECT rowid FROM memories WHERE namespace = ?1 AND user_id = ?2 AND status < 'active'
		UNION ALL SELECT rowid FROM memories WHERE namespace = ?1 AND user_id = ?2 AND status > 'active'`, scope.Namespace, scope.User)
	if err != nil {
		return nil, err
	}
	return s.candidates(ctx, memoryTexts, part, st, matchTerms(q, st), k, inactive)
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
