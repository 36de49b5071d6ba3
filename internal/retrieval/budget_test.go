package retrieval

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
)

// Seed 004 §5's budget holds (issue 10): a core profile of 100 entries
// pays for itself, the total never passes the budget, the memory that
// answers is kept, and filler turns go before evidence.
func TestBudgetHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 100 {
		f.apply(user, events.TypeMemoryAdded, f.now.Add(-time.Duration(i+1)*time.Hour), &events.MemoryAdded{
			MemoryID: fmt.Sprintf("core-%d", i), Tier: events.TierCore, Kind: "fact", Category: "identity",
			Subject: "user", Predicate: fmt.Sprintf("trait-%d", i),
			Content:    fmt.Sprintf("Core fact number %d about the user's long standing habits and background details", i),
			Importance: 0.7 + float64(i%30)/100, Confidence: 1})
	}
	f.memory(user, "answer", "fact", "The staging cluster runs in Frankfurt, eu-central-1", 48*time.Hour)
	f.turns(user, "chat", 2*time.Hour, "Understood.", "Thanks for the update.", "好的", "Got it, thanks!")
	for _, budget := range []int{0, 800} {
		resp := f.ask(Request{Query: "where does the staging cluster run?", BudgetTokens: budget})
		limit := 3500
		if budget > 0 {
			limit = budget - budget/8 // the reserve is 500 of 4,000
		}
		if resp.Tokens > limit {
			t.Errorf("budget %d: %d tokens, over the limit %d", budget, resp.Tokens, limit)
		}
		if !slices.Contains(ids(resp.Blocks.Memories), "answer") {
			t.Errorf("budget %d: the answering memory was dropped (memories %v, dropped %d)", budget, ids(resp.Blocks.Memories), len(resp.Dropped))
		}
		if len(resp.Blocks.Profile) == 0 || len(resp.Blocks.Profile) == 100 {
			t.Errorf("budget %d: %d profile entries, want the card trimmed to its share (tokens %d, budget %+v)", budget, len(resp.Blocks.Profile), resp.Tokens, resp.Budget)
		}
		for _, it := range resp.Blocks.Profile {
			if it.Score < 0.85 {
				// the card keeps its most important entries
				for _, d := range resp.Dropped {
					if strings.HasPrefix(d, "core-") {
						t.Errorf("budget %d: a profile entry of importance %.2f kept while others were dropped", budget, it.Score)
						break
					}
				}
				break
			}
		}
	}
}

// The session window (issue 10, seed 002 §4): with a session_id, the
// recent block holds that session's latest turns within its share, and
// what left the agent's window is carried by the compression summary, in
// both languages, whatever the query is about.
func TestSessionWindow(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			f := newFixture(t)
			say := func(i int) string {
				if lang == "zh" {
					return fmt.Sprintf("第%d轮：我们继续调整支付服务的重试策略，把超时改成%d秒。", i, i+10)
				}
				return fmt.Sprintf("Turn %d: we keep tuning the payment service retry policy, timeout now %d seconds.", i, i+10)
			}
			var contents []string
			for i := range 40 {
				contents = append(contents, say(i))
			}
			f.turns(user, "live", 3*time.Hour, contents...)
			summary := "Earlier: the user and the agent designed the retry policy for payments and agreed on idempotency keys."
			if lang == "zh" {
				summary = "之前：用户和助手设计了支付重试策略，并约定使用幂等键。"
			}
			turns := make([]int, 20)
			for i := range turns {
				turns[i] = i
			}
			f.apply(user, events.TypeEpisodeBuilt, f.now.Add(-2*time.Hour), &events.Episode{ID: "ep-compress", SessionID: "live",
				Summary: summary, Outcome: "ongoing", Started: f.now.Add(-3 * time.Hour), Ended: f.now.Add(-2 * time.Hour),
				Importance: 0.5, Source: "compression", Turns: turns})
			resp := f.ask(Request{Query: "what is the weather like in Lisbon?", SessionID: "live", BudgetTokens: 1200})
			w := resp.Blocks.Window
			if len(w) < 3 || w[0].Kind != "summary" || w[0].Content != summary {
				t.Fatalf("window = %+v, want the summary first", w)
			}
			last := w[len(w)-1]
			if last.TurnIndex == nil || *last.TurnIndex != 39 {
				t.Fatalf("the window does not end with the latest turn: %+v", last)
			}
			for i := 2; i < len(w); i++ {
				if *w[i].TurnIndex != *w[i-1].TurnIndex+1 {
					t.Fatalf("the window is broken at %d: %+v", i, w)
				}
			}
			if len(w) > 40 {
				t.Fatalf("the whole session came back: %d items", len(w))
			}
			window := 0
			for _, it := range w {
				window += it.Tokens
			}
			if share := 1200 * 2000 / 4000; window > share {
				t.Fatalf("session window %d tokens for a recent share of %d", window, share)
			}
			if !strings.Contains(resp.Rendered, summary) {
				t.Fatalf("the summary is not rendered")
			}
		})
	}
}
