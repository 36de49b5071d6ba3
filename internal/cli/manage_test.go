package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"go.uber.org/zap/zaptest"
)

// runApp starts engram on dir for fn, then stops it.
func runApp(t *testing.T, dir string, fn func(a *app.App)) {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir, cfg.HTTP.Addr, cfg.NATS.Listen, cfg.ShutdownTimeout = dir, "127.0.0.1:0", "", 10*time.Second
	a := app.New(cfg, app.RoleAll, zaptest.NewLogger(t))
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	fn(a)
}

// stats counts; delete removes one memory, applied when engram next runs.
func TestStatsAndDelete(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	var id string
	runApp(t, dir, func(a *app.App) {
		body := `{"user":"ann","kind":"preference","category":"config","subject":"user","predicate":"prefers","content":"tea","importance":0.9}`
		resp, err := http.Post("http://"+a.HTTPAddr()+"/v1/memories?wait=true", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		quiet.Close(resp.Body)
		var out struct {
			MemoryID string `json:"memory_id"`
		}
		if resp.StatusCode != 202 || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("add: %d %s", resp.StatusCode, raw)
		}
		id = out.MemoryID
	})
	out, errOut, code := run(t, "stats", "--data-dir", dir, "--json")
	if code != 0 {
		t.Fatalf("stats: exit %d: %s", code, errOut)
	}
	var st struct {
		ReadModel struct {
			Memories int            `json:"memories"`
			ByCat    map[string]int `json:"active_by_category"`
		} `json:"read_model"`
		Memory struct {
			Messages int `json:"messages"`
		} `json:"MEMORY"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.ReadModel.Memories != 1 || st.ReadModel.ByCat["config"] != 1 || st.Memory.Messages == 0 {
		t.Fatalf("stats: %s (%v)", out, err)
	}
	if _, errOut, code := run(t, "delete", "--data-dir", dir, "--user", "bob", id); code != 1 || !strings.Contains(errOut, "no memory") {
		t.Fatalf("delete of another user's memory: exit %d: %s", code, errOut)
	}
	if out, errOut, code := run(t, "delete", "--data-dir", dir, "--user", "ann", "--reason", "asked", id); code != 0 || !strings.Contains(out, "deleted memory") {
		t.Fatalf("delete: exit %d: %s %s", code, out, errOut)
	}
	runApp(t, dir, func(a *app.App) {
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, err := a.Store().Memory(t.Context(), memory.Scope{Namespace: "default", User: "ann"}, id)
			if memory.ErrorCode(err) == memory.ENOTFOUND {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("memory %s still there after delete: %v", id, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// engram help lists every command Main runs.
func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	out, _, code := run(t, "help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, c := range []string{"serve", "rebuild", "search", "dlq", "forget", "stats", "delete", "replay", "reextract", "export", "import", "rules", "migrate", "version"} {
		if !strings.Contains(out, "engram "+c) {
			t.Errorf("help leaves out %q", c)
		}
		if _, errOut, _ := run(t, c, "-h"); strings.Contains(errOut, "unknown command") {
			t.Errorf("%q is listed but not a command", c)
		}
	}
}

// forget run with engram stopped does not wait for workers that are not
// running, though their consumers have the receipt waiting.
func TestForgetOfflineDoesNotWaitForStoppedWorkers(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	runApp(t, dir, func(a *app.App) {
		body := `{"user":"ann","kind":"preference","category":"config","subject":"user","predicate":"prefers","content":"tea","importance":0.9}`
		resp, err := http.Post("http://"+a.HTTPAddr()+"/v1/memories?wait=true", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		quiet.Close(resp.Body)
	})
	start := time.Now()
	out, errOut, code := run(t, "forget", "--data-dir", dir, "--http-addr", "127.0.0.1:1", "--user", "ann")
	if code != 0 || !strings.Contains(out, `"workers_settled": true`) {
		t.Fatalf("forget: exit %d: %s %s", code, out, errOut)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("forget took %s", took)
	}
}

// reextract publishes one request per session of the period.
func TestReextractCommand(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	runApp(t, dir, func(a *app.App) {
		body := `{"specversion":"1.0","id":"t1","source":"test","type":"turn.recorded","user":"ann","time":"2026-03-01T10:00:00Z",` +
			`"data":{"session_id":"s1","turn_index":0,"role":"user","content":"I live in Lisbon."}}`
		resp, err := http.Post("http://"+a.HTTPAddr()+"/v1/events", "application/cloudevents+json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		quiet.Close(resp.Body)
		deadline := time.Now().Add(20 * time.Second)
		for n, _ := a.Store().CountTurns(t.Context(), memory.Scope{Namespace: "default", User: "ann"}); n != 1; n, _ = a.Store().CountTurns(t.Context(), memory.Scope{Namespace: "default", User: "ann"}) {
			if time.Now().After(deadline) {
				t.Fatal("turn never projected")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	out, errOut, code := run(t, "reextract", "--data-dir", dir, "--since", "2026-01-01", "--until", "2026-06-01", "--user", "ann")
	if code != 0 || !strings.Contains(out, `"turns":1`) || !strings.Contains(out, `"requests":1`) {
		t.Fatalf("reextract: exit %d: %s %s", code, out, errOut)
	}
	if _, errOut, code := run(t, "reextract", "--data-dir", dir); code != 2 || !strings.Contains(errOut, "--since") {
		t.Fatalf("without --since: exit %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, "reextract", "--data-dir", dir, "--since", "yesterday"); code != 2 || !strings.Contains(errOut, "RFC 3339") {
		t.Fatalf("a bad --since: exit %d: %s", code, errOut)
	}
}

// replay recreates a worker's consumer at a point; a read model's is refused.
func TestReplayCommand(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	deadLetterOne(t, dir)
	runApp(t, dir, func(*app.App) {}) // creates the workers' consumers
	out, errOut, code := run(t, "replay", "--data-dir", dir, "--consumer", "batcher", "--from", "1")
	if code != 0 || !strings.Contains(out, "from seq 1") {
		t.Fatalf("replay: exit %d: %s %s", code, out, errOut)
	}
	if _, errOut, code := run(t, "replay", "--data-dir", dir, "--consumer", "projector-local", "--from", "1"); code != 2 || !strings.Contains(errOut, "rebuild") {
		t.Fatalf("replay of a projector: exit %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, "replay", "--data-dir", dir, "--consumer", "batcher", "--from", "soon"); code != 2 {
		t.Fatalf("a bad --from: exit %d: %s", code, errOut)
	}
	runApp(t, dir, func(*app.App) {}) // the batcher starts from its new point
}

// stats says how long raw turns are kept, and when the oldest was stored.
func TestStatsShowsRetention(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	runApp(t, dir, func(a *app.App) {
		body := `{"specversion":"1.0","id":"t1","source":"test","type":"turn.recorded","user":"ann","data":{"session_id":"s","turn_index":0,"role":"user","content":"hi"}}`
		resp, err := http.Post("http://"+a.HTTPAddr()+"/v1/events", "application/cloudevents+json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		quiet.Close(resp.Body)
		if resp.StatusCode != 202 {
			t.Fatalf("post: %d", resp.StatusCode)
		}
	})
	out, errOut, code := run(t, "stats", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "retention: off, raw turns are kept forever") || !strings.Contains(out, "the oldest was stored") {
		t.Fatalf("stats: exit %d: %s %s", code, out, errOut)
	}
	t.Setenv("ENGRAM_RETENTION_RAW_TURNS", "720h")
	out, errOut, code = run(t, "stats", "--data-dir", dir, "--json")
	var st struct {
		Retention struct {
			RawTurns string     `json:"raw_turns"`
			Oldest   *time.Time `json:"oldest_raw_turn_stored"`
		} `json:"retention"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Retention.RawTurns != "720h0m0s" || st.Retention.Oldest == nil {
		t.Fatalf("stats --json: exit %d: %s %s", code, out, errOut)
	}
}

// engram stats --user reads that user's quality figures: a user who moved
// and upgraded Python has a wrong-write rate of 0 (seed 004 §9: rejected /
// confirmed), whatever another user rejected; users with memories and no
// turns are users.
func TestStatsPerUserQuality(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	runApp(t, dir, func(a *app.App) {
		base := "http://" + a.HTTPAddr()
		post := func(url, body string) string {
			t.Helper()
			resp, err := http.Post(base+url, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			quiet.Close(resp.Body)
			if resp.StatusCode != 202 {
				t.Fatalf("%s: %d %s", url, resp.StatusCode, raw)
			}
			var out struct {
				MemoryID string `json:"memory_id"`
			}
			_ = json.Unmarshal(raw, &out)
			return out.MemoryID
		}
		add := func(user, kind, pred, content string, conf float64) string {
			return post("/v1/memories?wait=true", fmt.Sprintf(`{"user":%q,"kind":%q,"category":"identity","subject":"user",`+
				`"predicate":%q,"content":%q,"importance":0.6,"confidence":%v}`, user, kind, pred, content, conf))
		}
		add("ana", "fact", "location", "用户住在北京", 1)
		add("ana", "skill", "uses", "用户用 Python 3.10 写脚本", 1)
		add("ana", "fact", "location", "用户搬到了上海", 1)
		add("ana", "skill", "uses", "用户升级到了 Python 3.12", 1)
		tea := add("ana", "preference", "likes", "用户喜欢喝茶", 0.7)
		dog := add("bob", "preference", "likes", "用户喜欢狗", 0.7)
		post("/v1/pending/"+tea+"/confirm?user=ana&wait=true", `{}`)
		post("/v1/pending/"+dog+"/ignore?user=bob&wait=true", `{}`)
	})
	type figures struct {
		ReadModel struct {
			Users int `json:"users"`
		} `json:"read_model"`
		Quality memory.Stats `json:"quality"`
	}
	stats := func(args ...string) figures {
		t.Helper()
		out, errOut, code := run(t, append([]string{"stats", "--data-dir", dir, "--json"}, args...)...)
		var f figures
		if code != 0 || json.Unmarshal([]byte(out), &f) != nil {
			t.Fatalf("stats %v: exit %d: %s %s", args, code, out, errOut)
		}
		return f
	}
	ana := stats("--user", "ana").Quality
	if ana.User != "ana" || ana.WrongWriteRate != 0 || ana.WrongWrites != 0 || ana.Confirmed != 1 || ana.Memories["superseded"] != 2 {
		t.Errorf("ana: user %q, wrong-write rate %v (%d rejected, %d confirmed), superseded %d; want ana, 0 (0, 1), 2",
			ana.User, ana.WrongWriteRate, ana.WrongWrites, ana.Confirmed, ana.Memories["superseded"])
	}
	if bob := stats("--user", "bob").Quality; bob.WrongWrites != 1 || bob.Confirmed != 0 {
		t.Errorf("bob: %d rejected, %d confirmed; want 1, 0", bob.WrongWrites, bob.Confirmed)
	}
	if all := stats(); all.ReadModel.Users != 2 || all.Quality.Users != 2 {
		t.Errorf("users: read model %d, quality %d; want 2 (neither has a turn)", all.ReadModel.Users, all.Quality.Users)
	}
	out, errOut, code := run(t, "stats", "--data-dir", dir, "--user", "ana")
	if code != 0 || !strings.Contains(out, "wrong-write rate      0.0%  (0 rejected per 1 confirmed)") ||
		!strings.Contains(out, `user "ana" of namespace "default"`) {
		t.Errorf("stats --user ana: exit %d:\n%s%s", code, out, errOut)
	}
}

// engram delete takes its memory id before or after the flags: the order
// the usage line gives (MEMORY_ID --user U) and the other.
func TestDeleteArgumentsInAnyOrder(t *testing.T) {
	t.Setenv("ENGRAM_NATS_URL", "")
	dir := t.TempDir()
	var ids []string
	runApp(t, dir, func(a *app.App) {
		for _, content := range []string{"tea", "coffee"} {
			body := `{"user":"ann","kind":"preference","category":"config","subject":"user","predicate":"prefers","content":"` + content + `","importance":0.9}`
			resp, err := http.Post("http://"+a.HTTPAddr()+"/v1/memories?wait=true", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			var out struct {
				MemoryID string `json:"memory_id"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			quiet.Close(resp.Body)
			if resp.StatusCode != 202 || err != nil {
				t.Fatalf("add: %d %v", resp.StatusCode, err)
			}
			ids = append(ids, out.MemoryID)
		}
	})
	for _, args := range [][]string{
		{"delete", ids[0], "--data-dir", dir, "--user", "ann"},
		{"delete", "--data-dir", dir, "--user", "ann", ids[1]},
	} {
		if out, errOut, code := run(t, args...); code != 0 || !strings.Contains(out, "deleted memory") {
			t.Errorf("%v: exit %d: %s %s", args, code, out, errOut)
		}
	}
	if _, errOut, code := run(t, "delete", ids[0], ids[1], "--data-dir", dir, "--user", "ann"); code != 2 || !strings.Contains(errOut, "one memory id") {
		t.Errorf("two ids: exit %d: %s", code, errOut)
	}
	runApp(t, dir, func(a *app.App) {
		for _, id := range ids {
			deadline := time.Now().Add(20 * time.Second)
			for {
				_, err := a.Store().Memory(t.Context(), memory.Scope{Namespace: "default", User: "ann"}, id)
				if memory.ErrorCode(err) == memory.ENOTFOUND {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("memory %s still there after delete: %v", id, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	})
}
