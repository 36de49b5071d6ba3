// Command dictbench measures the choice textseg made: character bigrams
// against dictionary segmentation (gse, a Go port of jieba) for indexing
// Chinese in SQLite FTS5. It is a measurement tool only, kept in its own
// module so that engram never depends on gse or its 37 MB of dictionaries.
//
//	cd internal/textseg/dictbench && go run . -seeds ../../../../shared/seeds -mb 4
//
// It reports the dictionary's load time and heap, the segmentation
// throughput of both approaches, the size of the FTS5 index each produces,
// and how well substring queries find the documents that contain them.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
	"github.com/go-ego/gse"
	_ "modernc.org/sqlite"
)

func main() {
	seeds := flag.String("seeds", "../../../../shared/seeds", "directory of *.txt seed documents")
	mb := flag.Float64("mb", 4, "corpus size in MB, built from random seed lines")
	dict := flag.String("dict", "zh", "gse embedded dictionary: zh (simplified+traditional) or zh_s")
	queries := flag.Int("queries", 300, "substring queries for the recall check")
	flag.Parse()
	if err := run(*seeds, *mb, *dict, *queries); err != nil {
		log.Fatal(err)
	}
}

func run(seedDir string, mb float64, dict string, nQueries int) error {
	docs, err := corpus(seedDir, int(mb*(1<<20)))
	if err != nil {
		return fmt.Errorf("build corpus: %w", err)
	}
	size, han := 0, 0
	for _, d := range docs {
		size += len(d)
		for _, r := range d {
			if chars.IsHan(r) {
				han++
			}
		}
	}
	fmt.Printf("corpus: %d docs, %.2f MB, %d Han characters (%s, %s/%s)\n\n",
		len(docs), float64(size)/(1<<20), han, runtime.Version(), runtime.GOOS, runtime.GOARCH)

	// Dictionary load.
	base := heap()
	start := time.Now()
	var seg gse.Segmenter
	seg.SkipLog = true
	if err := seg.LoadDictEmbed(dict); err != nil {
		return fmt.Errorf("load gse dictionary %s: %w", dict, err)
	}
	load := time.Since(start)
	after := heap()
	fmt.Printf("gse LoadDictEmbed(%q): %v, live heap +%.0f MB (%.0f MB before, %.0f MB after, after GC)\n\n",
		dict, load.Round(time.Millisecond), float64(after-base)/(1<<20), float64(base)/(1<<20), float64(after)/(1<<20))

	approaches := []struct {
		name  string
		index func(string) string
		query func(string) string
	}{
		{"bigram (textseg)", textseg.Index, textseg.Match},
		{"gse Cut+HMM", func(s string) string { return strings.Join(seg.Cut(s, true), " ") }, func(q string) string { return gseQuery(seg.Cut(q, true)) }},
		{"gse CutSearch+HMM", func(s string) string { return strings.Join(seg.CutSearch(s, true), " ") }, func(q string) string { return gseQuery(seg.Cut(q, true)) }},
	}

	fmt.Printf("%-18s %10s %12s %10s %12s %12s %10s\n", "approach", "segment", "alloc", "insert", "index bytes", "distinct", "tokens")
	dbs := make([]*sql.DB, len(approaches))
	for i, a := range approaches {
		indexed := make([]string, len(docs))
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		for j, d := range docs {
			indexed[j] = a.index(d)
		}
		took := time.Since(start)
		runtime.ReadMemStats(&m1)
		db, st, err := buildIndex(indexed)
		if err != nil {
			return fmt.Errorf("index with %s: %w", a.name, err)
		}
		defer quiet.Close(db)
		dbs[i] = db
		fmt.Printf("%-18s %6.1f MB/s %9.0f MB %9.1fs %9.2f MB %12d %10d\n", a.name,
			float64(size)/(1<<20)/took.Seconds(), float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20),
			st.insert.Seconds(), float64(st.bytes)/(1<<20), st.terms, st.tokens)
	}

	// Substring queries: Chinese words as gse cuts them from random
	// documents, judged against strings.Contains over the corpus.
	rng := rand.New(rand.NewPCG(2, 3))
	var qs []string
	seen := make(map[string]bool)
	for len(qs) < nQueries {
		for _, w := range seg.Cut(docs[rng.IntN(len(docs))], true) {
			if n := utf8.RuneCountInString(w); n >= 2 && n <= 4 && allHan(w) && !seen[w] && rng.IntN(4) == 0 {
				seen[w] = true
				qs = append(qs, w)
			}
		}
	}
	qs = qs[:nQueries]
	fmt.Printf("\n%d substring queries (Chinese words of 2-4 characters), micro-averaged over (query, doc) pairs:\n", len(qs))
	fmt.Printf("%-30s %8s %10s %8s %10s\n", "approach", "recall", "precision", "P@10", "per query")
	check := func(name string, db *sql.DB, match func(string) string) error {
		var hit, found, truth, top, topHit int
		var took time.Duration
		for _, q := range qs {
			want := make(map[int64]bool)
			for i, d := range docs {
				if strings.Contains(d, q) {
					want[int64(i+1)] = true
				}
			}
			start := time.Now()
			ids, err := search(db, match(q))
			took += time.Since(start)
			if err != nil {
				return fmt.Errorf("%s: query %q: %w", name, q, err)
			}
			truth += len(want)
			found += len(ids)
			for _, id := range ids {
				if want[id] {
					hit++
				}
			}
			// What a caller sees: the ten best by BM25.
			best, err := search(db, match(q), "ORDER BY rank LIMIT 10")
			if err != nil {
				return fmt.Errorf("%s: query %q: %w", name, q, err)
			}
			top += len(best)
			for _, id := range best {
				if want[id] {
					topHit++
				}
			}
		}
		fmt.Printf("%-30s %7.1f%% %9.1f%% %7.1f%% %10v\n", name, 100*float64(hit)/float64(truth),
			100*float64(hit)/float64(max(found, 1)), 100*float64(topHit)/float64(max(top, 1)),
			(took / time.Duration(len(qs))).Round(time.Microsecond))
		return nil
	}
	phraseOnly := func(q string) string { return strings.SplitN(textseg.Match(q), " OR ", 2)[0] }
	for _, c := range []struct {
		name  string
		db    *sql.DB
		match func(string) string
	}{
		{"bigram, phrase only", dbs[0], phraseOnly},
		{"bigram, textseg.Match", dbs[0], textseg.Match},
		{"gse Cut, phrase of words", dbs[1], approaches[1].query},
		{"gse CutSearch, phrase of words", dbs[2], approaches[2].query},
	} {
		if err := check(c.name, c.db, c.match); err != nil {
			return err
		}
	}
	runtime.KeepAlive(&seg)
	return nil
}

// heap returns the live heap after a full collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// corpus builds documents of one to four random lines of the seed files
// until there are size bytes, like a stream of short conversation turns.
func corpus(dir string, size int) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.txt in %s", dir)
	}
	slices.Sort(paths)
	var lines []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for l := range strings.Lines(string(data)) {
			if l = strings.TrimSpace(l); utf8.RuneCountInString(l) >= 8 {
				lines = append(lines, l)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var docs []string
	for total := 0; total < size; {
		n := 1 + rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = lines[rng.IntN(len(lines))]
		}
		d := strings.Join(parts, "\n")
		docs = append(docs, d)
		total += len(d)
	}
	return docs, nil
}

type indexStats struct {
	insert        time.Duration
	bytes         int64 // FTS5 segment data (the posting lists) plus its term index
	terms, tokens int64
}

// buildIndex loads the documents into a contentless FTS5 table in a
// temporary file, merged into one segment as a long-running store would be.
func buildIndex(docs []string) (*sql.DB, indexStats, error) {
	var st indexStats
	dir, err := os.MkdirTemp("", "dictbench")
	if err != nil {
		return nil, st, err
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, "fts.db"))
	if err != nil {
		return nil, st, err
	}
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{
		`PRAGMA journal_mode=WAL`,
		fmt.Sprintf(`CREATE VIRTUAL TABLE f USING fts5(body, content='', contentless_delete=1, tokenize='%s')`, textseg.Tokenizer),
		`CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			return nil, st, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	start := time.Now()
	tx, err := db.Begin()
	if err != nil {
		return nil, st, err
	}
	for i, d := range docs {
		if _, err := tx.Exec(`INSERT INTO f(rowid, body) VALUES (?, ?)`, i+1, d); err != nil {
			quiet.Rollback(tx)
			return nil, st, fmt.Errorf("insert doc %d: %w", i+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, st, err
	}
	if _, err := db.Exec(`INSERT INTO f(f) VALUES ('optimize')`); err != nil {
		return nil, st, fmt.Errorf("optimize: %w", err)
	}
	st.insert = time.Since(start)
	err = db.QueryRow(`SELECT (SELECT sum(length(block)) FROM f_data) + (SELECT coalesce(sum(length(term)), 0) + 8*count(*) FROM f_idx)`).Scan(&st.bytes)
	if err != nil {
		return nil, st, fmt.Errorf("measure index: %w", err)
	}
	if err := db.QueryRow(`SELECT count(*), sum(cnt) FROM v`).Scan(&st.terms, &st.tokens); err != nil {
		return nil, st, fmt.Errorf("read vocabulary: %w", err)
	}
	return db, st, nil
}

func search(db *sql.DB, expr string, order ...string) ([]int64, error) {
	if expr == "" {
		return nil, nil
	}
	rows, err := db.Query(`SELECT rowid FROM f WHERE f MATCH ? `+strings.Join(order, " "), expr)
	if err != nil {
		return nil, err
	}
	defer quiet.Close(rows)
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// gseQuery searches for the words gse cuts a query into, as one phrase.
func gseQuery(words []string) string {
	var kept []string
	for _, w := range words {
		if strings.TrimSpace(w) != "" {
			kept = append(kept, strings.ReplaceAll(w, `"`, `""`))
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return `"` + strings.Join(kept, " ") + `"`
}

func allHan(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return !chars.IsHan(r) })
}
