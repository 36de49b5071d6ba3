package retrieval

import (
	"context"
	"fmt"
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

// sessionWindow is seed 002 §4's short-term memory for one session: its
// latest turns, oldest first, after a summary of what left the agent's
// window — the agent's own from context.compressing, which the
// compression episode keeps, else that episode's extractive one.
func sessionWindow(ctx context.Context, sr SessionReader, scope memory.Scope, session string) ([]Item, error) {
	turns, err := sr.SessionTurns(ctx, scope, session)
	if err != nil {
		return nil, err
	}
	eps, err := sr.Episodes(ctx, scope, session, 50)
	if err != nil {
		return nil, err
	}
	var out []Item
	var summary *memory.Episode
	for i := range eps {
		if eps[i].Source == "compression" && (summary == nil || eps[i].Ended.After(summary.Ended)) {
			summary = &eps[i]
		}
	}
	if summary != nil && strings.TrimSpace(summary.Summary) != "" {
		out = append(out, Item{ID: summary.ID, Kind: contextblock.KindSummary, Content: summary.Summary, SessionID: session,
			Time: summary.Ended, Score: 1,
			Provenance: fmt.Sprintf("summary of earlier turns · episode %s · %s", summary.ID, summary.Ended.Format("2006-01-02 15:04"))})
	}
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
