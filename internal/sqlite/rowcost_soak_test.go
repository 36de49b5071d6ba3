//go:build soak

package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// What a row of the read model costs on disk, its full-text entry
// included, and how fast the projector applies it: the inputs of
// docs/scale.md's model. Turns are a conversation's, half Chinese, half
// English, about 70 characters each (the bench corpora's median); memories
// are extracted facts of about 40 characters.
//
//	ENGRAM_SOAK_TURNS=200000 ENGRAM_SOAK_MEMORIES=20000 ENGRAM_SOAK_USERS=200 go test -tags soak -run TestRowCost -v ./internal/sqlite
//
// The memories are spread over ENGRAM_SOAK_USERS users: applying one reads
// its user's current memories (the similarity check at write), so what a
// memory costs grows with how many its user has.
func TestRowCost(t *testing.T) {
	turns, mems, users := soakN("ENGRAM_SOAK_TURNS", 200000), soakN("ENGRAM_SOAK_MEMORIES", 50000), soakN("ENGRAM_SOAK_USERS", 200)
	path := filepath.Join(t.TempDir(), "cost.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(s)
	size := func() int64 {
		if err := s.Scrub(t.Context()); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	empty := size()
	texts := []string{
		"我们下周三在杭州开评审会，记得把上线计划和回滚方案都准备好。",
		"Can you check why the billing job failed last night? It timed out after 30 minutes again.",
		"我不喝咖啡了，最近改喝绿茶，晚上十点以后也不看手机。",
		"The staging cluster runs Go 1.22; production is still on 1.21 until the freeze ends.",
	}
	var seq uint64
	apply := func(batch []memory.Applied) {
		for i, err := range s.Apply(t.Context(), batch) {
			if err != nil {
				t.Fatalf("apply %d: %v", batch[i].Seq, err)
			}
		}
	}
	start, cpu0 := time.Now(), cpuTime()
	batch := make([]memory.Applied, 0, 512)
	for i := range turns {
		seq++
		user := fmt.Sprintf("u%04d", i%users)
		batch = append(batch, memory.Applied{
			Envelope: memory.Envelope{Seq: seq, Source: "soak", ID: "t" + strconv.FormatUint(seq, 10), Type: events.TypeTurnRecorded,
				Scope: memory.Scope{Namespace: "default", User: user}, Time: time.Unix(1_700_000_000+int64(seq), 0).UTC()},
			Data: &events.TurnRecorded{SessionID: fmt.Sprintf("s%d", i/(users*20)), TurnIndex: i / users, Role: "user",
				Content: fmt.Sprintf("%s (%d)", texts[i%len(texts)], i)},
		})
		if len(batch) == cap(batch) {
			apply(batch)
			batch = batch[:0]
		}
	}
	apply(batch)
	batch = batch[:0]
	turnTime, turnCPU := time.Since(start), cpuTime()-cpu0
	afterTurns := size()
	facts := []string{"用户住在杭州", "The user prefers green tea", "用户的团队周五发布", "The user drives a blue Volvo"}
	start, cpu0 = time.Now(), cpuTime()
	for i := range mems {
		seq++
		user := fmt.Sprintf("u%04d", i%users)
		batch = append(batch, memory.Applied{
			Envelope: memory.Envelope{Seq: seq, Source: "engram/api", ID: "m" + strconv.FormatUint(seq, 10), Type: events.TypeMemoryAdded,
				Scope: memory.Scope{Namespace: "default", User: user}, Time: time.Unix(1_700_000_000+int64(seq), 0).UTC()},
			Data: &events.MemoryAdded{MemoryID: fmt.Sprintf("m%d", i), Kind: "fact", Category: "event", Subject: "user",
				Predicate: fmt.Sprintf("p%d", i/users), Content: fmt.Sprintf("%s (%d)", facts[i%len(facts)], i), Importance: 0.6, Confidence: 0.9, Tier: 2},
		})
		if len(batch) == cap(batch) {
			apply(batch)
			batch = batch[:0]
		}
	}
	apply(batch)
	memTime, memCPU := time.Since(start), cpuTime()-cpu0
	afterMems := size()
	t.Logf("%d turns: %.0f bytes a turn (row, session, applied key, full-text entry), %.0f applied a second, %.0f a CPU second",
		turns, float64(afterTurns-empty)/float64(turns), float64(turns)/turnTime.Seconds(), float64(turns)/turnCPU.Seconds())
	t.Logf("%d memories: %.0f bytes a memory (row, history, applied key, full-text entry), %.0f applied a second, %.0f a CPU second",
		mems, float64(afterMems-afterTurns)/float64(mems), float64(mems)/memTime.Seconds(), float64(mems)/memCPU.Seconds())
	t.Logf("load average %s", loadAverage())
}

// cpuTime is the CPU time this process has used: on a machine shared
// with other work, what a figure costs, where the wall clock says how busy
// the machine was.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func soakN(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return string(b[:len(b)-1])
}
