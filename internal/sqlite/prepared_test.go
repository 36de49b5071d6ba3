package sqlite

import (
	"encoding/binary"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/retrieval"
)

// The statements context and search requests read through (queryRead)
// are prepared once and kept. A statement whose plan reads a bound value
// (SQLite reads a bound LIMIT's) is expired by every new binding and
// compiled again at its next step: PendingFirst's bound LIMIT was a tenth
// of the CPU of a short /v1/context. Each statement they cached is
// prepared here on a connection of its own and bound; SQLite says whether
// that expired it. (Built with STAT4, SQLite would also read bound values
// against sqlite_stat4's samples; engram never runs ANALYZE, so there are
// none.)
func TestCachedReadsAreNotPreparedAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openIn(t, dir)
	mustApply(t, s, turn(1, "ana", "s1", 0, "I moved to Lisbon last spring"), turn(2, "ana", "s1", 1, "How is the weather there?"),
		added(3, "ana", "m1", "Ana lives in Lisbon", 0.8))
	e := retrieval.NewEngine(s)
	scope := memory.Scope{Namespace: "ns", User: "ana"}
	// Words, Chinese, and stopwords alone (another path: the newest
	// matches).
	for _, q := range []string{"where does Ana live", "天气怎么样", "the"} {
		if _, err := e.Context(t.Context(), retrieval.Request{Namespace: "ns", User: "ana", SessionID: "s1", Query: q, Force: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Search(t.Context(), memory.SearchQuery{Scope: scope, Text: q}); err != nil {
			t.Fatal(err)
		}
	}
	s.readsMu.Lock()
	var cached []string
	for q := range s.reads {
		cached = append(cached, q)
	}
	s.readsMu.Unlock()
	if len(cached) < 15 || !slices.ContainsFunc(cached, func(q string) bool { return strings.Contains(q, "status = 'pending'") }) {
		t.Fatalf("%d statements cached, the pending memories' not among them: the requests no longer read through queryRead", len(cached))
	}

	tls := libc.NewTLS()
	defer tls.Close()
	db := openRaw(t, tls, filepath.Join(dir, "engram.db"))
	defer sqlite3.Xsqlite3_close_v2(tls, db)
	for _, q := range cached {
		stmt := prepareRaw(t, tls, db, q)
		for i := range sqlite3.Xsqlite3_bind_parameter_count(tls, stmt) {
			sqlite3.Xsqlite3_bind_null(tls, stmt, i+1)
		}
		if sqlite3.Xsqlite3_expired(tls, stmt) != 0 {
			t.Errorf("binding expires this cached statement, so it is compiled again at every run (a bound LIMIT? use limitSQL):\n%s", q)
		}
		sqlite3.Xsqlite3_finalize(tls, stmt)
	}
}

// openRaw opens path read-only through SQLite's C interface.
func openRaw(t *testing.T, tls *libc.TLS, path string) uintptr {
	t.Helper()
	name := cString(t, tls, path)
	defer libc.Xfree(tls, name)
	db, rc := written(tls, func(p uintptr) int32 { return sqlite3.Xsqlite3_open_v2(tls, name, p, sqlite3.SQLITE_OPEN_READONLY, 0) })
	if rc != sqlite3.SQLITE_OK {
		if db != 0 {
			sqlite3.Xsqlite3_close_v2(tls, db) // a failed open still hands one back
		}
		t.Fatalf("open %s: rc %d", path, rc)
	}
	return db
}

// prepareRaw prepares q on db as the driver does (sqlite3_prepare_v2).
func prepareRaw(t *testing.T, tls *libc.TLS, db uintptr, q string) uintptr {
	t.Helper()
	text := cString(t, tls, q)
	defer libc.Xfree(tls, text)
	stmt, rc := written(tls, func(p uintptr) int32 { return sqlite3.Xsqlite3_prepare_v2(tls, db, text, -1, p, 0) })
	if rc != sqlite3.SQLITE_OK {
		t.Fatalf("prepare: rc %d: %s", rc, libc.GoString(sqlite3.Xsqlite3_errmsg(tls, db)))
	}
	return stmt
}

func cString(t *testing.T, tls *libc.TLS, s string) uintptr {
	t.Helper()
	p, err := libc.CString(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// written calls f with room for the one pointer it writes (an sqlite3**
// or sqlite3_stmt**), and returns that pointer and f's result code.
func written(tls *libc.TLS, f func(p uintptr) int32) (uintptr, int32) {
	const size = int(unsafe.Sizeof(uintptr(0)))
	p := tls.Alloc(size)
	defer tls.Free(size)
	rc := f(p)
	b := libc.GoBytes(p, size) // read by copy: the C heap is not Go's
	if size == 4 {
		return uintptr(binary.NativeEndian.Uint32(b)), rc
	}
	return uintptr(binary.NativeEndian.Uint64(b)), rc
}
