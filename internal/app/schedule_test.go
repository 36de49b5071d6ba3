package app

import (
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"go.uber.org/zap/zaptest"
)

// Scheduled firings missed while engram was down run when it starts
// again: here the weekly profile refresh of a week ago.
func TestScheduleCatchesUpAfterDowntime(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	postMemory(t, a, `{"user":"kim","kind":"identity","category":"identity","subject":"user","predicate":"name","content":"The user's name is Kim","importance":0.95}`)
	waitSettled(t, a)
	var prof struct{ Core []memory.Memory }
	getJSON(t, "http://"+a.HTTPAddr(), "/v1/profile?user=kim", &prof)
	if len(prof.Core) != 0 {
		t.Fatalf("core before any weekly run: %+v", prof.Core)
	}
	stopApp(t, a)

	// The last firing anyone ran was eight days ago.
	js, closeNATS, err := OpenOperator(t.Context(), cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), stream.ScheduleBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), stream.LastFiringKey, []byte(time.Now().AddDate(0, 0, -8).UTC().Format(time.RFC3339Nano))); err != nil {
		t.Fatal(err)
	}
	closeNATS()

	a = startApp(t, cfg, RoleAll)
	wait.Until(t, "the missed weekly profile refresh", func() bool {
		getJSON(t, "http://"+a.HTTPAddr(), "/v1/profile?user=kim", &prof)
		return len(prof.Core) == 1 && prof.Core[0].Content == "The user's name is Kim"
	})
}

// Of several consolidators, one runs each firing; "last" only moves on.
func TestScheduleFiringClaimedOnce(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleIngest)
	log := zaptest.NewLogger(t)
	one, err := a.openFirings(t.Context(), log)
	if err != nil {
		t.Fatal(err)
	}
	two, err := a.openFirings(t.Context(), log)
	if err != nil {
		t.Fatal(err)
	}
	if got := one.since(t.Context()); !got.IsZero() {
		t.Fatalf("since on a new bucket = %v, want zero", got)
	}
	at := time.Date(2026, 11, 23, 4, 0, 0, 0, time.UTC)
	weekly := rules.Firing{Rule: rules.Rule{Name: "weekly_profile"}, At: at}
	if !one.claim(t.Context(), weekly) {
		t.Fatal("the first claim of a firing was refused")
	}
	if two.claim(t.Context(), weekly) {
		t.Fatal("a second instance claimed the same firing")
	}
	if !two.claim(t.Context(), rules.Firing{Rule: weekly.Rule, At: at.AddDate(0, 0, 7)}) {
		t.Fatal("the next firing was refused")
	}
	if !one.claim(t.Context(), rules.Firing{Rule: rules.Rule{Name: "daily decay"}, At: at.Add(-time.Hour)}) {
		t.Fatal("another rule's firing was refused")
	}
	if got, want := one.since(t.Context()), at.AddDate(0, 0, 7); !got.Equal(want) {
		t.Fatalf("since = %v, want %v (never moved back)", got, want)
	}
}
