package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
)

// compared are the read model's tables the equivalence holds for: the
// turns, the memories, the episodes, the scratchpads and the profiles, and
// what says how they came to be (sessions, memory history, extraction
// records, the daily log).
var compared = []string{"turns", "sessions", "memories", "memory_history", "extractions",
	"episodes", "scratchpad", "daily_summaries", "profile"}

// wallClock lists the columns left out of the comparison: each records
// when a process did its work (the wall clock of the extractor, the API
// or the consolidator), not what the events say, so two deployments fed
// the same events differ there and nowhere else. Every other column, the
// ids of derived memories and episodes included, must agree.
//
//   - memories: created and updated are the time of the event that wrote
//     the memory, which for an extracted one is the extractor's clock
//     (memory.extracted is stamped when it is published), for a manual one
//     the API's; valid_to is when a later event superseded it. said_at is
//     its turn's time for an extracted one, but the API's clock for one
//     written by hand without a said_at.
//   - memory_history: time is that event's time, said_at that of what it
//     records (the API's or the consolidator's clock for an edit, a
//     decision, a merge), and old and new are the memory's whole row
//     before and after, those times inside. Which change, by what cause,
//     to which memory, in which order, is compared.
//   - extractions: requested and done are the batcher's and the
//     extractor's clocks.
//   - scratchpad: updated is the clock of the API (PUT) or of the
//     consolidator that wrote it last.
var wallClock = map[string][]string{
	"memories":       {"created", "updated", "valid_to", "said_at"},
	"memory_history": {"time", "said_at", "old", "new"},
	"extractions":    {"requested", "done"},
	"scratchpad":     {"updated"},
}

// readModelSumsWith is the content checksum of the compared tables of
// the read model c (its process stopped), without the columns in skip,
// of the rows of the users keep keeps (all when nil).
func readModelSumsWith(t *testing.T, c readCopy, skip map[string][]string, keep func(namespace, user string) bool) sqlite.TableSums {
	t.Helper()
	s, err := sqlite.Open(t.Context(), c.path)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(s)
	sums, err := s.ContentChecksumWhere(t.Context(), compared, skip, keep)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func scopeOf(user string) memory.Scope { return memory.Scope{Namespace: "default", User: user} }

// The same workload through the single binary and through the workers
// apart on a three-node cluster ends in the same read model: each
// partition's copy, kept by the retriever that held it, holds the single
// binary's rows of that partition's users.
func TestEquivalence(t *testing.T) {
	users := 4
	if soak() {
		users = 40
	}
	if testing.Short() && !soak() {
		users = 2
	}
	w := newWorkload(users, time.Now())
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	start := time.Now()
	single := startSingle(t)
	if err := w.run(ctx, single); err != nil {
		t.Fatalf("single binary: %v", err)
	}
	single.stopAll()
	t.Logf("single binary: %v", time.Since(start))

	start = time.Now()
	cluster := startCluster(t)
	if err := w.run(ctx, cluster); err != nil {
		t.Fatalf("cluster: %v", err)
	}
	cluster.stopAll()
	t.Logf("cluster: %v", time.Since(start))

	whole := single.readCopies()[0]
	checkExtractedOnce(t, []readCopy{whole}, users)
	copies := cluster.readCopies()
	for _, c := range copies {
		want := readModelSumsWith(t, whole, wallClock, c.keeps)
		got := readModelSumsWith(t, c, wallClock, nil)
		if diff := want.Diff(got); len(diff) > 0 {
			for _, table := range diff {
				t.Errorf("%s: table %s differs from the single binary's rows of its users: %s, want %s", c, table, got[table], want[table])
			}
			t.Logf("compare: sqlite3 %s and %s", whole.path, c.path)
		}
		var rows []string
		for _, table := range compared {
			rows = append(rows, table+" "+strings.SplitN(want[table], ":", 2)[0])
		}
		t.Logf("%s: %s rows", c, strings.Join(rows, ", "))
	}
	checkExtractedOnce(t, copies, users)
}

// checkExtractedOnce: every turn of the workload that an extraction
// names is in exactly one, every extraction ended extracted, and each of
// the users' two sessions has one. Counted from the extraction records of
// the read models that together hold every user (copies), so it holds
// however many extractors ran.
func checkExtractedOnce(t *testing.T, copies []readCopy, users int) {
	t.Helper()
	in := turnsExtracted(t, copies, t.Errorf)
	sessions := map[string]bool{}
	for key, n := range in {
		if n != 1 {
			t.Errorf("turn %s is in %d extractions, want 1", key, n)
		}
		sessions[key[:strings.LastIndex(key, "/")]] = true
	}
	if got, want := len(sessions), 2*users; got != want {
		t.Errorf("%d sessions extracted, want %d", got, want)
	}
}

// turnsExtracted counts, per turn ("user/session/index"), the extraction
// records of the read models copies that name it; report is told of each
// record that did not end extracted.
func turnsExtracted(t *testing.T, copies []readCopy, report func(format string, args ...any)) map[string]int {
	t.Helper()
	in := map[string]int{}
	for _, c := range copies {
		turnsExtractedIn(t, c, in, report)
	}
	return in
}

func turnsExtractedIn(t *testing.T, c readCopy, in map[string]int, report func(format string, args ...any)) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), c.path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	recs, err := s.ExtractionRecords(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Status != "extracted" {
			report("%s: extraction %s of %s/%s is %s", c, r.RequestID, r.User, r.Session, r.Status)
		}
		var turns []int
		if err := json.Unmarshal([]byte(r.Turns), &turns); err != nil {
			t.Fatalf("extraction %s turns %q: %v", r.RequestID, r.Turns, err)
		}
		for _, i := range turns {
			in[fmt.Sprintf("%s/%s/%d", r.User, r.Session, i)]++
		}
	}
}
