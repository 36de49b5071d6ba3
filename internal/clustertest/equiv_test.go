package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
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
// the read model in dataDir (its process stopped), without the columns in
// skip.
func readModelSumsWith(t *testing.T, dataDir string, skip map[string][]string) sqlite.TableSums {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(dataDir, "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sums, err := s.ContentChecksumOf(t.Context(), compared, skip)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func scopeOf(user string) memory.Scope { return memory.Scope{Namespace: "default", User: user} }

// The same workload through the single binary and through the workers
// apart on a three-node cluster ends in the same read model, in each of
// the cluster's retrievers.
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

	want := readModelSumsWith(t, single.readModels()[0], wallClock)
	checkExtractedOnce(t, single.readModels()[0], users)
	for _, rm := range cluster.readModels() {
		got := readModelSumsWith(t, rm, wallClock)
		if diff := want.Diff(got); len(diff) > 0 {
			for _, table := range diff {
				t.Errorf("%s: table %s differs from the single binary's: %s, want %s", filepath.Base(rm), table, got[table], want[table])
			}
			t.Logf("compare: sqlite3 %s/engram.db and %s/engram.db", single.readModels()[0], rm)
		}
		checkExtractedOnce(t, rm, users)
	}
	for table, sum := range want {
		t.Logf("%s %s", table, sum)
	}
}

// checkExtractedOnce: every turn of the workload that an extraction
// names is in exactly one, every extraction ended extracted, and each of
// the users' two sessions has one. Counted from the extraction records, so
// it holds however many extractors ran.
func checkExtractedOnce(t *testing.T, dataDir string, users int) {
	t.Helper()
	in := turnsExtracted(t, dataDir, t.Errorf)
	sessions := map[string]bool{}
	for key, n := range in {
		if n != 1 {
			t.Errorf("%s: turn %s is in %d extractions, want 1", filepath.Base(dataDir), key, n)
		}
		sessions[key[:strings.LastIndex(key, "/")]] = true
	}
	if got, want := len(sessions), 2*users; got != want {
		t.Errorf("%s: %d sessions extracted, want %d", filepath.Base(dataDir), got, want)
	}
}

// turnsExtracted counts, per turn ("user/session/index"), the extraction
// records of the read model in dataDir that name it; report is told of
// each record that did not end extracted.
func turnsExtracted(t *testing.T, dataDir string, report func(format string, args ...any)) map[string]int {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(dataDir, "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := s.ExtractionRecords(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]int{}
	for _, r := range recs {
		if r.Status != "extracted" {
			report("%s: extraction %s of %s/%s is %s", filepath.Base(dataDir), r.RequestID, r.User, r.Session, r.Status)
		}
		var turns []int
		if err := json.Unmarshal([]byte(r.Turns), &turns); err != nil {
			t.Fatalf("extraction %s turns %q: %v", r.RequestID, r.Turns, err)
		}
		for _, i := range turns {
			in[fmt.Sprintf("%s/%s/%d", r.User, r.Session, i)]++
		}
	}
	return in
}
