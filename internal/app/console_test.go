package app

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds a Chromium to drive: $ENGRAM_CHROMIUM, else the
// usual names on PATH (Debian's package installs /usr/bin/chromium).
func chromiumPath() string {
	if p := os.Getenv("ENGRAM_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The console at /console, in headless Chromium, as a person uses it:
// types the user and the token, lists memories (Chinese and English),
// searches in Chinese, edits one, confirms a pending one, edits the
// scratchpad, and opens the episodes, profile and operations panels.
// Each act is checked through the API afterwards. Stored markup is shown
// as text. With ENGRAM_CONSOLE_SHOTS=dir it also saves a screenshot of
// each panel there; README's come from
// ENGRAM_CONSOLE_SHOTS=$PWD/docs go test -run 'TestConsole$' ./internal/app.
func TestConsole(t *testing.T) {
	t.Parallel()
	chrome := chromiumPath()
	if chrome == "" {
		t.Skip("console test skipped: no chromium binary on PATH (apt-get install chromium, or set ENGRAM_CHROMIUM); .ci/run installs it when it can")
	}
	cfg := testConfig(t, t.TempDir())
	const token = "console-token-0123456789"
	cfg.HTTP.Tokens = map[string]string{token: "*"}
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	auth := map[string]string{"Authorization": "Bearer " + token}

	add := func(body string) string {
		t.Helper()
		r := do(t, "POST", base+"/v1/memories?wait=true", "application/json", []byte(body), auth)
		if r.Status != 202 {
			t.Fatalf("add memory: %d %s", r.Status, r.Raw)
		}
		return r.Body["memory_id"].(string)
	}
	en := add(`{"user":"ana","tier":1,"kind":"preference","category":"config","subject":"ana","predicate":"drinks",
		"content":"Ana drinks dark roast coffee every morning."}`)
	zh := add(`{"user":"ana","tier":1,"kind":"fact","category":"identity","subject":"ana","predicate":"lives_in",
		"content":"用户住在北京市朝阳区，平时喜欢喝美式咖啡。"}`)
	markup := add(`{"user":"ana","kind":"rule","category":"decision","subject":"deploys","predicate":"need",
		"content":"Deploys need a <b>review</b> first <img src=x onerror=\"document.body.dataset.pwned='yes'\">"}`)
	pending := add(`{"user":"ana","kind":"fact","category":"event","subject":"ana","predicate":"may_move_to",
		"content":"Ana may move to Shanghai next year（明年可能搬到上海）.","confidence":0.7}`)
	// An episode from a session, one from compression, in both languages.
	evs := conversation("c", "ana", "s1")
	evs = append(evs, endEvent("c-end", "ana", "s1", 4), map[string]any{
		"specversion": "1.0", "id": "c-cc", "source": "test/agent", "type": "context.compressing", "user": "ana",
		"data": map[string]any{"session_id": "s2", "summary": "我们决定把数据库从 MySQL 迁移到 Postgres。", "turns": []any{
			map[string]any{"turn_index": 0, "role": "user", "content": "数据库要不要换成 Postgres？"},
			map[string]any{"turn_index": 1, "role": "assistant", "content": "建议迁移到 Postgres，已经定了。"},
		}},
	})
	b, _ := json.Marshal(evs)
	if r := do(t, "POST", base+"/v1/events", "application/cloudevents-batch+json", b, auth); r.Status != 202 {
		t.Fatalf("events: %d %s", r.Status, r.Raw)
	}
	waitSettled(t, a)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 860),
		// A cold Chromium on a loaded 2-core CI machine can take longer
		// than chromedp's 20 s to print its DevTools address.
		chromedp.WSURLReadTimeout(2*time.Minute))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()

	// Start the browser on ctx itself: the steps' shorter contexts then
	// end a step, not the browser.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start %s: %v", chrome, err)
	}
	// A script error on the page fails the test.
	var mu sync.Mutex
	var jsErrors []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			jsErrors = append(jsErrors, e.ExceptionDetails.Error())
			mu.Unlock()
		}
	})

	shots := os.Getenv("ENGRAM_CONSOLE_SHOTS")
	shoot := func(name string, full bool) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			if shots == "" {
				return nil
			}
			var png []byte
			shot := chromedp.CaptureScreenshot(&png)
			if full {
				shot = chromedp.FullScreenshot(&png, 100) // quality 100: PNG
			}
			if err := shot.Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, "console-"+name+".png"), png, 0o644)
		})
	}
	step := func(what string, actions ...chromedp.Action) {
		t.Helper()
		// Each step gets 15 s, so a missing element fails fast.
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if err := chromedp.Run(sctx, actions...); err != nil {
			var status string
			_ = chromedp.Run(ctx, chromedp.Text("#status", &status, chromedp.ByID, chromedp.AtLeast(0)))
			t.Fatalf("%s: %v (the console's status line: %q)", what, err, status)
		}
	}
	statusIs := func(prefix string) chromedp.Action {
		return chromedp.Poll(`document.getElementById("status").textContent.startsWith(`+jsString(prefix)+`)`, nil,
			chromedp.WithPollingTimeout(15*time.Second))
	}
	row := func(panel, id string) string { return panel + ` tr[data-id="` + id + `"]` }

	var location, anaMemories string
	step("open /console: with no user chosen it lists the users; Use shows one's memories at once",
		chromedp.Navigate(base+"/console"),
		chromedp.WaitVisible(`body[data-ready="yes"]`, chromedp.ByQuery),
		chromedp.Location(&location),
		chromedp.WaitVisible("#panel-users", chromedp.ByID),
		chromedp.SendKeys("#token", token, chromedp.ByID),
		chromedp.Click("#users-reload", chromedp.ByID),
		chromedp.WaitVisible(`#users-out tr[data-user="ana"]`, chromedp.ByQuery),
		chromedp.Text(`#users-out tr[data-user="ana"] td:nth-child(2)`, &anaMemories, chromedp.ByQuery),
		shoot("users", false),
		chromedp.Click(`#users-out tr[data-user="ana"] button.use`, chromedp.ByQuery),
		// No List click: Use shows the memories.
		chromedp.WaitVisible(row("#memories-out", en), chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("user").value === "ana"`, nil, chromedp.WithPollingTimeout(15*time.Second)))
	if !strings.HasSuffix(location, "/console/") {
		t.Errorf("/console led to %s, want /console/", location)
	}
	var users struct {
		Users []struct {
			User     string
			Memories int
		}
	}
	if r := do(t, "GET", base+"/v1/users", "", nil, auth); r.Status != 200 || json.Unmarshal([]byte(r.Raw), &users) != nil ||
		len(users.Users) != 1 || users.Users[0].User != "ana" || strconv.Itoa(users.Users[0].Memories) != anaMemories {
		t.Errorf("the users panel shows ana with %q memories; GET /v1/users: %s", anaMemories, r.Raw)
	}

	var zhText, markupText string
	var injected bool
	step("list the active memories",
		// Use listed them already: clear the status line, so the wait
		// below is for this list's own answer.
		chromedp.Evaluate(`document.getElementById("status").textContent = ""`, nil),
		chromedp.Click("#list-button", chromedp.ByID),
		statusIs("3 memories"),
		chromedp.WaitVisible(row("#memories-out", en), chromedp.ByQuery),
		chromedp.Text(row("#memories-out", zh)+" td.content", &zhText, chromedp.ByQuery),
		chromedp.Text(row("#memories-out", markup)+" td.content", &markupText, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#memories-out b, #memories-out img") !== null || document.body.dataset.pwned === "yes"`, &injected))
	if zhText != "用户住在北京市朝阳区，平时喜欢喝美式咖啡。" {
		t.Errorf("the Chinese memory reads %q", zhText)
	}
	if injected || !strings.Contains(markupText, "<b>review</b>") {
		t.Errorf("stored markup was not shown as text: injected=%v, cell %q", injected, markupText)
	}
	if r := do(t, "GET", base+"/v1/memories?user=ana&status=pending", "", nil, auth); !strings.Contains(r.Raw, pending) {
		t.Fatalf("the 0.7 memory is not pending: %s", r.Raw)
	}

	step("search in Chinese",
		chromedp.SetValue("#search-q", "北京", chromedp.ByID),
		chromedp.Click("#search-form button", chromedp.ByQuery),
		// The list before it holds the same row: wait for the search's own table.
		chromedp.Poll(`document.querySelector("#memories-out h2")?.textContent === "Search: 北京"`, nil,
			chromedp.WithPollingTimeout(15*time.Second)),
		chromedp.Poll(`[...document.querySelectorAll("#memories-out td.content")].some(td => td.textContent.includes("北京市朝阳区"))`, nil,
			chromedp.WithPollingTimeout(15*time.Second)))

	beforeEdit := time.Now().UTC().Format(time.RFC3339Nano)
	const edited = "Ana drinks light roast coffee now（现在改喝浅烘）."
	step("edit a memory",
		chromedp.Click("#list-button", chromedp.ByID),
		// The list replaces the search's table: wait until it has, so the
		// click lands on the new row, not on one being removed.
		statusIs("3 memories"),
		chromedp.Poll(`document.querySelectorAll("#memories-out tr[data-id]").length === 3`, nil,
			chromedp.WithPollingTimeout(15*time.Second)),
		chromedp.Click(row("#memories-out", en)+" button.view", chromedp.ByQuery),
		chromedp.WaitVisible("#edit-content", chromedp.ByID),
		chromedp.SetValue("#edit-content", edited, chromedp.ByID),
		chromedp.Click("#memory-save", chromedp.ByID),
		statusIs("saved "+en),
		// The history shows the content before and after, as text.
		chromedp.Poll(`[...document.querySelectorAll("#memory-detail td.content")].some(td => td.textContent === `+jsString(edited)+`)`, nil,
			chromedp.WithPollingTimeout(15*time.Second)),
		shoot("memory", true))
	r := do(t, "GET", base+"/v1/memories/"+url.PathEscape(en)+"?user=ana", "", nil, auth)
	var got struct {
		Memory  struct{ Content, Status string }
		History []struct{ Change, Old, New string }
	}
	if err := json.Unmarshal([]byte(r.Raw), &got); err != nil || got.Memory.Content != edited {
		t.Fatalf("after the console's edit: %d %s", r.Status, r.Raw)
	}
	if n := len(got.History); n == 0 || got.History[n-1].Change != "updated" && got.History[0].Change != "updated" {
		t.Errorf("the edit is not in the history: %+v", got.History)
	}

	// as_of: what was current before the edit, and before anything was.
	step("list as of a time",
		chromedp.SetValue("#list-asof", beforeEdit, chromedp.ByID),
		chromedp.Click("#list-button", chromedp.ByID),
		chromedp.Poll(`/^\d+ memories$/.test(document.getElementById("status").textContent)`, nil, chromedp.WithPollingTimeout(15*time.Second)),
		chromedp.WaitVisible(row("#memories-out", en), chromedp.ByQuery),
		chromedp.SetValue("#list-asof", "2001-01-01T00:00:00Z", chromedp.ByID),
		chromedp.Click("#list-button", chromedp.ByID),
		statusIs("0 memories"),
		chromedp.Evaluate(`document.getElementById("list-asof").value = ""`, nil))

	step("delete a memory (two clicks, no dialog)",
		chromedp.Click("#list-button", chromedp.ByID),
		chromedp.WaitVisible(row("#memories-out", markup), chromedp.ByQuery),
		chromedp.Click(row("#memories-out", markup)+" button.view", chromedp.ByQuery),
		chromedp.WaitVisible(`#memory-edit[data-id="`+markup+`"]`, chromedp.ByQuery),
		chromedp.Click("#memory-delete", chromedp.ByID),
		chromedp.Click("#memory-delete", chromedp.ByID),
		statusIs("deleted "+markup),
		chromedp.WaitNotPresent(row("#memories-out", markup), chromedp.ByQuery))
	if r := do(t, "GET", base+"/v1/memories?user=ana", "", nil, auth); r.Status != 200 || strings.Contains(r.Raw, markup) {
		t.Fatalf("after the console's delete, the active memories: %d %s", r.Status, r.Raw)
	}

	step("confirm the pending memory",
		chromedp.Click(`#tabs a[data-tab="pending"]`, chromedp.ByQuery),
		chromedp.WaitVisible(row("#pending-out", pending)+" button.confirm", chromedp.ByQuery),
		shoot("pending", false),
		chromedp.Click(row("#pending-out", pending)+" button.confirm", chromedp.ByQuery),
		statusIs("confirm "+pending),
		chromedp.WaitNotPresent(row("#pending-out", pending), chromedp.ByQuery))
	r = do(t, "GET", base+"/v1/memories/"+url.PathEscape(pending)+"?user=ana", "", nil, auth)
	if err := json.Unmarshal([]byte(r.Raw), &got); err != nil || got.Memory.Status != "active" {
		t.Fatalf("after the console's confirm: %d %s", r.Status, r.Raw)
	}

	const focus = "billing alerts · 给账单服务加告警"
	step("edit the scratchpad",
		chromedp.Click(`#tabs a[data-tab="scratchpad"]`, chromedp.ByQuery),
		statusIs("scratchpad loaded"),
		chromedp.SetValue("#sp-focus", focus, chromedp.ByID),
		chromedp.Click("#sp-save", chromedp.ByID),
		statusIs("scratchpad saved"))
	r = do(t, "GET", base+"/v1/scratchpad?user=ana", "", nil, auth)
	if !strings.Contains(r.Raw, focus) {
		t.Fatalf("after the console's scratchpad edit: %s", r.Raw)
	}

	var episodes int
	step("episodes",
		chromedp.Click(`#tabs a[data-tab="episodes"]`, chromedp.ByQuery),
		statusIs("2 episodes"),
		chromedp.Evaluate(`document.querySelectorAll("#episodes-out .episode").length`, &episodes),
		shoot("episodes", false))
	if episodes != 2 {
		t.Errorf("the episodes panel shows %d episodes, want 2", episodes)
	}

	var core, userMD string
	step("profile",
		chromedp.Click(`#tabs a[data-tab="profile"]`, chromedp.ByQuery),
		statusIs("profile loaded"),
		chromedp.Text("#profile-core", &core, chromedp.ByID),
		chromedp.Text("#profile-user-md", &userMD, chromedp.ByID),
		shoot("profile", false))
	if !strings.Contains(core, "北京市朝阳区") || !strings.Contains(core, "light roast") {
		t.Errorf("profile core = %q", core)
	}
	if userMD == "" {
		t.Errorf("USER.md is empty on the profile panel")
	}

	var readyz string
	var charts []string
	step("operations: small charts, sampled while the tab is open",
		chromedp.Click(`#tabs a[data-tab="operations"]`, chromedp.ByQuery),
		statusIs("operations loaded"),
		chromedp.WaitReady(`tr[data-metric="engram_dead_letters_messages"]`, chromedp.ByQuery),
		chromedp.WaitReady(`tr[data-metric="engram_consumer_pending_messages"]`, chromedp.ByQuery),
		chromedp.Text("#ops-readyz", &readyz, chromedp.ByID),
		// The ingest rate needs two samples: the second comes 2 s on.
		chromedp.Poll(`document.querySelector('.chart[data-chart="ingest"] polyline')?.getAttribute("points").includes(" ")`, nil,
			chromedp.WithPollingTimeout(15*time.Second)),
		chromedp.Evaluate(`[...document.querySelectorAll("#ops-charts .chart")].map(c => c.dataset.chart + "=" + c.querySelector(".value").textContent)`, &charts),
		shoot("operations", false))
	if !strings.HasPrefix(readyz, "200 ok") {
		t.Errorf("/readyz on the operations panel: %q", readyz)
	}
	if got := strings.Join(charts, " "); !strings.Contains(got, "lag=") || !strings.Contains(got, "backlog=") ||
		!strings.Contains(got, "dead=0") || !strings.Contains(got, "ingest=") || strings.Contains(got, "…") {
		t.Errorf("the operations charts: %q", got)
	}

	// A wrong token: the API's own message reaches the status line.
	step("a wrong token",
		chromedp.Click(`#tabs a[data-tab="memories"]`, chromedp.ByQuery),
		chromedp.SetValue("#token", "wrong", chromedp.ByID),
		chromedp.Click("#use", chromedp.ByID),
		chromedp.Poll(`document.getElementById("status").textContent.includes("unauthorized: unknown bearer token")`, nil,
			chromedp.WithPollingTimeout(15*time.Second)))

	mu.Lock()
	defer mu.Unlock()
	for _, e := range jsErrors {
		t.Errorf("script error on the page: %s", e)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
