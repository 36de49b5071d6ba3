package retrieval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/contextblock"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
)

// maxWindowTurns bounds the turns a session window offers; the budget's
// recent share decides how many of them stay (contextblock.Fit trims the
// oldest first).
const maxWindowTurns = 60

// maxWindowSummaries bounds the compression summaries a window joins.
const maxWindowSummaries = 5

// sessionWindow is seed 002 §4's short-term memory for one session: a
// summary of what left the agent's window, then the session's latest
// turns that no summary covers, oldest first. The summary joins the
// session's compression episodes, oldest first (seed 002 §4.2: a new
// summary is merged with the one before): each the agent's own from
// context.compressing, else extractive, or the session's own compaction
// (the consolidator's compact action) when it grew long.
func sessionWindow(ctx context.Context, sr SessionReader, scope memory.Scope, session string) ([]Item, error) {
	turns, err := sr.SessionTurns(ctx, scope, session)
	if err != nil {
		return nil, err
	}
	eps, err := sr.Episodes(ctx, scope, session, 50)
	if err != nil {
		return nil, err
	}
	var summaries []memory.Episode
	covered := map[int]bool{}
	for _, ep := range eps {
		if ep.Source != "compression" || strings.TrimSpace(ep.Summary) == "" {
			continue
		}
		summaries = append(summaries, ep)
		for _, i := range ep.Turns {
			covered[i] = true
		}
	}
	slices.SortStableFunc(summaries, func(a, b memory.Episode) int { return a.Ended.Compare(b.Ended) })
	summaries = summaries[max(0, len(summaries)-maxWindowSummaries):]
	var out []Item
	if n := len(summaries); n > 0 {
		last := summaries[n-1]
		texts := make([]string, n)
		for i, ep := range summaries {
			texts[i] = strings.TrimSpace(ep.Summary)
		}
		out = append(out, Item{ID: last.ID, Kind: contextblock.KindSummary, Content: strings.Join(texts, "\n"), SessionID: session,
			Time: last.Ended, Score: 1,
			Provenance: fmt.Sprintf("summary of earlier turns · episode %s · %s", last.ID, last.Ended.Format("2006-01-02 15:04"))})
	}
	turns = slices.DeleteFunc(turns, func(t memory.Turn) bool { return covered[t.TurnIndex] })
	turns = turns[max(0, len(turns)-maxWindowTurns):]
	for i, t := range turns {
		idx := t.TurnIndex
		out = append(out, Item{ID: fmt.Sprintf("t_%d", t.ID), Kind: "turn", Content: t.Content, SessionID: session,
			TurnIndex: &idx, Time: t.Time, Score: float64(i+1) / float64(len(turns)),
			Provenance: fmt.Sprintf("turn · %s · session %s, turn %d · %s", t.Role, session, t.TurnIndex, t.Time.Format("2006-01-02 15:04"))})
	}
	return out, nil
}

// fillerScore is what a turn that carries nothing but politeness or
// acknowledgement ("Understood.", "Thanks for the update.", "好的") scores
// as evidence: it is trimmed before any turn that says something.
const fillerScore = 0.01

// isFiller reports whether a turn says nothing a question could need: a
// few words, all of them acknowledgement, politeness or stopwords.
func isFiller(content string) bool {
	c := strings.TrimSpace(content)
	if c == "" {
		return true
	}
	if utf8.RuneCountInString(c) > 40 {
		return false
	}
	q := textseg.Understand(c)
	if q.Empty() || q.Uninformative {
		return true
	}
	for _, t := range q.Terms {
		if t.Weight >= 0.8 && !fillerWords[t.Token] {
			return false
		}
	}
	return true
}

// fillerWords are the tokens (as textseg reads them: stemmed words, CJK
// bigrams) of acknowledgements and thanks.
var fillerWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{"understood", "update", "noted", "sure", "great", "cool", "nice", "good", "sounds",
		"perfect", "awesome", "got", "will", "done", "fine", "alright", "right", "appreciate", "welcome", "bye", "see",
		"later", "morning", "night", "glad", "help", "helps", "helpful",
		"好的", "谢谢", "收到", "明白", "知道", "没问题", "可以", "好嘞", "了解", "辛苦", "不客气", "再见", "晚安", "早安", "嗯嗯"} {
		for _, tok := range textseg.Tokens(w) {
			m[tok] = true
		}
	}
	return m
}()
