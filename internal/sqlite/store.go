package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram/internal/gencache"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	_ "modernc.org/sqlite" // the driver; this package is its only importer
)

// Store is the read model in one SQLite file.
type Store struct {
	w *sql.DB // the one writer connection
	r *sql.DB // read-only pool
	// stmts are writeSQL prepared on w.
	stmts [numStmts]*sql.Stmt
	// vectors holds the in-memory vector indexes of recently searched
	// users; Apply invalidates a user's when their memories change.
	vectors *vectorCache
	// reads are the read path's fixed queries, prepared once on r (see
	// queryRead): parsing them anew took a sixth of /v1/context's time.
	readsMu sync.Mutex
	reads   map[string]*sql.Stmt
	// seen is the read model's position as this process's writer last
	// read or wrote it (0: not yet known). A hint for the feed, which
	// would otherwise ask the database before every run: ApplyNext
	// checks the real position inside its transaction, so a stale hint
	// costs a retry, never a wrong apply.
	seen atomic.Uint64
	// dfs caches the document frequencies the lexical reads counted.
	dfs *gencache.Cache[dfKey, dfSeen]
	// scrubDue says that an apply has erased text (a user forgotten,
	// turns expired) whose older pages may still be in the write-ahead
	// log, or that Open could not scrub it: Compact's next look does.
	scrubDue atomic.Bool
}

// maxReadStmts bounds the prepared read statements; the queries of the
// read path take a few dozen, and a limit written into the SQL text (see
// limitSQL) adds one per distinct value.
const maxReadStmts = 256

// queryRead runs a read query whose SQL text is fixed (the arguments
// vary), through a statement prepared on the read pool the first time.
func (s *Store) queryRead(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s.readsMu.Lock()
	st, ok := s.reads[q]
	full := len(s.reads) >= maxReadStmts
	s.readsMu.Unlock()
	if !ok && full {
		return s.r.QueryContext(ctx, q, args...)
	}
	if !ok {
		var err error
		if st, err = s.r.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
		s.readsMu.Lock()
		if prev, raced := s.reads[q]; raced {
			quiet.Close(st) // a spare twin of prev, never used
			st = prev
		} else {
			s.reads[q] = st
		}
		s.readsMu.Unlock()
	}
	return st.QueryContext(ctx, args...)
}

var _ memory.Applier = (*Store)(nil)

// Open opens (creating if needed) the read model at path and brings its
// schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	// A log left behind (a clean close checkpoints and removes it) may be
	// that of a process killed between an erasure and its scrub.
	wal, _ := os.Stat(path + "-wal")
	leftLog := wal != nil && wal.Size() > 0
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := check(ctx, w, path); err != nil {
		quiet.Close(w) // on a path that fails with its own error
		return nil, err
	}
	if err := migrate(ctx, w); err != nil {
		quiet.Close(w) // on a path that fails with its own error
		if corrupt(err) {
			return nil, &CorruptError{Path: path, Detail: err.Error()}
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		quiet.Close(w) // on a path that fails with its own error
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0)*2)
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)
	s := &Store{w: w, r: r,
		vectors: newVectorCache(defaultVectorCacheBytes), reads: map[string]*sql.Stmt{}, dfs: newDFCache()}
	// Scrubbed now, before any reader of this process holds the log, or
	// at the first compaction look if another process's does.
	if leftLog {
		if done, err := s.scrubOnce(ctx); err != nil || !done {
			s.scrubDue.Store(true)
		}
	}
	for id, q := range writeSQL {
		st, err := w.PrepareContext(ctx, q)
		if err != nil {
			quiet.Do(s.Close) // on a path that fails with its own error
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		s.stmts[id] = st
	}
	return s, nil
}

// walCheckpointPages is how long the write-ahead log grows, in pages,
// before the writer copies it into the database file (SQLite's default is
// 1,000). A turn touches about seven scattered pages (its row, the turns'
// indexes, its session, its user's counts, the full-text index), so under
// steady ingest a short log is checkpointed every few commits and the same
// hot pages are copied again each time. At 10,000 pages (40 MiB) they are
// copied once per 140 commits of ten turns: ingest at 1,000 turns/s used
// 12–20% less CPU (engram-bench -only context -context-ingest 1000 prints
// it). Reads were no slower; Scrub still empties the log.
const walCheckpointPages = 10000

// walKeepBytes is the size the log's file is cut back to when it grew
// past that (a reader held an old snapshot through checkpoints, or one
// transaction was large): at the first commit after a checkpoint emptied
// it. It bounds the file between bursts, not during one.
const walKeepBytes = 64 << 20

// busyTimeout is how long a connection waits for a lock another holds.
const busyTimeout = 10 * time.Second

// scrubWait is how long one try of a scrub waits for readers to leave the
// log: SQLite's busy handler waits holding the write lock, so every apply
// waits as long.
const scrubWait = 100 * time.Millisecond

// dsn builds the connection string. WAL lets readers run beside the writer;
// synchronous=NORMAL is safe in WAL against a crash of engram (a power
// loss may drop the last transactions, which replay restores, because the
// stream position is committed with the data). mmap_size lets every
// connection read the file through the OS page cache instead of copying
// pages into its own: with four readers each holding a cold 64 MB cache,
// a query's first touch of a page was a read system call.
func dsn(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "cache_size(-65536)")
	q.Add("_pragma", "mmap_size(1073741824)")
	q.Add("_pragma", "temp_store(MEMORY)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		// Deleted rows are overwritten with zeros, so an erased user's
		// text is not left in free pages.
		q.Add("_pragma", "secure_delete(ON)")
		q.Add("_pragma", "wal_autocheckpoint("+strconv.Itoa(walCheckpointPages)+")")
		q.Add("_pragma", "journal_size_limit("+strconv.Itoa(walKeepBytes)+")")
	}
	return "file:" + path + "?" + q.Encode()
}

// Close closes both pools.
func (s *Store) Close() error {
	var errs []error
	for _, st := range s.stmts {
		if st != nil { // Open failed before preparing it
			errs = append(errs, st.Close())
		}
	}
	s.readsMu.Lock()
	for _, st := range s.reads {
		errs = append(errs, st.Close())
	}
	s.readsMu.Unlock()
	return errors.Join(append(errs, s.r.Close(), s.w.Close())...)
}

// Ping checks that the database answers reads.
func (s *Store) Ping(ctx context.Context) error { return s.r.PingContext(ctx) }

// LastSeq is the stream sequence of the last event applied.
func (s *Store) LastSeq(ctx context.Context) (uint64, error) {
	return lastSeq(ctx, s.r) // not s.w: callers poll it while the projector writes
}

// Position is the read model's position as this process last applied or
// read it, without asking the database: another writer of the same file
// (or a rebuild) can have moved it since. For guesses that ApplyNext
// verifies, such as where the feed's next run starts; LastSeq for facts.
func (s *Store) Position(ctx context.Context) (uint64, error) {
	if p := s.seen.Load(); p > 0 {
		return p, nil
	}
	p, err := s.LastSeq(ctx)
	if err == nil {
		s.seen.CompareAndSwap(0, p)
	}
	return p, err
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func lastSeq(ctx context.Context, q querier) (uint64, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'last_seq'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read last_seq: %w", err)
	}
	return strconv.ParseUint(v, 10, 64)
}

// Scrub makes deletions final on disk: it checkpoints the write-ahead log
// into the database and truncates it, so no older copy of a page (with
// text since deleted) stays in engram.db-wal. Readers in flight can keep
// a checkpoint from finishing; it is retried until ctx ends.
func (s *Store) Scrub(ctx context.Context) (err error) {
	// What Compact would scrub next (the erasure this follows) is done
	// here, unless this fails.
	if s.scrubDue.Swap(false) {
		defer func() {
			if err != nil {
				s.scrubDue.Store(true)
			}
		}()
	}
	for {
		done, err := s.scrubOnce(ctx)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("scrub: the write-ahead log is still in use: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// scrubOnce is one try of Scrub: false when a reader kept the checkpoint
// from finishing. The checkpoint holds the writer while it waits for
// readers, so it waits scrubWait, not busyTimeout: between tries the
// applies go on.
func (s *Store) scrubOnce(ctx context.Context) (done bool, err error) {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("scrub: %w", err)
	}
	defer func() {
		// The writer's own wait back, or the connection dropped (the
		// pool opens another with the dsn's) rather than kept with
		// scrubWait.
		_, rerr := conn.ExecContext(context.WithoutCancel(ctx), busyPragma(busyTimeout))
		if rerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		quiet.Close(conn)
	}()
	if _, err := conn.ExecContext(ctx, busyPragma(scrubWait)); err != nil {
		return false, fmt.Errorf("scrub: %w", err)
	}
	var busy, logPages, moved int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &moved); err != nil {
		return false, fmt.Errorf("scrub: checkpoint: %w", err)
	}
	return busy == 0, nil
}

func busyPragma(d time.Duration) string {
	return "PRAGMA busy_timeout = " + strconv.FormatInt(d.Milliseconds(), 10)
}

// CorruptError is a read model SQLite cannot trust: a damaged page, a
// file that is not a database. The read model is derived, so the cure is
// to build it again from the stream.
type CorruptError struct {
	Path, Detail string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("read model %s is corrupt (%s): stop engram and run `engram rebuild --replace`, "+
		"or delete the file (and its -wal and -shm): the projector rebuilds it from the stream at the next start", e.Path, e.Detail)
}

// check runs SQLite's quick_check, so that a damaged file is refused at
// start with a way out, rather than served (garbage in the middle of the
// file went unnoticed) or failing later with "malformed". It reads every
// page once: on a read model of a few GB it adds seconds to a start.
func check(ctx context.Context, db *sql.DB, path string) error {
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		if corrupt(err) {
			return &CorruptError{Path: path, Detail: err.Error()}
		}
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer quiet.Close(rows)
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return &CorruptError{Path: path, Detail: err.Error()}
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return &CorruptError{Path: path, Detail: err.Error()}
	}
	if len(problems) > 0 {
		return &CorruptError{Path: path, Detail: strings.Join(problems, "; ")}
	}
	return nil
}

func corrupt(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") ||
		strings.Contains(msg, "SQLITE_CORRUPT") || strings.Contains(msg, "SQLITE_NOTADB")
}
