package projector_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/projector"
	"github.com/engramhq/engram/internal/sqlite"
	"go.uber.org/zap/zaptest"
)

// An event that fails on its own, for a reason that is not bad input, is
// handed back with its error, never acknowledged as applied: the rest of
// its batch is committed and the store's position moves past it, so a
// retry of the batch would skip it.
func TestFailingEventIsHandedBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}()
	// A fault inside the database for one row only, as a full disk or a
	// corrupt page under one insert would give.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TRIGGER fault BEFORE INSERT ON turns WHEN NEW.content = 'boom'
		BEGIN SELECT RAISE(ABORT, 'injected fault'); END`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var batch []memory.Applied
	for i, c := range []string{"one", "boom", "three"} {
		batch = append(batch, memory.Applied{Envelope: memory.Envelope{Seq: uint64(i + 1), Source: "t", ID: fmt.Sprint(i),
			Type: events.TypeTurnRecorded, Scope: memory.Scope{Namespace: "ns", User: "u"}, Time: time.Unix(int64(i), 0)},
			Data: &events.TurnRecorded{SessionID: "s", TurnIndex: i, Role: "user", Content: c}})
	}
	p := projector.New(st, zaptest.NewLogger(t))
	p.Backoff = func(int) time.Duration { return 0 }
	errs := p.Apply(t.Context(), batch)
	if len(errs) != 3 || errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Fatalf("errs = %v, want only the second event's", errs)
	}
	// EINVALID is what the stream's fate table dead-letters at once.
	if got, want := memory.ErrorCode(errs[1]), memory.EINVALID; got != want {
		t.Fatalf("the failed event's error %v has code %q, want %q", errs[1], got, want)
	}
	if n, err := st.CountTurns(t.Context(), memory.Scope{Namespace: "ns", User: "u"}); err != nil || n != 2 {
		t.Fatalf("turns = %d (%v), want the two others applied", n, err)
	}
}
