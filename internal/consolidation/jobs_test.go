package consolidation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/dedupe"
	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
)

func mem(id string, kind memory.Kind, cat memory.Category, content string, importance float64, created time.Time) memory.Memory {
	return memory.Memory{ID: id, Namespace: ana.Namespace, User: ana.User, Tier: 2, Kind: kind, Category: cat,
		Subject: "user", Predicate: "note", Content: content, Importance: importance, Confidence: 1,
		Status: memory.StatusActive, Created: created, Updated: created}
}

func TestDailyJobsArchiveAndExpire(t *testing.T) {
	t.Parallel()
	c, st, rec := newTest(t, defaults(t))
	at := time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC)
	st.mems[ana] = []memory.Memory{
		mem("m_old_event", memory.KindFact, memory.CategoryEvent, "went to a concert", 0.3, at.AddDate(0, -6, 0)),
		mem("m_used_event", memory.KindFact, memory.CategoryEvent, "went hiking", 0.3, at.AddDate(0, -6, 0)),
		mem("m_name", memory.KindIdentity, memory.CategoryIdentity, "name is Ana", 0.05, at.AddDate(-2, 0, 0)),
		mem("m_temp", memory.KindContext, memory.CategoryTemp, "scratch note", 0.9, at.Add(-25*time.Hour)),
		mem("m_debug", memory.KindContext, memory.CategoryDebug, "debugging the build", 0.9, at.Add(-50*time.Hour)),
	}
	st.mems[ana][1].AccessCount = 5
	ran, err := c.RunJob(t.Context(), "daily", at)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"daily_sweep", "daily_compress", "daily_decay_archive", "daily_expire", "daily_cards", "daily_report"}; !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	byReason := map[string][]string{}
	for _, o := range rec.ofType(events.TypeMemoriesArchived) {
		d := o.Data.(*events.MemoriesArchived)
		byReason[d.Reason] = append(byReason[d.Reason], d.MemoryIDs...)
		if !o.Time.Equal(at) {
			t.Fatalf("archive event time %v, want the firing's %v", o.Time, at)
		}
	}
	// Decay archives the faded event and the faded temp note (both below
	// 0.1); expiry archives the temp note (24 h) but not the debug note
	// (3 days). Identity never fades, a used memory is kept.
	if got := fmt.Sprint(byReason); got != "map[decay:[m_old_event] expired:[m_temp]]" {
		t.Fatalf("archived = %s", got)
	}
}

// compressRule compresses the last two days at 03:00 UTC.
const compressRule = `
rules:
  - name: compress
    schedule: "0 3 * * *"
    tz: UTC
    do: [{compress_daily: {days: 2}}]
`

func TestCompressDailyFromEpisodesAndMigratedLogs(t *testing.T) {
	t.Parallel()
	set := ruleSet(t, map[string]string{"d.yaml": compressRule})
	c, st, rec := newTest(t, set)
	at := time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC)
	st.mems[ana] = nil
	st.eps[ana] = []memory.Episode{{ID: "ep_1", SessionID: "s1", Goal: "deploy billing", Summary: "Deployed billing.",
		Outcome: "completed", Ended: time.Date(2026, 3, 9, 15, 0, 0, 0, time.UTC)}}
	st.daily[ana] = []memory.DailySummary{
		{Date: "2026-03-08", Channel: "myclaw", Summary: "讨论了迁移方案。", RawTokens: 40},
		{Date: "2026-03-08", Channel: "telegram", Summary: "already done", Compressed: true},
	}
	if _, err := c.RunJob(t.Context(), "compress", at); err != nil {
		t.Fatal(err)
	}
	var days []string
	for _, o := range rec.ofType(events.TypeDailySummarized) {
		d := o.Data.(*events.DailySummary)
		if d.Source != events.SourceCompression {
			t.Fatalf("daily source %s", d.Source)
		}
		days = append(days, d.Date+" "+d.Channel)
	}
	if got := fmt.Sprint(days); got != "[2026-03-09 engram 2026-03-08 myclaw]" {
		t.Fatalf("compressed days = %s", got)
	}
	added := rec.ofType(events.TypeMemoryAdded)
	if len(added) != 2 || !strings.Contains(added[0].Data.(*events.MemoryAdded).Content, "deploy billing") ||
		added[1].Data.(*events.MemoryAdded).Tier != events.TierKnowledge {
		t.Fatalf("knowledge = %+v", added)
	}
}

// The weekly dedupe merges near-duplicates in clusters (one model call per
// cluster at most), and the profile refresh then picks the core.
func TestWeeklyDedupeAndProfile(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string { return `{"content":"merged wording"}` })
	client, err := llm.New(srv.Config(), srv.HTTPClient())
	if err != nil {
		t.Fatal(err)
	}
	c, st, rec := newTest(t, defaults(t))
	c.Rewriter = dedupe.Rewriter{Client: client}
	at := time.Date(2026, 3, 9, 4, 0, 0, 0, time.UTC)
	var mems []memory.Memory
	for i := range 12 {
		mems = append(mems, mem(fmt.Sprintf("m_tea_%02d", i), memory.KindPreference, memory.CategoryConfig,
			[]string{"The user likes green tea in the morning", "The user likes green tea in the morning."}[i%2], 0.5+float64(i)/100, at.AddDate(0, 0, -i)))
	}
	mems = append(mems, mem("m_name", memory.KindIdentity, memory.CategoryIdentity, "The user's name is Ana", 0.95, at.AddDate(0, -1, 0)))
	for i := range 3 {
		mems = append(mems, mem(fmt.Sprintf("m_other_%d", i), memory.KindFact, memory.CategoryEvent,
			fmt.Sprintf("distinct fact number %d about something else entirely %d", i, i*7), 0.2, at))
	}
	st.mems[ana] = mems
	st.core[ana] = []memory.Memory{mems[len(mems)-1]} // an old member that no longer qualifies

	if _, err := c.RunJob(t.Context(), "weekly", at); err != nil {
		t.Fatal(err)
	}
	merged := rec.ofType(events.TypeMemoriesMerged)
	if len(merged) != 1 {
		t.Fatalf("merges = %+v", merged)
	}
	m := merged[0].Data.(*events.MemoriesMerged)
	if m.Into != "m_tea_11" || len(m.Merged) != 11 || m.Importance != 0.61 {
		t.Fatalf("merge = %+v", m)
	}
	if calls := srv.Calls(); calls > 1 {
		t.Fatalf("%d model calls for 1 cluster", calls)
	}
	prof := rec.ofType(events.TypeProfileRefreshed)
	if len(prof) != 1 {
		t.Fatalf("profile events = %d", len(prof))
	}
	p := prof[0].Data.(*events.ProfileRefreshed)
	if !slices.Contains(p.MemoryIDs, "m_name") || slices.Contains(p.MemoryIDs, "m_other_2") || !slices.Equal(p.Demoted, []string{"m_other_2"}) {
		t.Fatalf("profile = %+v", p)
	}
}

// The scheduler fires the daily job at 03:00 of the rule's zone with the
// firing's time, which is what every id and event time derives from.
func TestSchedulerFiresAtItsTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		set := ruleSet(t, map[string]string{"s.yaml": `
rules:
  - name: nightly_expire
    schedule: "0 3 * * *"
    tz: UTC
    do: [expire]
`})
		c, st, rec := newTest(t, set)
		start := time.Now() // synctest's epoch: 2000-01-01 00:00 UTC
		st.mems[ana] = []memory.Memory{mem("m_temp", memory.KindContext, memory.CategoryTemp, "scratch", 0.5, start.Add(-30*time.Hour))}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- c.Run(ctx, time.Time{}) }()

		time.Sleep(2*time.Hour + 59*time.Minute)
		synctest.Wait()
		if n := len(rec.ofType(events.TypeMemoriesArchived)); n != 0 {
			t.Fatalf("fired %d times before 03:00", n)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		got := rec.ofType(events.TypeMemoriesArchived)
		want := time.Date(2000, 1, 1, 3, 0, 0, 0, time.UTC)
		if len(got) != 1 || !got[0].Time.Equal(want) {
			t.Fatalf("archived = %+v, want one at %v", got, want)
		}
		// Nothing more until the next day's 03:00.
		time.Sleep(23 * time.Hour)
		synctest.Wait()
		if n := len(rec.ofType(events.TypeMemoriesArchived)); n != 1 {
			t.Fatalf("%d firings within the day", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// Cards are rendered once after a burst of changes, CardsDelay after the
// last, into the user's own directory.
func TestCardsDebounced(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c, st, _ := newTest(t, &rules.Set{})
		c.CardsDir = t.TempDir()
		st.mems[ana] = []memory.Memory{mem("m_name", memory.KindIdentity, memory.CategoryIdentity, "User's name is Ana", 0.9, time.Now())}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- c.Run(ctx, time.Time{}) }()
		path := filepath.Join(CardsPath(c.CardsDir, ana), MemoryCard)
		for range 3 {
			if err := c.Handle(ctx, memory.Applied{Envelope: memory.Envelope{Type: events.TypeScratchpadUpdated, Scope: ana},
				Data: &events.Scratchpad{Content: "x", Source: "person"}}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(c.CardsDelay / 2)
			synctest.Wait()
			if _, err := os.Stat(path); err == nil {
				t.Fatal("card rendered before the changes stopped")
			}
		}
		time.Sleep(c.CardsDelay)
		synctest.Wait()
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), "Ana") {
			t.Fatalf("MEMORY.md = %q, %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(CardsPath(c.CardsDir, ana), UserCard)); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := <-done; err != nil && ctx.Err() == nil {
			t.Error(err)
		}
	})
}

func TestCardsPathIsOneSafeElementPerID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ns, user, want string }{
		{"default", "ana", "default/ana"},
		{"..", "a/../b", "%2E%2E/a%2F%2E%2E%2Fb"},
		{"t", "张三", "t/%E5%BC%A0%E4%B8%89"},
		{"t", "", "t/%"},
	} {
		if got := CardsPath("", memory.Scope{Namespace: tc.ns, User: tc.user}); got != filepath.FromSlash(tc.want) {
			t.Errorf("CardsPath(%q, %q) = %q, want %q", tc.ns, tc.user, got, tc.want)
		}
	}
}

func TestRunJobNames(t *testing.T) {
	t.Parallel()
	c, _, _ := newTest(t, defaults(t))
	if _, err := c.RunJob(t.Context(), "nope", time.Now()); memory.ErrorCode(err) != memory.ENOTFOUND {
		t.Fatalf("unknown job: %v", err)
	}
	if got := JobRules(defaults(t), "weekly_dedupe"); len(got) != 1 {
		t.Fatalf("by rule name: %v", got)
	}
	if got := JobRules(defaults(t), "session"); len(got) != 0 {
		t.Fatalf("event rules are no job: %v", got)
	}
}

// With a model, compress_daily keeps the model's summary of each day, one
// call per entry; a failed call or an unusable reply keeps the day's log
// as written.
func TestCompressDailyByTheModel(t *testing.T) {
	t.Parallel()
	set := ruleSet(t, map[string]string{"d.yaml": compressRule})
	at := time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC)
	logs := []memory.DailySummary{
		{Date: "2026-03-09", Channel: "myclaw", Summary: "09:00 讨论了迁移方案。10:00 决定用 Postgres。", RawTokens: 40},
		{Date: "2026-03-08", Channel: "myclaw", Summary: "Talked about the move to Postgres for a long while.", RawTokens: 30},
	}
	// compress runs the job against a model answering with reply after
	// the scripted steps, and returns the summaries then the memories'
	// contents it published, and the number of model calls.
	compress := func(t *testing.T, reply func(llmtest.ChatRequest) string, steps ...llmtest.Step) (string, int) {
		t.Helper()
		srv := llmtest.New(t)
		srv.Reply(reply)
		srv.Enqueue(steps...)
		client, err := llm.New(srv.Config(), srv.HTTPClient())
		if err != nil {
			t.Fatal(err)
		}
		c, st, rec := newTest(t, set)
		c.Model = client
		st.mems[ana] = nil
		st.daily[ana] = slices.Clone(logs)
		if _, err := c.RunJob(t.Context(), "compress", at); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range rec.ofType(events.TypeDailySummarized) {
			out = append(out, o.Data.(*events.DailySummary).Summary)
		}
		for _, o := range rec.ofType(events.TypeMemoryAdded) {
			out = append(out, o.Data.(*events.MemoryAdded).Content)
		}
		return strings.Join(out, " | "), srv.Calls()
	}
	t.Run("the model's summary", func(t *testing.T) {
		got, calls := compress(t, func(req llmtest.ChatRequest) string {
			if !req.JSONMode() || !strings.Contains(req.System(), "one day of an AI assistant's event log") {
				return `{}`
			}
			if strings.Contains(req.LastUser(), "Postgres。") {
				return "```json\n{\"summary\": \"决定迁移到 Postgres。\"}\n```"
			}
			return `{"summary":"Planned the Postgres move."}`
		})
		want := "决定迁移到 Postgres。 | Planned the Postgres move. | 2026-03-09 (myclaw): 决定迁移到 Postgres。 | 2026-03-08 (myclaw): Planned the Postgres move."
		if got != want || calls != 2 {
			t.Fatalf("after %d calls, summaries = %s\nwant %s after 2", calls, got, want)
		}
	})
	kept := logs[0].Summary + " | " + logs[1].Summary + " | 2026-03-09 (myclaw): " + logs[0].Summary + " | 2026-03-08 (myclaw): " + logs[1].Summary
	t.Run("a failed call keeps the log", func(t *testing.T) {
		got, calls := compress(t, func(llmtest.ChatRequest) string { return `{"summary":"second day"}` },
			llmtest.Status(400, "model not found"))
		want := strings.Replace(kept, logs[1].Summary, "second day", 2)
		if got != want || calls != 2 {
			t.Fatalf("after %d calls, summaries = %s\nwant %s", calls, got, want)
		}
	})
	t.Run("an unusable reply keeps the log", func(t *testing.T) {
		if got, _ := compress(t, func(llmtest.ChatRequest) string { return `{"summary":"  "}` }); got != kept {
			t.Fatalf("summaries = %s\nwant %s", got, kept)
		}
	})
}

// With a model, refresh_profile keeps the core the model chose among the
// eligible memories, in its order; a failed call or a reply naming no
// candidate keeps the rule's choice.
func TestRefreshProfileByTheModel(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 9, 4, 0, 0, 0, time.UTC)
	mems := []memory.Memory{
		mem("m_name", memory.KindIdentity, memory.CategoryIdentity, "The user's name is Ana", 0.95, at.AddDate(0, -1, 0)),
		mem("m_tea", memory.KindPreference, memory.CategoryConfig, "The user likes green tea", 0.8, at.AddDate(0, 0, -3)),
		mem("m_job", memory.KindFact, memory.CategoryEvent, "The user works on billing", 0.75, at.AddDate(0, 0, -2)),
		mem("m_low", memory.KindFact, memory.CategoryEvent, "The user saw a film", 0.3, at),
	}
	profile := func(t *testing.T, reply func(llmtest.ChatRequest) string, steps ...llmtest.Step) ([]string, *llmtest.Server) {
		t.Helper()
		srv := llmtest.New(t)
		srv.Reply(reply)
		srv.Enqueue(steps...)
		client, err := llm.New(srv.Config(), srv.HTTPClient())
		if err != nil {
			t.Fatal(err)
		}
		c, st, rec := newTest(t, defaults(t))
		c.Model = client
		st.mems[ana] = slices.Clone(mems)
		if _, err := c.RunJob(t.Context(), "weekly_profile", at); err != nil {
			t.Fatal(err)
		}
		prof := rec.ofType(events.TypeProfileRefreshed)
		if len(prof) != 1 {
			t.Fatalf("profile events = %d", len(prof))
		}
		return prof[0].Data.(*events.ProfileRefreshed).MemoryIDs, srv
	}
	t.Run("the model's choice", func(t *testing.T) {
		ids, srv := profile(t, func(req llmtest.ChatRequest) string {
			if !req.JSONMode() || !strings.Contains(req.System(), "core profile") {
				return `{}`
			}
			// The candidates are the three of importance ≥ 0.7, best first.
			if !strings.Contains(req.LastUser(), "3. [event, importance 0.75] The user works on billing") ||
				strings.Contains(req.LastUser(), "film") {
				return `{"keep":[]}`
			}
			return `{"keep":[3, 1, 3]}`
		})
		if fmt.Sprint(ids) != "[m_job m_name]" || srv.Calls() != 1 {
			t.Fatalf("core = %v after %d calls, want [m_job m_name] after 1", ids, srv.Calls())
		}
	})
	for name, reply := range map[string]string{
		"a failed call":         "",
		"a number out of range": `{"keep":[1, 9]}`,
		"an empty choice":       `{"keep":[]}`,
	} {
		t.Run(name+" keeps the rule's choice", func(t *testing.T) {
			var steps []llmtest.Step
			if reply == "" {
				steps = append(steps, llmtest.Status(400, "model not found"))
			}
			ids, srv := profile(t, func(llmtest.ChatRequest) string { return reply }, steps...)
			if fmt.Sprint(ids) != "[m_name m_tea m_job]" || srv.Calls() != 1 {
				t.Fatalf("core = %v after %d calls, want the rule's [m_name m_tea m_job] after 1", ids, srv.Calls())
			}
		})
	}
}
