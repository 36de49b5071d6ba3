package clustertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/sourcegraph/conc/pool"
)

// workload is a mixed bilingual load, the same on every deployment it
// runs on: sessions with tool calls that end, sessions the agent
// compresses with turns left waiting for the daily sweep, manual
// memories, pending decisions, edits, a scratchpad, then a daily and a
// weekly job. Every id and every time in it is fixed by the user's
// number and the workload's clock, so two runs publish the same events.
//
// Within one user the steps run in order, each waiting for the last to
// be projected (?wait=true or a settle): what the extractor knows when a
// session is extracted, and so which facts update which, is then the same
// everywhere. Users run side by side.
type workload struct {
	users  int
	base   time.Time // the first turn's time
	daily  time.Time // the firing time of the daily job
	weekly time.Time // and of the weekly one
}

// newWorkload fixes the clock: turns yesterday (UTC), the daily job at
// 03:00 today (it compresses yesterday's log), the weekly on the Monday
// after at 04:00.
func newWorkload(users int, now time.Time) workload {
	today := now.UTC().Truncate(24 * time.Hour)
	w := workload{users: users, base: today.Add(-14 * time.Hour), daily: today.Add(3 * time.Hour)}
	days := (int(time.Monday) - int(today.Weekday()) + 7) % 7
	if days == 0 {
		days = 7
	}
	w.weekly = today.AddDate(0, 0, days).Add(4 * time.Hour)
	return w
}

func (w workload) user(u int) string { return fmt.Sprintf("u%03d", u) }

var (
	names   = []string{"李雷", "Ana", "王芳", "Ben", "陈静", "Lena"}
	cities  = []string{"杭州", "Lisbon", "上海", "Berlin", "成都", "Oslo"}
	dislike = []string{"加班", "meetings", "香菜", "cold coffee", "堵车", "spam"}
)

// turn is a turn.recorded event of user u.
func (w workload) turn(u int, session string, index int, role, content string, extra map[string]any) map[string]any {
	data := map[string]any{"session_id": session, "turn_index": index, "role": role}
	if content != "" {
		data["content"] = content
	}
	for k, v := range extra {
		data[k] = v
	}
	return w.event(u, fmt.Sprintf("%s-%s-t%d", w.user(u), session, index), "turn.recorded", session, index, data)
}

func (w workload) event(u int, id, typ, session string, index int, data map[string]any) map[string]any {
	at := w.base.Add(time.Duration(u)*time.Minute + time.Duration(len(session)+index)*time.Second)
	return map[string]any{
		"specversion": "1.0", "id": id, "source": "clustertest/agent", "type": typ,
		"user": w.user(u), "time": at.Format(time.RFC3339Nano), "data": data,
	}
}

// sessionA has tool calls and ends: extracted at its end, an episode and
// the scratchpad built by the consolidator.
func (w workload) sessionA(u int) []any {
	s := "a"
	name, city, no := names[u%len(names)], cities[u%len(cities)], dislike[u%len(dislike)]
	evs := []any{
		w.turn(u, s, 0, "user", fmt.Sprintf("我叫%s，住在%s，不喜欢%s。", name, city, no), nil),
		w.turn(u, s, 1, "assistant", "我查一下明天的天气。", map[string]any{
			"tool_calls": []any{map[string]any{"id": "call-1", "name": "weather", "input": map[string]any{"city": city}}}}),
		w.turn(u, s, 2, "tool", "", map[string]any{
			"tool_results": []any{map[string]any{"tool_call_id": "call-1", "content": "晴，18°C"}}}),
		w.turn(u, s, 3, "user", fmt.Sprintf("We use PostgreSQL, and the config is at /etc/%s/config.yaml", w.user(u)), nil),
		w.turn(u, s, 4, "assistant", "Noted: PostgreSQL, and the config path.", nil),
	}
	return append(evs, w.event(u, w.user(u)+"-a-end", "session.ended", s, 5,
		map[string]any{"session_id": s, "message_count": 5, "reason": "user_closed"}))
}

// sessionB's first turns leave the context window (context.compressing:
// extracted at once, a compression episode); the facts in them update
// session A's.
func (w workload) sessionB(u int) []any {
	s := "b"
	t0 := w.turn(u, s, 0, "user", "We're on Go 1.25, and I prefer short answers.", nil)
	t1 := w.turn(u, s, 1, "assistant", "好的，简短回答。", nil)
	t2 := w.turn(u, s, 2, "user", "我们决定用 NATS 做消息总线，配置文件在 /srv/app.yaml", nil)
	var turns []any
	for _, t := range []map[string]any{t0, t1, t2} {
		turns = append(turns, t["data"])
	}
	return []any{t0, t1, t2, w.event(u, w.user(u)+"-b-compress", "context.compressing", s, 3,
		map[string]any{"session_id": s, "turns": turns, "summary": "Go 版本、回答风格和消息总线的决定"})}
}

// sessionBRest are turns after the compression that no rule extracts
// before the daily sweep (the quiet gap is minutes away).
func (w workload) sessionBRest(u int) []any {
	return []any{
		w.turn(u, "b", 3, "user", "我们升级到了 Go 1.26", nil),
		w.turn(u, "b", 4, "assistant", "Upgraded; noted.", nil),
	}
}

// run drives the whole workload through d and waits until d has settled.
func (w workload) run(ctx context.Context, d *deployment) error {
	js := d.operatorJS(d.t)
	// Started means every consumer pulling: each worker has done what it
	// does before it takes events (an extractor recovers its partitions'
	// waiting turns, those up to its batcher's ack floor, before its
	// batcher pulls), as with the single binary.
	parts := d.parts
	waitPulling(d.t, js, parts)
	steps := []struct {
		name string
		each func(ctx context.Context, u int) error
	}{
		{"session a", func(ctx context.Context, u int) error { return w.post(ctx, d.ingestURL(u), w.sessionA(u)) }},
		{"session b", func(ctx context.Context, u int) error { return w.post(ctx, d.ingestURL(u), w.sessionB(u)) }},
		{"session b, the rest", func(ctx context.Context, u int) error { return w.post(ctx, d.ingestURL(u), w.sessionBRest(u)) }},
		{"manual memories", func(ctx context.Context, u int) error { return w.manual(ctx, d.apiURL(u), u) }},
	}
	for _, step := range steps {
		p := pool.New().WithErrors().WithContext(ctx).WithMaxGoroutines(4)
		for u := range w.users {
			p.Go(func(ctx context.Context) error {
				if err := step.each(ctx, u); err != nil {
					return fmt.Errorf("%s of %s: %w", step.name, w.user(u), err)
				}
				return nil
			})
		}
		if err := p.Wait(); err != nil {
			return err
		}
		settle(d.t, js, parts, time.Second)
	}
	for _, job := range []struct {
		name string
		at   time.Time
	}{{"daily", w.daily}, {"weekly", w.weekly}} {
		rep, err := app.RequestJob(ctx, d.operatorConfig(d.t.TempDir()), app.JobRequest{Job: job.name, At: job.at})
		if err != nil {
			return fmt.Errorf("%s job: %w", job.name, err)
		}
		if len(rep.Ran) == 0 {
			return fmt.Errorf("%s job ran no rule", job.name)
		}
		settle(d.t, js, parts, time.Second)
	}
	return nil
}

// manual writes through the API: an active memory edited, two pending
// ones (one confirmed, one ignored), one deleted, and the scratchpad.
func (w workload) manual(ctx context.Context, api string, u int) error {
	user := w.user(u)
	add := func(key, body string) (string, error) {
		var out struct {
			MemoryID string `json:"memory_id"`
		}
		err := call(ctx, "POST", api+"/v1/memories?wait=true", body, map[string]string{"Idempotency-Key": user + "-" + key}, 202, &out)
		if err == nil && out.MemoryID == "" {
			err = fmt.Errorf("no memory_id")
		}
		return out.MemoryID, err
	}
	tea, err := add("tea", fmt.Sprintf(`{"user":%q,"kind":"preference","category":"identity","subject":"user","predicate":"likes","content":"%s 喜欢绿茶","importance":0.9}`, user, names[u%len(names)]))
	if err != nil {
		return err
	}
	hike, err := add("hike", fmt.Sprintf(`{"user":%q,"kind":"preference","category":"event","subject":"user","predicate":"hobby","content":"likes hiking on weekends","confidence":0.7}`, user))
	if err != nil {
		return err
	}
	chess, err := add("chess", fmt.Sprintf(`{"user":%q,"kind":"preference","category":"conversation","subject":"user","predicate":"game","content":"也许喜欢下棋","confidence":0.65}`, user))
	if err != nil {
		return err
	}
	tmp, err := add("tmp", fmt.Sprintf(`{"user":%q,"kind":"fact","category":"temp","subject":"user","predicate":"note","content":"a note to delete"}`, user))
	if err != nil {
		return err
	}
	q := "?user=" + user + "&wait=true"
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/pending/" + hike + "/confirm", ""},
		{"POST", "/v1/pending/" + chess + "/ignore", ""},
		{"PATCH", "/v1/memories/" + tea, `{"content":"` + names[u%len(names)] + ` 只喝龙井绿茶","importance":0.95}`},
		{"DELETE", "/v1/memories/" + tmp, ""},
		{"PUT", "/v1/scratchpad", `{"content":"本周：发布 v2 (release on Friday)"}`},
	} {
		status := 202
		if c.method == "POST" {
			status = 0 // the pending routes answer 200 or 202; checked below by the state
		}
		if err := call(ctx, c.method, api+c.path+q, c.body, map[string]string{"Idempotency-Key": user + "-" + c.method + c.path}, status, nil); err != nil {
			return err
		}
	}
	return nil
}

// post sends events as one batch and wants every one accepted.
func (w workload) post(ctx context.Context, ingest string, evs []any) error {
	body, err := json.Marshal(evs)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", ingest+"/v1/events", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/cloudevents-batch+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer quiet.Close(resp.Body)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("POST /v1/events: %d %s", resp.StatusCode, raw)
	}
	return nil
}

// call makes one API request and wants status (any 2xx when 0).
func call(ctx context.Context, method, url, body string, hdr map[string]string, status int, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer quiet.Close(resp.Body)
	raw, _ := io.ReadAll(resp.Body)
	if status != 0 && resp.StatusCode != status || status == 0 && resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}
