package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/textseg"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// With raw-turn retention on, what engram wrote word for word from the
// turns goes with them (issue 24): the extractive episode, the
// scratchpad and the day's log keep what they say of their own (the
// outcome, the tools, the facts learned) but no sentence of the expired
// turns — in the read model, in the stream, and in a rebuild.
func TestRetentionScrubsDerivedText(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.Retention.RawTurns = 2 * time.Second
	a := startApp(t, cfg, RoleAll)
	const secret = "Please deploy the billing service to Kubernetes for the Atlas project."
	scope := memory.Scope{Namespace: events.DefaultNamespace, User: "ivy"}
	mustAccept(t, postBatch(t, a, append(conversation("iv", "ivy", "s1"), endEvent("iv-end", "ivy", "s1", 4))...))
	wait.Until(t, "the episode, the scratchpad and the day's log", func() bool {
		eps := episodesOf(t, "http://"+a.HTTPAddr(), "default", "ivy")
		pad, _ := a.Store().Scratchpad(t.Context(), scope)
		days := allDays(t, a, scope)
		return len(eps) == 1 && strings.Contains(eps[0].Summary, "billing service") && strings.Contains(pad.Content, "billing") && len(days) == 1
	})
	wait.Until(t, "ivy's turns to age out", func() bool { return countTurns(t, a, scope) == 0 })
	waitSettled(t, a)

	eps := episodesOf(t, "http://"+a.HTTPAddr(), "default", "ivy")
	if len(eps) != 1 || strings.Contains(eps[0].Summary, secret) || eps[0].Summary == "" || eps[0].Tools[0] != "shell" {
		t.Fatalf("episode after expiry = %+v", eps)
	}
	for _, act := range eps[0].Actions {
		if strings.Contains(act.Params, "kubectl") && strings.Contains(act.Result, "billing configured") {
			t.Fatalf("the tool call's text stayed: %+v", act)
		}
	}
	pad, err := a.Store().Scratchpad(t.Context(), scope)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pad.Content, secret) || strings.Contains(pad.CurrentFocus, secret) {
		t.Fatalf("scratchpad after expiry = %+v", pad)
	}
	if days := allDays(t, a, scope); len(days) != 1 || strings.Contains(days[0].Summary, secret) {
		t.Fatalf("day's log after expiry = %+v", days)
	}
	// Nor does the stream keep it in any event of ivy's.
	for _, m := range readStream(t, jsOf(a), "mem.*.*.>") {
		if m.Envelope().Scope.User != "ivy" {
			continue
		}
		b, _ := json.Marshal(m.Applied().Data)
		if strings.Contains(string(b), secret) {
			t.Fatalf("%s %s still holds the expired text", m.Envelope().Type, m.Envelope().ID)
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

// allDays is every day of a user's log.
func allDays(t *testing.T, a *App, scope memory.Scope) []memory.DailySummary {
	t.Helper()
	days, err := a.Store().RecallDailySummaries(t.Context(), scope, textseg.Understand(""), "1970-01-01", "9000-01-01", 100)
	if err != nil {
		t.Fatal(err)
	}
	return days
}
