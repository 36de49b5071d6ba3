package app

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// dayTurn is a turn said at a given time on a channel.
func dayTurn(id, user, session string, index int, at time.Time, role, content string) map[string]any {
	ev := turnEvent(id, user, session, index, role, content)
	ev["time"] = at.Add(time.Duration(index) * time.Minute).Format(time.RFC3339Nano)
	ev["data"].(map[string]any)["channel"] = "telegram"
	return ev
}

// liveDays is a user's conversation on two days, each ended, so each is
// extracted at once.
func liveDays(user string, day1, day2 time.Time) []any {
	return []any{
		dayTurn(user+"-d1-0", user, "d1", 0, day1, "user", "我平时用 Python 3.10 写脚本，今天想整理一下爬虫项目的目录结构。"),
		dayTurn(user+"-d1-1", user, "d1", 1, day1, "assistant", "好的，建议把爬虫的解析器和下载器分开放。"),
		dayTurn(user+"-d1-2", user, "d1", 2, day1, "user", "那就按你说的拆开，解析器放到 parsers 目录。"),
		endEvent(user+"-d1-end", user, "d1", 3),
		dayTurn(user+"-d2-0", user, "d2", 0, day2, "user", "I switched to drinking green tea in the afternoons instead of coffee."),
		dayTurn(user+"-d2-1", user, "d2", 1, day2, "assistant", "Noted: green tea in the afternoons."),
		dayTurn(user+"-d2-2", user, "d2", 2, day2, "user", "Also plan the hiking trip to Mount Tai for next month."),
		endEvent(user+"-d2-end", user, "d2", 3),
	}
}

// A live conversation on two days gives two daily summaries (seed 001
// §6.3 step 5, §3.2.3), written as the turns are extracted: found by their
// words and by the date a question names ("11月20日那天聊了什么"), and
// compressed into knowledge by daily_compress the night after each day
// (seed 001 §7.2). A rebuild reproduces them.
func TestLiveConversationDailySummaries(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	today := time.Now()
	day1 := time.Date(today.Year(), today.Month(), today.Day(), 10, 0, 0, 0, time.Local).AddDate(0, 0, -9)
	day2 := day1.AddDate(0, 0, 1)
	d1, d2 := day1.Format(time.DateOnly), day2.Format(time.DateOnly)
	mustAccept(t, postBatch(t, a, liveDays("lin", day1, day2)...))
	waitSettled(t, a)

	scope := memory.Scope{Namespace: "default", User: "lin"}
	for _, c := range []struct{ date, word string }{{d1, "Python"}, {d2, "tea"}} {
		days, err := a.Store().DailySummaries(t.Context(), scope, c.date)
		if err != nil {
			t.Fatal(err)
		}
		if len(days) != 1 || days[0].Channel != "telegram" || days[0].Compressed || !strings.Contains(days[0].Summary, c.word) {
			t.Fatalf("%s: daily summaries %+v, want one uncompressed telegram day that mentions %q", c.date, days, c.word)
		}
		t.Logf("%s: %s", c.date, days[0].Summary)
	}

	// By its words, through search.
	var found bool
	for _, h := range searchHTTP(t, a, "default", "lin", "green tea") {
		found = found || h.Kind == string(memory.ResultDaily) && strings.Contains(h.Content, "tea")
	}
	if !found {
		t.Fatalf("search for green tea found no daily summary")
	}
	// By the date a question names, through the context.
	q := fmt.Sprintf("%d月%d日那天聊了什么", day1.Month(), day1.Day())
	resp := contextHTTP(t, a, map[string]any{"user": "lin", "query": q})
	found = false
	for _, it := range resp.Blocks.Episodes {
		found = found || it.Kind == "daily" && strings.Contains(it.Provenance, d1) && strings.Contains(it.Content, "Python")
	}
	if !found {
		t.Fatalf("%q: no daily summary of %s in %+v", q, d1, resp.Blocks.Episodes)
	}

	// The night after each day compresses it into knowledge.
	for _, day := range []time.Time{day1, day2} {
		night := time.Date(day.Year(), day.Month(), day.Day()+1, 3, 0, 0, 0, time.Local)
		if _, err := a.RunJob(t.Context(), "daily_compress", night); err != nil {
			t.Fatal(err)
		}
	}
	waitSettled(t, a)
	for _, date := range []string{d1, d2} {
		days, err := a.Store().DailySummaries(t.Context(), scope, date)
		if err != nil {
			t.Fatal(err)
		}
		if len(days) != 1 || !days[0].Compressed {
			t.Fatalf("%s after daily_compress: %+v, want one compressed day", date, days)
		}
		if mems := listMemories(t, a, "lin", "&q="+url.QueryEscape(date)); !hasContent(mems, date) {
			t.Fatalf("%s: no knowledge from the day: %+v", date, mems)
		}
	}

	seq := waitSettled(t, a)
	stopApp(t, a)
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq {
		t.Fatalf("rebuild: diff %v, target %d want %d", rep.Diff, rep.Target, seq)
	}
}

// With a model, each extraction's one call also writes the part of the
// day's log (seed 001 §6.4: facts and a summary of at most 200 characters
// in one reply); the summary is in the event, so a rebuild calls nothing.
func TestLiveDailySummaryByTheModel(t *testing.T) {
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string {
		if strings.Contains(req.System(), "Extract lasting memories") {
			if strings.Contains(req.LastUser(), "Python") {
				return `{"facts":[{"subject":"python","predicate":"version","content":"用户平时用 Python 3.10 写脚本","kind":"fact","category":"config","importance":0.7,"confidence":0.9,"turn":0}],"summary":"MODEL: 讨论了爬虫项目的目录结构，决定拆分解析器。"}`
			}
			return `{"facts":[],"summary":"MODEL: switched to green tea; plans a hike to Mount Tai."}`
		}
		return `{}`
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	a := startApp(t, cfg, RoleAll)
	day1 := time.Now().AddDate(0, 0, -5)
	mustAccept(t, postBatch(t, a, liveDays("mo", day1, day1.AddDate(0, 0, 1))...))
	waitSettled(t, a)
	days, err := a.Store().DailySummaries(t.Context(), memory.Scope{Namespace: "default", User: "mo"}, day1.Format(time.DateOnly))
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || !strings.Contains(days[0].Summary, "MODEL: 讨论了爬虫项目") {
		t.Fatalf("day 1 = %+v, want the model's summary", days)
	}
	calls := srv.Calls()
	seq := waitSettled(t, a)
	stopApp(t, a)
	rep, err := Rebuild(t.Context(), cfg, RebuildOptions{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diff) != 0 || rep.Target != seq || srv.Calls() != calls {
		t.Fatalf("rebuild: diff %v, target %d want %d, model calls %d → %d", rep.Diff, rep.Target, seq, calls, srv.Calls())
	}
}

func hasContent(mems []memory.Memory, sub string) bool {
	for _, m := range mems {
		if strings.Contains(m.Content, sub) {
			return true
		}
	}
	return false
}

// The same apart (issue 24: "in the single binary and apart"): the
// extractor writes the days' parts, the retriever finds them by date,
// and a consolidator compresses them.
func TestLiveDailySummariesApart(t *testing.T) {
	const partitions = 2
	bus := externalNATS(t)
	ingest := partitionWorker(t, bus, "ingest", RoleIngest, partitions, "", "")
	retriever := partitionWorker(t, bus, "retriever", RoleRetriever, partitions, "", "")
	partitionWorker(t, bus, "x1", RoleExtractor, partitions, "", "")
	c1 := partitionWorker(t, bus, "c1", RoleConsolidator, partitions, "", "")
	today := time.Now()
	day1 := time.Date(today.Year(), today.Month(), today.Day(), 10, 0, 0, 0, time.Local).AddDate(0, 0, -6)
	mustAccept(t, postBatch(t, ingest, liveDays("ren", day1, day1.AddDate(0, 0, 1))...))
	scope := memory.Scope{Namespace: "default", User: "ren"}
	d1 := day1.Format(time.DateOnly)
	wait.Until(t, "the retriever to hold both days", func() bool {
		a := dailySummaries(t, retriever, scope, d1)
		b := dailySummaries(t, retriever, scope, day1.AddDate(0, 0, 1).Format(time.DateOnly))
		return len(a) == 1 && len(b) == 1
	})
	q := fmt.Sprintf("%d月%d日那天聊了什么", day1.Month(), day1.Day())
	resp := contextHTTP(t, retriever, map[string]any{"user": "ren", "query": q})
	found := false
	for _, it := range resp.Blocks.Episodes {
		found = found || it.Kind == "daily" && strings.Contains(it.Provenance, d1)
	}
	if !found {
		t.Fatalf("%q found no daily summary of %s: %+v", q, d1, resp.Blocks.Episodes)
	}
	night := time.Date(day1.Year(), day1.Month(), day1.Day()+1, 3, 0, 0, 0, time.Local)
	if _, err := c1.RunJob(t.Context(), "daily_compress", night); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the day compressed, as the retriever sees it", func() bool {
		days := dailySummaries(t, retriever, scope, d1)
		return len(days) == 1 && days[0].Compressed
	})
}
