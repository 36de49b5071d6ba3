package sqlite

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

func extracted(seq uint64, user, session string, turns ...int) memory.Applied {
	return derived(seq, user, events.TypeMemoryExtracted, &events.MemoryExtracted{RequestID: fmt.Sprintf("r%d", seq),
		SessionID: session, Extractor: events.ExtractorRules, Turns: turns})
}

// requested is an extraction request of seq, its event id its request id,
// as the batcher and retention publish them.
func requested(seq uint64, user, session, id string, turns ...int) memory.Applied {
	d := &events.ExtractionRequested{RequestID: id, SessionID: session, Reason: events.ReasonSessionEnded}
	for _, i := range turns {
		d.Turns = append(d.Turns, events.ExtractionTurn{TurnIndex: i, Role: "user", Content: "turn text"})
	}
	a := derived(seq, user, events.TypeExtractionRequested, d)
	a.Source, a.ID = "engram/batcher", id
	return a
}

// sweepCopy is r made again at seq by another source under the same id,
// as retention and the consolidator's sweep ask for held turns.
func sweepCopy(seq uint64, r memory.Applied) memory.Applied {
	r.Seq, r.Source, r.Time = seq, "engram/retention", time.Unix(int64(seq), 0).UTC()
	d := *r.Data.(*events.ExtractionRequested)
	d.Reason = events.ReasonSweep
	r.Data = &d
	return r
}

// result is the rules' result for the request r at seq, with r's time,
// as the extractor records it.
func result(seq uint64, r memory.Applied) memory.Applied {
	req := r.Data.(*events.ExtractionRequested)
	a := derived(seq, r.Scope.User, events.TypeMemoryExtracted, &events.MemoryExtracted{RequestID: req.RequestID,
		SessionID: req.SessionID, Extractor: events.ExtractorRules})
	for _, t := range req.Turns {
		a.Data.(*events.MemoryExtracted).Turns = append(a.Data.(*events.MemoryExtracted).Turns, t.TurnIndex)
	}
	a.Time = r.Time
	return a
}

// withResults is evs, each request followed by its result.
func withResults(evs ...memory.Applied) []memory.Applied {
	var out []memory.Applied
	seq := uint64(0)
	for _, e := range evs {
		seq = max(seq, e.Seq)
	}
	for _, e := range evs {
		out = append(out, e)
		if e.Type == events.TypeExtractionRequested {
			seq++
			out = append(out, result(seq, e))
		}
	}
	return out
}

func compressing(seq uint64, user, session string, turns map[int]string) memory.Applied {
	d := &events.ContextCompressing{SessionID: session}
	for _, i := range slices.Sorted(func(yield func(int) bool) {
		for i := range turns {
			if !yield(i) {
				return
			}
		}
	}) {
		d.Turns = append(d.Turns, events.TurnRecorded{SessionID: session, TurnIndex: i, Role: "user", Content: turns[i]})
	}
	a := turn(seq, user, session, 0, "")
	a.Type, a.Data = events.TypeContextCompressing, d
	return a
}

func ended(seq uint64, user, session string) memory.Applied {
	a := turn(seq, user, session, 0, "")
	a.Type, a.Data = events.TypeSessionEnded, &events.SessionEnded{SessionID: session, MessageCount: 3}
	return a
}

// retain plays retention over evs at cutoff: the live read model applies
// every event, then the receipts PlanRetention asks for; the rebuilt one
// applies what the stream keeps (each expired user's raw turn events
// below their bound are gone), then the same receipts. It returns both.
func retain(t *testing.T, evs []memory.Applied, cutoff uint64) (live, built *Store, plan RetentionPlan) {
	t.Helper()
	live, built = openTest(t), openTest(t)
	mustApply(t, live, evs...)
	plan, err := live.PlanRetention(t.Context(), cutoff, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	seq := evs[len(evs)-1].Seq
	var receipts []memory.Applied
	bound := map[memory.Scope]uint64{}
	for _, x := range plan.Expire {
		seq++
		bound[x.Scope] = x.Before
		r := derived(seq, x.Scope.User, events.TypeTurnsExpired, &events.TurnsExpired{BeforeSeq: x.Before, StoredBefore: time.Unix(1, 0)})
		r.Scope = x.Scope
		receipts = append(receipts, r)
	}
	mustApply(t, live, receipts...)
	var kept []memory.Applied
	for _, e := range evs {
		raw := e.Type == events.TypeTurnRecorded || e.Type == events.TypeContextCompressing ||
			e.Type == events.TypeExtractionRequested
		if b, ok := bound[e.Scope]; ok && raw && e.Seq < b {
			continue
		}
		kept = append(kept, e)
	}
	mustApply(t, built, kept...)
	mustApply(t, built, receipts...)
	return live, built, plan
}

func sameSums(t *testing.T, live, built *Store) {
	t.Helper()
	a, _, err := live.Checksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := built.Checksum(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for table := range a {
		if a[table] != b[table] {
			t.Errorf("table %s: live %s, rebuilt %s", table, a[table], b[table])
		}
	}
}

func expiredTurns(plan RetentionPlan) (turns, requests int) {
	for _, x := range plan.Expire {
		turns += x.Turns
		requests += x.Requests
	}
	return turns, requests
}

// Whatever falls below the cutoff, the live read model after the receipts
// equals one rebuilt from what the stream keeps.
func TestRetentionRebuildEqualsLive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		evs    []memory.Applied
		cutoff uint64
		want   int // turns expired
		reqs   int // extraction requests expired
	}{{
		name:   "a session split by the cutoff",
		evs:    []memory.Applied{turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b"), turn(3, "u", "s", 2, "c"), extracted(4, "u", "s", 0, 1, 2)},
		cutoff: 3, want: 2,
	}, {
		name: "a session ended, then resumed",
		evs: []memory.Applied{turn(1, "u", "s", 0, "a"), ended(2, "u", "s"), turn(3, "u", "s", 1, "b"),
			extracted(4, "u", "s", 0, 1)},
		cutoff: 3, want: 1,
	}, {
		name:   "a whole ended session",
		evs:    []memory.Applied{turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b"), ended(3, "u", "s"), extracted(4, "u", "s", 0, 1)},
		cutoff: 4, want: 2,
	}, {
		name: "a turn re-recorded after the cutoff",
		evs: []memory.Applied{turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b"), turn(4, "u", "s", 0, "a, edited"),
			extracted(5, "u", "s", 0, 1)},
		cutoff: 3, want: 0,
	}, {
		name: "a compression snapshot after the cutoff carries an old turn",
		evs: []memory.Applied{turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b"),
			compressing(4, "u", "s", map[int]string{1: "b", 2: "new"}), extracted(5, "u", "s", 0, 1, 2)},
		cutoff: 3, want: 1,
	}, {
		name: "a snapshot's turn recorded after the cutoff",
		evs: []memory.Applied{compressing(1, "u", "s", map[int]string{0: "a", 1: "b"}), turn(3, "u", "s", 1, "b"),
			extracted(4, "u", "s", 0, 1)},
		cutoff: 2, want: 0,
	}, {
		name: "a re-recorded turn in one session, another session expiring",
		evs: []memory.Applied{turn(1, "u", "s1", 0, "x"), turn(2, "u", "s2", 0, "a"), turn(3, "u", "s2", 1, "b"),
			turn(5, "u", "s1", 0, "x, edited"), extracted(6, "u", "s1", 0), extracted(7, "u", "s2", 0, 1)},
		cutoff: 4, want: 0,
	}, {
		name:   "an unextracted turn holds its user's later ones",
		evs:    []memory.Applied{turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b"), turn(3, "v", "s", 0, "c"), extracted(4, "u", "s", 0), extracted(5, "v", "s", 0)},
		cutoff: 4, want: 2,
	}, {
		name:   "a request goes with its turns once its result is recorded",
		evs:    withResults(turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b"), requested(3, "u", "s", "q1", 0, 1)),
		cutoff: 5, want: 2, reqs: 1,
	}, {
		name:   "a request whose turns went in an earlier run",
		evs:    withResults(requested(3, "u", "s", "q1", 0, 1)),
		cutoff: 5, want: 0, reqs: 1,
	}, {
		name: "a request still waiting holds its user's bound",
		evs: append(withResults(turn(1, "u", "s", 0, "a"), turn(2, "u", "s", 1, "b"), requested(3, "u", "s", "q1", 0, 1)),
			requested(5, "u", "s", "q2", 0, 1), turn(6, "u", "s", 2, "c"), requested(7, "u", "s", "q3", 2),
			result(8, requested(7, "u", "s", "q3", 2))),
		cutoff: 9, want: 2, reqs: 1,
	}, {
		name: "a request id stored twice, the bound between the copies",
		evs: []memory.Applied{turn(1, "u", "s", 0, "a"), requested(2, "u", "s", "q1", 0), sweepCopy(3, requested(2, "u", "s", "q1", 0)),
			result(4, requested(2, "u", "s", "q1", 0))},
		cutoff: 3, want: 1, reqs: 0,
	}} {
		t.Run(c.name, func(t *testing.T) {
			live, built, plan := retain(t, c.evs, c.cutoff)
			if turns, reqs := expiredTurns(plan); turns != c.want || reqs != c.reqs {
				t.Errorf("turns expired=%d, requests=%d, want %d and %d (plan %+v)", turns, reqs, c.want, c.reqs, plan.Expire)
			}
			sameSums(t, live, built)
		})
	}
}
