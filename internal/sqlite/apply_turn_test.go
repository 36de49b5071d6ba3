package sqlite

import (
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// A turn is inserted first and looked up only when its scope, session and
// index are stored already (putTurn): a new turn is inserted and counted
// in its session once; a turn recorded again replaces the stored one and
// its index entry; a compression snapshot's copy of a stored turn leaves
// it as it is and only carries it, while the snapshot's new turns are
// inserted. Each in one batch with the others and in batches of its own.
func TestPutTurnInsertReplaceCarry(t *testing.T) {
	t.Parallel()
	snapshot := func(seq uint64, turns ...events.TurnRecorded) memory.Applied {
		return memory.Applied{
			Envelope: memory.Envelope{Seq: seq, Source: "test", ID: "c" + time.Unix(int64(seq), 0).UTC().Format("150405"),
				Type: events.TypeContextCompressing, Scope: memory.Scope{Namespace: "ns", User: "u"}, Time: time.Unix(int64(seq), 0).UTC()},
			Data: &events.ContextCompressing{SessionID: "s", Turns: turns},
		}
	}
	batch := []memory.Applied{
		turn(1, "u", "s", 0, "the first wording"),
		turn(2, "u", "s", 1, "another turn"),
		turn(3, "u", "s", 0, "the second wording"),
		snapshot(4,
			events.TurnRecorded{SessionID: "s", TurnIndex: 0, Role: "user", Content: "a snapshot's copy"},
			events.TurnRecorded{SessionID: "s", TurnIndex: 2, Role: "user", Content: "only in the snapshot"}),
	}
	type row struct {
		content                   string
		seq, firstSeq, carriedSeq uint64
	}
	want := map[int]row{
		0: {"the second wording", 3, 1, 4},
		1: {"another turn", 2, 2, 2},
		2: {"only in the snapshot", 4, 4, 4},
	}
	for _, whole := range []bool{true, false} {
		s := openTest(t)
		if whole {
			mustApply(t, s, batch...)
		} else {
			for _, a := range batch {
				mustApply(t, s, a)
			}
		}
		rows, err := s.r.QueryContext(t.Context(), `SELECT turn_index, content, seq, first_seq, carried_seq FROM turns
			WHERE namespace = 'ns' AND user_id = 'u' AND session_id = 's'`)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]row{}
		for rows.Next() {
			var i int
			var r row
			if err := rows.Scan(&i, &r.content, &r.seq, &r.firstSeq, &r.carriedSeq); err != nil {
				t.Fatal(err)
			}
			got[i] = r
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		quiet.Close(rows)
		if len(got) != len(want) {
			t.Fatalf("one batch %v: %d turns %v, want %v", whole, len(got), got, want)
		}
		for i, w := range want {
			if got[i] != w {
				t.Errorf("one batch %v: turn %d is %+v, want %+v", whole, i, got[i], w)
			}
		}
		var sessionTurns, indexed, stale, fresh int
		if err := s.r.QueryRowContext(t.Context(), `SELECT turns FROM sessions
			WHERE namespace = 'ns' AND user_id = 'u' AND session_id = 's'`).Scan(&sessionTurns); err != nil {
			t.Fatal(err)
		}
		if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM turns_fts`).Scan(&indexed); err != nil {
			t.Fatal(err)
		}
		// The index holds each stored turn once, with its stored text.
		for _, q := range []struct {
			word string
			n    *int
		}{{"first", &stale}, {"second", &fresh}} {
			if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ?`,
				textseg.MatchIn(partition(memory.Scope{Namespace: "ns", User: "u"}), q.word)).Scan(q.n); err != nil {
				t.Fatal(err)
			}
		}
		if sessionTurns != 3 || indexed != 3 || stale != 0 || fresh != 1 {
			t.Errorf("one batch %v: session counts %d turns, the index holds %d (%d with the replaced wording, %d with the new), want 3, 3, 0, 1",
				whole, sessionTurns, indexed, stale, fresh)
		}
	}
}
