package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// candidates returns the rowids of the documents of collection c that
// hold any of terms (q's match terms, most informative first, each with
// its document frequency in st), but for those of skip, at most k of
// them: the ones a BM25 ranking puts first, as far as the index can tell
// without reading them.
//
// When the terms' document frequencies add up to k or fewer, or the
// scope holds no more than k documents, every document they find is a
// candidate and nothing is ranked. Otherwise
// each term's postings are read as rowids alone, the most informative
// terms' first, within a budget of postings (candidatePostings × k),
// a term too common for what is left read newest first; a document
// scores the weight × IDF of each term it holds (BM25 when a term
// occurs once, as it mostly does in a turn, before the length). When
// they find k documents or fewer, all are candidates; else the best 2k by
// that have their lengths read from the index (docsize) and the best k by
// BM25 with that length are the candidates, ties newest first.
//
// FTS5's own ranking (ORDER BY rank) computed bm25() for every document
// the terms find, reading each one's length and walking each term's
// postings a second time to count them, then sorted them all: for a
// user with 100k turns and a few common words, 40 ms of CPU a query. Its
// statistics are also the whole table's (every user's length), where the
// candidates here are weighed by the user's own, as the score in Go is.
func (s *Store) candidates(ctx context.Context, c collection, part string, st textseg.Stats, terms []textseg.Term, k int, skip []int64) ([]int64, error) {
	sum := 0
	for _, t := range terms {
		sum += st.DF[t.Token]
	}
	if sum <= k || st.Docs <= k {
		return s.rowids(ctx, `SELECT rowid FROM `+c.fts+` WHERE `+c.fts+` MATCH ?`, textseg.MatchTerms(part, terms))
	}
	found, err := s.fewPostings(ctx, c, part, st, terms, k)
	if err != nil {
		return nil, err
	}
	held := make(map[int64]float64, min(sum, candidatePostings*k))
	budget := candidatePostings * k
	for i, t := range terms {
		// What is left is shared by the terms still to read, each
		// allowed at least k postings.
		allow := max(k, budget/(len(terms)-i))
		ids := found[i]
		if df := st.DF[t.Token]; df > k {
			stmt := `SELECT rowid FROM ` + c.fts + ` WHERE ` + c.fts + ` MATCH ?`
			if df > allow {
				stmt += ` ORDER BY rowid DESC` + limitSQL(postingStep(allow, k))
			}
			if ids, err = s.rowids(ctx, stmt, textseg.MatchTerms(part, terms[i:i+1])); err != nil {
				return nil, err
			}
		}
		budget -= len(ids)
		w := t.Weight * textseg.IDF(st.Docs, st.DF[t.Token])
		for _, id := range ids {
			held[id] += w
		}
	}
	type doc struct {
		id    int64
		score float64
	}
	for _, id := range skip {
		delete(held, id)
	}
	if len(held) <= k {
		// Every document found is a candidate: their lengths would only
		// order them, and the caller orders what it scores.
		ids := make([]int64, 0, len(held))
		for id := range held {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids, nil
	}
	docs := make([]doc, 0, len(held))
	for id, sc := range held {
		docs = append(docs, doc{id, sc})
	}
	best := func(a, b doc) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if a.id > b.id {
			return -1
		}
		if a.id < b.id {
			return 1
		}
		return 0
	}
	slices.SortFunc(docs, best)
	docs = docs[:min(len(docs), 2*k)]
	ids := make([]int64, len(docs))
	for i, d := range docs {
		ids[i] = d.id
	}
	lens, err := s.docLengths(ctx, c, ids)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, n := range lens {
		total += n
	}
	avg := max(float64(total)/float64(max(len(lens), 1)), 1)
	for i := range docs {
		docs[i].score *= textseg.LengthFactor(lens[docs[i].id], avg)
	}
	slices.SortFunc(docs, best)
	docs = docs[:min(len(docs), k)]
	ids = ids[:len(docs)]
	for i, d := range docs {
		ids[i] = d.id
	}
	return ids, nil
}

// fewPostings reads, in one statement, the postings of each of terms
// that no allowance of candidates can cut (k documents or fewer hold it:
// every term is allowed k), by term; a term more hold is left to
// candidates, nil. A dialogue's terms are mostly such: a statement each
// was a tenth of a dialogue's context request.
func (s *Store) fewPostings(ctx context.Context, c collection, part string, st textseg.Stats, terms []textseg.Term, k int) ([][]int64, error) {
	found := make([][]int64, len(terms))
	var few []int
	var matches []string
	for i, t := range terms {
		if st.DF[t.Token] <= k {
			few = append(few, i)
			matches = append(matches, textseg.MatchTerms(part, terms[i:i+1]))
		}
	}
	if len(few) == 0 {
		return found, nil
	}
	js, err := json.Marshal(matches)
	if err != nil {
		return nil, err
	}
	rows, err := s.queryRead(ctx, `SELECT j.key, f.rowid FROM json_each(?) j CROSS JOIN `+c.fts+` f WHERE f.`+c.fts+` MATCH j.value`, string(js))
	if err != nil {
		return nil, err
	}
	defer quiet.Close(rows)
	for rows.Next() {
		var j int
		var id int64
		if err := rows.Scan(&j, &id); err != nil {
			return nil, err
		}
		if j < 0 || j >= len(few) {
			return nil, fmt.Errorf("%s postings: term %d of %d", c.fts, j, len(few))
		}
		found[few[j]] = append(found[few[j]], id)
	}
	return found, rows.Err()
}

// candidatePostings is how many postings, per candidate sought, one
// query's candidates may be chosen from: a term past it is read newest
// first.
const candidatePostings = 15

// postingStep rounds a term's allowance of postings down to k times a
// power of two, so that the statements reading them are a handful, each
// prepared once (limitSQL).
func postingStep(allow, k int) int {
	n := k
	for n*2 <= allow {
		n *= 2
	}
	return n
}

// rowids runs a query of one integer column.
func (s *Store) rowids(ctx context.Context, q string, args ...any) ([]int64, error) {
	rows, err := s.queryRead(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer quiet.Close(rows)
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// docLengths reads the length in tokens of each of ids from the index's
// docsize table (FTS5 keeps it for bm25()): one varint per column, and
// the tables have one.
func (s *Store) docLengths(ctx context.Context, c collection, ids []int64) (map[int64]int, error) {
	js, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.queryRead(ctx, `SELECT d.id, d.sz FROM json_each(?) j CROSS JOIN `+c.fts+`_docsize d ON d.id = j.value`, string(js))
	if err != nil {
		return nil, err
	}
	defer quiet.Close(rows)
	out := make(map[int64]int, len(ids))
	for rows.Next() {
		var id int64
		var sz []byte
		if err := rows.Scan(&id, &sz); err != nil {
			return nil, err
		}
		n, ok := varint(sz)
		if !ok {
			return nil, fmt.Errorf("%s_docsize of row %d: a size of %d bytes that is no varint", c.fts, id, len(sz))
		}
		out[id] = n
	}
	return out, rows.Err()
}

// varint decodes SQLite's varint (big-endian groups of 7 bits, the high
// bit set on every byte but the last, the ninth byte whole), as FTS5
// writes a document's length.
func varint(b []byte) (int, bool) {
	var v uint64
	for i, c := range b {
		if i == 8 {
			return int(v<<8 | uint64(c)), true
		}
		v = v<<7 | uint64(c&0x7f)
		if c < 0x80 {
			return int(v), true
		}
	}
	return 0, false
}
