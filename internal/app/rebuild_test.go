package app

import (
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap/zaptest"
	_ "modernc.org/sqlite"
)

// mixedWorkload sends every kind of thing the read model must reproduce:
// two languages, two namespaces, duplicates, a re-recorded turn, a
// compression snapshot with new and known turns, a session end, and an
// event the projector must dead-letter. It returns the last stream seq.
func mixedWorkload(t *testing.T, a *App) uint64 {
	t.Helper()
	var evs []any
	for i := range 40 {
		user := []string{"ann", "ben", "陈"}[i%3]
		evs = append(evs, turnEvent("m-"+string(rune('a'+i%26))+string(rune('0'+i/26)), user, "s"+string(rune('0'+i%4)), i,
			[]string{"user", "assistant"}[i%2], []string{"我们决定用 Postgres 16 做主库", "The deploy script lives in ./ops/deploy.sh", "下周三和产品经理开会讨论定价"}[i%3]))
	}
	mustAccept(t, postBatch(t, a, evs...))
	mustAccept(t, postEvent(t, a, turnEvent("m-name", "ann", "s0", 100, "user", "我叫安娜，我喜欢喝绿茶")))
	mustAccept(t, postEvent(t, a, evs[0])) // duplicate
	mustAccept(t, postEvent(t, a, turnEvent("m-edit", "ann", "s0", 0, "user", "edited: we chose SQLite after all")))
	ns := turnEvent("ns-x", "ann", "s0", 0, "user", "another namespace, same user id")
	ns["namespace"] = "tenant-2"
	mustAccept(t, postEvent(t, a, ns))
	mustAccept(t, postEvent(t, a, map[string]any{
		"specversion": "1.0", "id": "cc-1", "source": "test/agent", "type": "context.compressing", "user": "ben",
		"data": map[string]any{"session_id": "s1", "summary": "they talked about deploys", "turns": []any{
			map[string]any{"turn_index": 1, "role": "assistant", "content": "should not overwrite the recorded turn"},
			map[string]any{"turn_index": 999, "role": "user", "content": "a turn the stream had not seen"},
		}},
	}))
	end := postEvent(t, a, map[string]any{
		"specversion": "1.0", "id": "end-1", "source": "test/agent", "type": "session.ended", "user": "ann",
		"data": map[string]any{"session_id": "s0", "message_count": 11, "reason": "user_left"},
	})
	mustAccept(t, end)
	bad, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": "bad", "source": "x", "type": "turn.recorded",
		"data": map[string]any{"session_id": "s", "turn_index": -1, "role": "user", "content": "x"}})
	if _, err := jsOf(a).Publish(t.Context(), stream.Subject("default", "ann", "turn.recorded"), bad); err != nil {
		t.Fatal(err)
	}
	last := postEvent(t, a, turnEvent("m-last", "ann", "s3", 500, "user", "the last one"))
	mustAccept(t, last)
	return lastSeqOf(last)
}

// emptySum is the checksum of no rows.
const emptySum = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func TestRebuildEqualsLive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	a := startApp(t, cfg, RoleAll)
	mixedWorkload(t, a)
	seq := waitSettled(t, a)
	stopApp(t, a)

	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.HadLive {
		t.Fatal("rebuild did not find the live read model")
	}
	if len(rep.Diff) != 0 {
		t.Fatalf("rebuilt read model differs from live in %v\nlive:  %v\nbuilt: %v", rep.Diff, rep.Live, rep.Built)
	}
	if rep.Target != seq || rep.Skipped != 1 {
		t.Fatalf("target %d skipped %d, want %d and 1 (the malformed event)", rep.Target, rep.Skipped, seq)
	}
	if rep.Built["memories"] == "0:"+emptySum {
		t.Fatalf("the workload extracted no memories; the rebuild check is weaker than it should be")
	}

	t.Run("a changed live read model is caught", func(t *testing.T) {
		db, err := sql.Open("sqlite", cfg.ReadModelPath())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`UPDATE turns SET content = content || '!' WHERE id = 3`); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Diff) != 1 || rep.Diff[0] != "turns" {
			t.Fatalf("diff = %v, want [turns]", rep.Diff)
		}
	})

	t.Run("a deleted read model is rebuilt by the projector on start", func(t *testing.T) {
		rep, err := Rebuild(t.Context(), cfg, RebuildOptions{Replace: true, Out: cfg.ReadModelPath() + ".fresh"}, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Diff) != 1 {
			t.Fatalf("setup: diff = %v", rep.Diff)
		}
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = removeIfExists(cfg.ReadModelPath() + suffix)
		}
		// Only the read model's role: the extractor would keep publishing.
		b := startApp(t, cfg, RoleRetriever)
		waitProjected(t, b, seq)
		sums, _, err := b.Store().Checksum(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if d := sums.Diff(rep.Built); len(d) != 0 {
			t.Fatalf("projector's fresh read model differs from rebuild in %v", d)
		}
	})
}
