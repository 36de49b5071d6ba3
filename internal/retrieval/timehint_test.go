package retrieval

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

func TestParseTimeWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 20, 12, 0, 0, 0, time.UTC)
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 12, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		query   string
		in, out []time.Time
	}{
		{"三月初我请假是因为什么", []time.Time{day(3, 4)}, []time.Time{day(3, 25), day(4, 4)}},
		{"五月中旬那次车怎么了", []time.Time{day(5, 14)}, []time.Time{day(5, 2), day(5, 28)}},
		{"二月底那个线上问题", []time.Time{day(2, 26)}, []time.Time{day(2, 10)}},
		{"12月的年会", []time.Time{time.Date(2025, 12, 15, 0, 0, 0, 0, time.UTC)}, []time.Time{day(7, 1)}},
		{"remind me what happened in early March", []time.Time{day(3, 6)}, []time.Time{day(3, 28)}},
		{"what did we do for the anniversary in June?", []time.Time{day(6, 2), day(6, 29)}, []time.Time{day(5, 20)}},
		{"上周开会说了什么", []time.Time{day(7, 12)}, []time.Time{day(6, 1)}},
		{"what did I say yesterday", []time.Time{day(7, 19)}, []time.Time{day(7, 10)}},
	} {
		w := parseTimeWindow(tc.query, now)
		if w == nil {
			t.Errorf("%q: no time window", tc.query)
			continue
		}
		checkHolds(t, tc.query, w, tc.in, tc.out)
	}
	for _, q := range []string{"may I ask what my cat's name is", "我每个月都去", "what is the plan"} {
		if w := parseTimeWindow(q, now); w != nil {
			t.Errorf("%q: window %v–%v, want none", q, w.from, w.to)
		}
	}
}

// checkHolds fails t unless w holds every time of in and none of out.
func checkHolds(t *testing.T, query string, w *timeWindow, in, out []time.Time) {
	t.Helper()
	for _, at := range in {
		if !w.holds(at) {
			t.Errorf("%q: window %v–%v does not hold %v", query, w.from, w.to, at)
		}
	}
	for _, at := range out {
		if w.holds(at) {
			t.Errorf("%q: window %v–%v holds %v", query, w.from, w.to, at)
		}
	}
}

// A question about a time finds what was written then, even when its
// words match nothing (issue 9's time references).
func TestTimeReferenceRecallsThatTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 10)
	feb := time.Date(f.now.Year(), 2, 26, 9, 0, 0, 0, time.UTC)
	if f.now.Month() < 3 {
		feb = feb.AddDate(-1, 0, 0)
	}
	f.apply(user, events.TypeMemoryAdded, feb, &events.MemoryAdded{MemoryID: "oom", Kind: "error", Category: "solution",
		Subject: "order-svc", Predicate: "fix", Content: "order-svc 在 k8s 上被 OOMKilled，设置 GOMEMLIMIT 后解决", Importance: 0.6, Confidence: 1})
	resp := f.ask(Request{Query: "二月底那个线上问题是什么"})
	if got := ids(resp.Blocks.Memories); len(got) == 0 || got[0] != "oom" {
		t.Fatalf("memories = %v, want the one written in late February first", got)
	}
}

// Tier 3 is recalled (issue 10): a migrated myclaw daily log is found by
// its words, and by the date a question names, in /v1/context and in
// search.
func TestDailySummariesRecalled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fillers(user, 5)
	day := time.Date(f.now.Year(), 3, 5, 0, 0, 0, 0, time.UTC)
	if f.now.Month() < 4 {
		day = day.AddDate(-1, 0, 0)
	}
	f.apply(user, events.TypeDailySummarized, day.Add(23*time.Hour), &events.DailySummary{Date: day.Format("2006-01-02"),
		Channel: "telegram", Summary: "- 14:30 用户报告 gateway 在重连时丢消息，定位到 processLoop 没有处理 ctx 取消。", RawTokens: 40, Source: "migration"})
	for _, q := range []string{"gateway 丢消息那次是什么原因", "三月初发生了什么"} {
		resp := f.ask(Request{Query: q})
		if !slices.ContainsFunc(resp.Blocks.Episodes, func(it Item) bool { return it.Kind == "daily" && strings.Contains(it.Content, "processLoop") }) {
			t.Errorf("%q: episodes %+v, want the daily log", q, resp.Blocks.Episodes)
		}
	}
	res, err := f.search("gateway 重连")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res, func(r memory.SearchResult) bool { return r.Kind == memory.ResultDaily }) {
		t.Fatalf("search = %+v, want the daily log", res)
	}
}

// A question that names a day ("on October 13, 2023", "3月5日") points at
// that day, not its month (issue 9: LoCoMo's questions name the day of
// the talk they ask about).
func TestParseTimeWindowDay(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 20, 12, 0, 0, 0, time.UTC)
	at := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 15, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		query   string
		in, out []time.Time
	}{
		{"What painting did Melanie show to Caroline on October 13, 2023?", []time.Time{at(2023, 10, 13)}, []time.Time{at(2023, 10, 20), at(2025, 10, 13)}},
		{"What did Gina find for her clothing store on 1 February, 2023?", []time.Time{at(2023, 2, 1)}, []time.Time{at(2023, 2, 10)}},
		{"what did I tell you on the 3rd of June", []time.Time{at(2026, 6, 3)}, []time.Time{at(2026, 6, 12)}},
		{"the notes from 2025-12-30", []time.Time{at(2025, 12, 30)}, []time.Time{at(2025, 12, 20)}},
		{"3月5日那天我们聊了什么", []time.Time{at(2026, 3, 5)}, []time.Time{at(2026, 3, 15)}},
		{"2024年11月2号的会", []time.Time{at(2024, 11, 2)}, []time.Time{at(2025, 11, 2)}},
		// Not yet this year: the latest one before now.
		{"what happened on December 24?", []time.Time{at(2025, 12, 24)}, []time.Time{at(2026, 12, 24)}},
	} {
		w := parseTimeWindow(tc.query, now)
		if w == nil || !w.sharp {
			t.Errorf("%q: window %+v, want a sharp one", tc.query, w)
			continue
		}
		checkHolds(t, tc.query, w, tc.in, tc.out)
	}
	if w := parseTimeWindow("in June 2023", now); w == nil || !w.sharp {
		t.Errorf("a month with its year: %+v, want a sharp window", w)
	}
	if w := parseTimeWindow("early June", now); w == nil || w.sharp {
		t.Errorf("a month alone: %+v, want a window that is not sharp", w)
	}
}

// The turn said on the day a question names comes before a better
// worded one from another day of the same month.
func TestNamedDayRanksItsTurns(t *testing.T) {
	t.Parallel()
	if score, _ := paintingScores(t, 2026); score["s1"] <= score["s2"] {
		t.Fatalf("scores %v: want the turn of June 13 (s1) above the one of June 24", score)
	}
}

// paintingScores puts a turn of June 13 (s1) and a better worded one of
// June 24 (s2) of year into a fixture whose now is 20 July 2026, asks
// which painting was shown on June 13, and returns each session's score.
func paintingScores(t *testing.T, year int) (map[string]float64, *fixture) {
	f := newFixture(t)
	f.now = time.Date(2026, 7, 20, 12, 0, 0, 0, time.UTC)
	f.turns(user, "s1", f.now.Sub(time.Date(year, 6, 13, 10, 0, 0, 0, time.UTC)), "Here is the painting I wanted to show you.")
	f.turns(user, "s2", f.now.Sub(time.Date(year, 6, 24, 10, 0, 0, 0, time.UTC)), "The painting I showed you is finished: a big painting.")
	score := map[string]float64{}
	for _, it := range f.ask(Request{Query: "What painting did I show you on June 13?"}).Blocks.Turns {
		score[it.SessionID] = it.Score
	}
	return score, f
}

// A question that asks when prefers the turn that says when over one that
// only shares its words (issue 9: question-type cues).
func TestAsksWhenPrefersTurnsThatSayWhen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "s1", 30*24*time.Hour, "Camping with the kids is the best, camping is our thing.")
	f.turns(user, "s2", 20*24*time.Hour, "We went camping with the kids two weekends ago.")
	score := func(query string) map[string]float64 {
		out := map[string]float64{}
		for _, it := range f.ask(Request{Query: query}).Blocks.Turns {
			out[it.SessionID] = it.Score
		}
		return out
	}
	if s := score("When did we go camping with the kids?"); s["s2"] <= s["s1"] {
		t.Fatalf("when: scores %v, want the turn that says when (s2) first", s)
	}
	if s := score("Did we go camping with the kids?"); s["s2"] >= s["s1"] {
		t.Fatalf("not when: scores %v, want the better match (s1) first", s)
	}
}

// A day named without its year is the latest such day the user said
// something on (anchor), not one they were silent in: a user whose talk
// is two years old asks about "June 13" of two years ago.
func TestYearlessDayIsTheLatestTheUserSpokeIn(t *testing.T) {
	t.Parallel()
	score, f := paintingScores(t, 2024)
	if score["s1"] <= score["s2"] {
		t.Fatalf("scores %v: want the turn of June 13, 2024 (s1) above the one of June 24", score)
	}
	if w, err := anchor(t.Context(), f.st, user, parseTimeWindow("in early March", f.now)); err != nil || w == nil || w.from.Year() != 2026 {
		t.Fatalf("a month the user never spoke in: %+v (err %v), want it left in 2026", w, err)
	}
}

// A day's log whose turns the block already quotes is left out (it would
// say their words again: today's log of a live conversation), unless the
// question asks about that day.
func TestDailyLogOfQuotedTurnsLeftOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.turns(user, "s1", 2*time.Hour, "我住在北京市朝阳区，平时喜欢喝美式咖啡。")
	said := f.now.Add(-2 * time.Hour).Local()
	day := said.Format(time.DateOnly)
	f.apply(user, events.TypeDailySummarized, said.Add(time.Minute), &events.DailySummary{Date: day,
		Channel: "chat", Summary: said.Format("15:04") + " 我住在北京市朝阳区，平时喜欢喝美式咖啡。", RawTokens: 20, Source: "extraction"})
	daily := func(it Item) bool { return it.Kind == "daily" }
	resp := f.ask(Request{Query: "我平时喝什么咖啡？"})
	if len(resp.Blocks.Turns) == 0 {
		t.Fatalf("the turn is not recalled: %+v", resp.Blocks)
	}
	if slices.ContainsFunc(resp.Blocks.Episodes, daily) {
		t.Errorf("the day's log beside the turns it repeats: %+v", resp.Blocks.Episodes)
	}
	q := fmt.Sprintf("%d月%d日那天聊了什么", said.Month(), said.Day())
	if resp := f.ask(Request{Query: q}); !slices.ContainsFunc(resp.Blocks.Episodes, daily) {
		t.Errorf("%q: episodes %+v, want the day's log", q, resp.Blocks.Episodes)
	}
}
