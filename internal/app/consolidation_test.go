package app

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
)

// conversation is a working session: a request, a tool call with its
// result, and the answer.
func conversation(prefix, user, session string) []any {
	t0 := turnEvent(prefix+"-0", user, session, 0, "user", "Please deploy the billing service to Kubernetes for the Atlas project.")
	t1 := turnEvent(prefix+"-1", user, session, 1, "assistant", "Running the deploy now.")
	t1["data"].(map[string]any)["tool_calls"] = []any{map[string]any{"id": "c1", "name": "shell", "input": map[string]any{"command": "kubectl apply -f billing.yaml"}}}
	t2 := turnEvent(prefix+"-2", user, session, 2, "tool", "")
	t2["data"].(map[string]any)["tool_results"] = []any{map[string]any{"tool_call_id": "c1", "content": "deployment.apps/billing configured"}}
	t3 := turnEvent(prefix+"-3", user, session, 3, "assistant", "Deployed billing to Kubernetes; all pods are healthy. Next I will add alerts.")
	return []any{t0, t1, t2, t3}
}

type episodeJSON struct {
	ID      string              `json:"id"`
	Source  string              `json:"source"`
	Summary string              `json:"summary"`
	Tools   []string            `json:"tools"`
	Actions []memory.ActionNode `json:"actions"`
	Turns   []int               `json:"turns"`
}

func getJSON(t *testing.T, base, path string, v any) int {
	t.Helper()
	r := do(t, "GET", base+path, "", nil, nil)
	if r.Status == 200 {
		if err := json.Unmarshal([]byte(r.Raw), v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return r.Status
}

func episodesOf(t *testing.T, base, ns, user string) []episodeJSON {
	t.Helper()
	var out struct{ Episodes []episodeJSON }
	if code := getJSON(t, base, "/v1/episodes?namespace="+ns+"&user="+url.QueryEscape(user), &out); code != 200 {
		t.Fatalf("episodes: %d", code)
	}
	return out.Episodes
}

func scratchpadOf(t *testing.T, base, user string) memory.Scratchpad {
	t.Helper()
	var out struct{ Scratchpad memory.Scratchpad }
	if code := getJSON(t, base, "/v1/scratchpad?user="+url.QueryEscape(user), &out); code != 200 {
		t.Fatalf("scratchpad: %d", code)
	}
	return out.Scratchpad
}

// Session end and compression build episodes and the scratchpad through
// the stream; a person overrides the scratchpad; the cards are written;
// no user sees another's; and the rebuilt read model equals the live one.
func TestConsolidationEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	evs := conversation("a", "ana", "s1")
	evs = append(evs, endEvent("a-end", "ana", "s1", 4))
	evs = append(evs, turnEvent("b-0", "bob", "s1", 0, "user", "hi"), turnEvent("b-1", "bob", "s1", 1, "assistant", "hello"),
		endEvent("b-end", "bob", "s1", 2))
	mustAccept(t, postBatch(t, a, evs...))
	waitSettled(t, a)

	eps := episodesOf(t, base, "default", "ana")
	if len(eps) != 1 || eps[0].Source != events.SourceSessionEnd || len(eps[0].Turns) != 4 ||
		len(eps[0].Actions) != 1 || eps[0].Actions[0].Tool != "shell" || !strings.Contains(eps[0].Summary, "billing") {
		t.Fatalf("ana's episodes = %+v", eps)
	}
	if eps := episodesOf(t, base, "default", "bob"); len(eps) != 0 {
		t.Fatalf("a 2-message session got an episode: %+v", eps)
	}
	if eps := episodesOf(t, base, "acme", "ana"); len(eps) != 0 {
		t.Fatalf("the same user id in another namespace sees %+v", eps)
	}
	pad := scratchpadOf(t, base, "ana")
	if pad.Source != events.SourceEpisode || !strings.Contains(pad.Content, "Atlas") {
		t.Fatalf("ana's scratchpad = %+v", pad)
	}

	// Compression keeps what leaves the window as an episode of its own.
	mustAccept(t, postEvent(t, a, map[string]any{
		"specversion": "1.0", "id": "cc-1", "source": "test/agent", "type": "context.compressing", "user": "ana",
		"data": map[string]any{"session_id": "s2", "summary": "我们决定把数据库从 MySQL 迁移到 Postgres。", "turns": []any{
			map[string]any{"turn_index": 0, "role": "user", "content": "数据库要不要换成 Postgres？"},
			map[string]any{"turn_index": 1, "role": "assistant", "content": "建议迁移到 Postgres，已经定了。"},
		}},
	}))
	waitSettled(t, a)
	var found struct{ Episodes []episodeJSON }
	getJSON(t, base, "/v1/episodes?user=ana&q="+url.QueryEscape("Postgres"), &found)
	if len(found.Episodes) != 1 || found.Episodes[0].Source != events.SourceCompression {
		t.Fatalf("compression episode by search = %+v", found.Episodes)
	}

	// A person's scratchpad: over HTTP, for bob only.
	r := do(t, "PUT", base+"/v1/scratchpad?user=bob&wait=true", "application/json",
		[]byte(`{"content":"## 我的笔记\n- 周五前交报告","current_focus":"报告"}`), nil)
	if r.Status != 202 {
		t.Fatalf("put scratchpad: %d %s", r.Status, r.Raw)
	}
	if p := scratchpadOf(t, base, "bob"); p.Source != events.SourcePerson || !strings.Contains(p.Content, "周五前交报告") {
		t.Fatalf("bob's scratchpad = %+v", p)
	}
	if p := scratchpadOf(t, base, "ana"); strings.Contains(p.Content, "周五") {
		t.Fatalf("ana sees bob's scratchpad: %q", p.Content)
	}
	if r := do(t, "PUT", base+"/v1/scratchpad?user=bob", "application/json", []byte(`{"current_focus":"x"}`), nil); r.Status != 400 {
		t.Fatalf("a scratchpad without content: %d, want 400", r.Status)
	}

	// The cards: written for ana, atomically (no temp file left behind),
	// and served with the core profile.
	dir := consolidation.CardsPath(cfg.CardsPath(), memory.Scope{Namespace: "default", User: "ana"})
	wait.Until(t, "ana's cards", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, consolidation.UserCard))
		return err == nil && strings.Contains(string(b), "Atlas")
	})
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		// Besides the cards: what engram last wrote in each (and before that).
		n := strings.TrimSuffix(f.Name(), ".prev")
		switch f.Name() {
		case consolidation.MemoryCard, consolidation.UserCard, consolidation.AgentCard, consolidation.ProjectCard,
			consolidation.InsightsCard:
			continue
		}
		if n != ".MEMORY.md.engram" && n != ".USER.md.engram" {
			t.Fatalf("stray file %s in the cards dir", f.Name())
		}
	}
	var prof struct {
		Core     []memory.Memory `json:"core"`
		MemoryMD string          `json:"memory_md"`
		UserMD   string          `json:"user_md"`
	}
	if code := getJSON(t, base, "/v1/profile?user=ana", &prof); code != 200 || !strings.Contains(prof.UserMD, "Atlas") || prof.Core == nil {
		t.Fatalf("profile: %d %+v", code, prof)
	}
	if code := getJSON(t, base, "/v1/profile?user=bob", &prof); code != 200 || strings.Contains(prof.UserMD, "Atlas") {
		t.Fatalf("bob's profile shows ana's: %+v", prof)
	}

	seq := waitSettled(t, a)
	stopApp(t, a)
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq {
		t.Fatalf("rebuild differs in %v (target %d, want %d)\nlive:  %v\nbuilt: %v", rep.Diff, rep.Target, seq, rep.Live, rep.Built)
	}
	if rep.Built["episodes"] == "0:"+emptySum || rep.Built["scratchpad"] == "0:"+emptySum {
		t.Fatalf("nothing consolidated to compare: %v", rep.Built)
	}
}

// observed returns a logger that writes to the test log and records warnings.
func observed(t *testing.T) (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.WarnLevel)
	return zap.New(zapcore.NewTee(zaptest.NewLogger(t).Core(), core)), logs
}

const publishRule = `rules:
  - name: remember_long_sessions
    on: session.ended
    when: {field: data.message_count, op: gte, value: 3}
    do:
      - publish:
          type: memory.added
          data: {kind: fact, category: event, subject: user, predicate: note, content: "had a long session", importance: 0.3}
  - name: ask_before_episode
    on: session.ended
    do: [build_episode]
    mode: confirm
`

// A rule file written by the test fires on session.ended and its publish
// action's event is on the stream; the file is then broken: a line-numbered
// error is reported and the rules that were running keep running. A
// confirm-mode rule waits in the queue until it is approved over HTTP.
func TestRuleFilesFireReloadAndConfirm(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	cfg.Consolidate.RulesDir = t.TempDir()
	cfg.Consolidate.RulesPoll = 50 * time.Millisecond
	file := filepath.Join(cfg.Consolidate.RulesDir, "mine.yaml")
	if err := os.WriteFile(file, []byte(publishRule), 0o600); err != nil {
		t.Fatal(err)
	}
	log, logs := observed(t)
	a := New(cfg, RoleAll, log)
	if err := a.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopApp(t, a) })
	published := func() int {
		t.Helper()
		s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(stream.Subject("default", "ann", events.TypeMemoryAdded)))
		if err != nil {
			t.Fatal(err)
		}
		return int(info.State.Subjects[stream.Subject("default", "ann", events.TypeMemoryAdded)])
	}
	mustAccept(t, postBatch(t, a, append(conversation("r1", "ann", "s1"), endEvent("r1-end", "ann", "s1", 4))...))
	waitSettled(t, a)
	if n := published(); n != 1 {
		t.Fatalf("%d memory.added on the stream, want the rule's 1", n)
	}
	if m := find(listMemories(t, a, "ann", ""), "user", "note"); len(m) != 1 || m[0].Content != "had a long session" {
		t.Fatalf("the rule's memory = %+v", m)
	}

	// Broken YAML: a line-numbered error, and the old rules stay.
	if err := os.WriteFile(file, []byte(publishRule+"  - name: oops\n    on: [session.ended\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lineNumbered := regexp.MustCompile(`mine\.yaml:\d+:\d+: YAML syntax`)
	wait.Until(t, "the line-numbered reload error", func() bool {
		for _, e := range logs.FilterMessageSnippet("rules not reloaded").All() {
			if lineNumbered.MatchString(fmt.Sprint(e.ContextMap()["error"])) {
				return true
			}
		}
		return false
	})
	mustAccept(t, postBatch(t, a, append(conversation("r2", "ann", "s2"), endEvent("r2-end", "ann", "s2", 4))...))
	waitSettled(t, a)
	if n := published(); n != 2 {
		t.Fatalf("after the broken edit, %d memory.added, want 2: the last good rules must keep running", n)
	}

	// The confirm rule waited for both sessions; approve one over HTTP.
	srv := httptest.NewServer((&httpapi.Server{Memories: a.Store(), Consolidation: a.ConsolidationAPI(),
		Publisher: publisher{p: stream.NewPublisher(jsOf(a)), down: a.storeDownErr}}).Handler())
	t.Cleanup(srv.Close)
	if eps := episodesOf(t, srv.URL, "default", "ann"); len(eps) != 0 {
		t.Fatalf("a confirm rule ran unasked: %+v", eps)
	}
	var pend struct{ Pending []consolidation.Pending }
	getJSON(t, srv.URL, "/v1/consolidation/pending?user=ann", &pend)
	if len(pend.Pending) != 2 || pend.Pending[0].Rule != "ask_before_episode" {
		t.Fatalf("pending = %+v", pend.Pending)
	}
	var other struct{ Pending []consolidation.Pending }
	getJSON(t, srv.URL, "/v1/consolidation/pending?user=mallory", &other)
	if len(other.Pending) != 0 {
		t.Fatalf("mallory sees ann's pending firings: %+v", other.Pending)
	}
	if r := do(t, "POST", srv.URL+"/v1/consolidation/pending/"+pend.Pending[0].ID+"/approve?user=mallory", "", nil, nil); r.Status != 404 {
		t.Fatalf("mallory approving ann's firing: %d, want 404", r.Status)
	}
	if r := do(t, "POST", srv.URL+"/v1/consolidation/pending/"+pend.Pending[0].ID+"/approve?user=ann", "", nil, nil); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Raw)
	}
	waitSettled(t, a)
	if eps := episodesOf(t, srv.URL, "default", "ann"); len(eps) != 1 {
		t.Fatalf("after approval, episodes = %+v", eps)
	}
}

// The weekly job merges near-duplicates and refreshes the core profile;
// the daily job archives what faded; a job can be asked for over NATS;
// and the rebuilt read model equals the live one without the consolidator.
func TestScheduledJobsThenRebuild(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	base := "http://" + a.HTTPAddr()
	add := func(body string) { t.Helper(); postMemory(t, a, body) }
	for i := range 12 {
		// Different subjects, so the write-time merge leaves them apart
		// for the weekly dedupe to find.
		add(fmt.Sprintf(`{"user":"kim","kind":"preference","category":"config","subject":"drink%d","predicate":"likes","content":"The user likes green tea in the morning%s","importance":%.2f,"project":"home"}`,
			i, []string{"", "."}[i%2], 0.5+float64(i)/100))
	}
	add(`{"user":"kim","kind":"identity","category":"identity","subject":"user","predicate":"name","content":"The user's name is Kim","importance":0.95}`)
	add(`{"user":"kim","kind":"fact","category":"event","subject":"concert","predicate":"note","content":"went to a concert","importance":0.3}`)
	add(`{"user":"lee","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"lee likes coffee","importance":0.9}`)
	waitSettled(t, a)

	ran, err := a.RunJob(t.Context(), "weekly", time.Now())
	if err != nil || len(ran) != 3 {
		t.Fatalf("weekly ran %v: %v", ran, err)
	}
	waitSettled(t, a)
	teas := listMemories(t, a, "kim", "&project=home")
	if len(teas) != 1 || teas[0].Importance != 0.61 {
		t.Fatalf("after dedupe, active tea memories = %+v", teas)
	}
	merged := listMemories(t, a, "kim", "&status=superseded")
	if len(merged) != 11 || merged[0].SupersededBy != teas[0].ID {
		t.Fatalf("merged = %d, superseded by %q, want 11 by %s", len(merged), merged[0].SupersededBy, teas[0].ID)
	}
	var prof struct{ Core []memory.Memory }
	getJSON(t, base, "/v1/profile?user=kim", &prof)
	if len(prof.Core) == 0 || prof.Core[0].Content != "The user's name is Kim" || prof.Core[0].Tier != 1 {
		t.Fatalf("kim's core = %+v", prof.Core)
	}
	getJSON(t, base, "/v1/profile?user=lee", &prof)
	if len(prof.Core) != 1 || prof.Core[0].Content != "lee likes coffee" {
		t.Fatalf("lee's core = %+v", prof.Core)
	}

	// A year on, over NATS: the concert has faded and is archived.
	body, _ := json.Marshal(JobRequest{Job: "daily_decay_archive", At: time.Now().AddDate(1, 0, 0)})
	msg, err := a.op.nc.Request(JobSubject, body, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var reply JobReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil || len(reply.Ran) != 1 {
		t.Fatalf("job reply %s: %v", msg.Data, err)
	}
	waitSettled(t, a)
	archived := listMemories(t, a, "kim", "&status=archived")
	if len(archived) != 1 || archived[0].Content != "went to a concert" {
		t.Fatalf("archived = %+v", archived)
	}

	seq := waitSettled(t, a)
	stopApp(t, a)
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq {
		t.Fatalf("rebuild differs in %v\nlive:  %v\nbuilt: %v", rep.Diff, rep.Live, rep.Built)
	}
	if rep.Built["profile"] == "0:"+emptySum {
		t.Fatal("no profile to compare")
	}
}

// A rules directory that does not load stops the start, with its line
// numbers; a consolidator running apart starts and keeps what leaves an
// agent's window.
func TestConsolidatorStartAndApart(t *testing.T) {
	t.Parallel()
	t.Run("bad rules stop the start", func(t *testing.T) {
		cfg := testConfig(t, t.TempDir())
		cfg.Consolidate.RulesDir = t.TempDir()
		if err := os.WriteFile(filepath.Join(cfg.Consolidate.RulesDir, "bad.yaml"), []byte("rules:\n  - name: x\n    on: session.endd\n    do: [build_episode]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		a := New(cfg, RoleConsolidator, zaptest.NewLogger(t))
		err := a.Open(t.Context())
		if err == nil {
			stopApp(t, a)
			t.Fatal("engram started with rules that do not load")
		}
		if !strings.Contains(err.Error(), "bad.yaml:3:") {
			t.Fatalf("error %q does not give the line", err)
		}
	})
	t.Run("apart", func(t *testing.T) {
		a := startApp(t, testConfig(t, t.TempDir()), RoleConsolidator)
		e, err := events.New("test/agent", events.TypeContextCompressing, "", "solo", &events.ContextCompressing{SessionID: "s1",
			Turns: []events.TurnRecorded{{TurnIndex: 0, Role: "user", Content: "Let's move the database to Postgres."},
				{TurnIndex: 1, Role: "assistant", Content: "Done: the database now runs on Postgres."}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.NewPublisher(jsOf(a)).Publish(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
		if err != nil {
			t.Fatal(err)
		}
		wait.Until(t, "the compression episode", func() bool {
			_, err := s.GetLastMsgForSubject(t.Context(), stream.Subject("default", "solo", events.TypeEpisodeBuilt))
			return err == nil
		})
	})
}

// With a model configured, the session's episode and the scratchpad are
// written by it, once; a rebuild reproduces them without calling it.
func TestEpisodeWrittenByTheModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string {
		switch {
		case strings.Contains(req.System(), "Summarise an agent's work session"):
			return `{"summary":"MODEL: billing went out to Kubernetes.","goal":"ship billing","outcome":"completed","entities":["Kubernetes"],"decisions":[{"turn":1,"decision":"use kubectl apply"}]}`
		case strings.Contains(req.System(), "working-memory scratchpad"):
			return `{"active_projects":["Atlas"],"current_focus":"MODEL focus: alerts for billing","open_questions":[],"next_steps":["add alerts"],"progress":"billing shipped"}`
		}
		return `{"facts":[]}`
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	a := startApp(t, cfg, RoleAll)
	mustAccept(t, postBatch(t, a, append(conversation("m", "mo", "s1"), endEvent("m-end", "mo", "s1", 4))...))
	waitSettled(t, a)
	base := "http://" + a.HTTPAddr()
	eps := episodesOf(t, base, "default", "mo")
	if len(eps) != 1 || !strings.HasPrefix(eps[0].Summary, "MODEL:") || len(eps[0].Actions) != 2 || eps[0].Actions[0].Tool != "shell" {
		t.Fatalf("episode = %+v", eps)
	}
	if p := scratchpadOf(t, base, "mo"); !strings.Contains(p.CurrentFocus, "MODEL focus") {
		t.Fatalf("scratchpad = %+v", p)
	}
	episodeCalls := 0
	for _, r := range srv.Requests() {
		if strings.Contains(r.System(), "Summarise an agent's work session") {
			episodeCalls++
		}
	}
	if episodeCalls != 1 {
		t.Fatalf("%d episode calls, want 1", episodeCalls)
	}
	calls := srv.Calls()
	stopApp(t, a)
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || srv.Calls() != calls {
		t.Fatalf("rebuild: diff %v, model calls %d → %d", rep.Diff, calls, srv.Calls())
	}
}

// With a model configured, compress_daily keeps the model's summary of
// yesterday's log and refresh_profile the core the model chose; a rebuild
// reproduces both from the events alone, without calling the model.
func TestDailyAndProfileByTheModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string {
		switch {
		case strings.Contains(req.System(), "one day of an AI assistant's event log"):
			return `{"summary":"MODEL: moved the database to Postgres."}`
		case strings.Contains(req.System(), "core profile"):
			return `{"keep":[2]}`
		}
		return `{}`
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	a := startApp(t, cfg, RoleAll)
	now := time.Now()
	yesterday := now.AddDate(0, 0, -1).Format(time.DateOnly)
	e, err := events.New("test/migrate", events.TypeDailySummarized, "", "dee", &events.DailySummary{Date: yesterday,
		Channel: "myclaw", Summary: "09:00 talked about the database. 11:00 decided on Postgres. 15:00 moved it.",
		RawTokens: 20, Source: events.SourceMigration})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.NewPublisher(jsOf(a)).Publish(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, a)
	if _, err := a.RunJob(t.Context(), "daily_compress", now); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, a)
	scope := memory.Scope{Namespace: "default", User: "dee"}
	days, err := a.Store().DailySummaries(t.Context(), scope, yesterday)
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].Summary != "MODEL: moved the database to Postgres." || !days[0].Compressed {
		t.Fatalf("yesterday = %+v", days)
	}
	if calls := srv.Calls(); calls != 1 {
		t.Fatalf("%d model calls for one day", calls)
	}

	postMemory(t, a, `{"user":"dee","kind":"identity","category":"identity","subject":"user","predicate":"name","content":"The user's name is Dee","importance":0.95}`)
	postMemory(t, a, `{"user":"dee","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"Dee likes short answers","importance":0.8}`)
	waitSettled(t, a)
	if ran, err := a.RunJob(t.Context(), "weekly_profile", now); err != nil || len(ran) != 1 {
		t.Fatalf("weekly_profile ran %v: %v", ran, err)
	}
	waitSettled(t, a)
	var prof struct{ Core []memory.Memory }
	getJSON(t, "http://"+a.HTTPAddr(), "/v1/profile?user=dee", &prof)
	if len(prof.Core) != 1 || prof.Core[0].Content != "Dee likes short answers" || prof.Core[0].Tier != 1 {
		t.Fatalf("dee's core = %+v, want the model's one choice", prof.Core)
	}
	calls := srv.Calls()
	if calls != 2 {
		t.Fatalf("%d model calls for one day and one profile", calls)
	}
	seq := waitSettled(t, a)
	stopApp(t, a)
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq || srv.Calls() != calls {
		t.Fatalf("rebuild: diff %v, target %d want %d, model calls %d → %d", rep.Diff, rep.Target, seq, calls, srv.Calls())
	}
	if rep.Built["daily_summaries"] == "0:"+emptySum || rep.Built["profile"] == "0:"+emptySum {
		t.Fatalf("nothing to compare: %v", rep.Built)
	}
}
