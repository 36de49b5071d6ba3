package app

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm/llmtest"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap/zaptest"
)

// paraphrases are issue 24's three pairs, each the same fact said twice,
// and facts that look alike but are not the same.
var (
	paraphrases = [][2]string{
		{"The user has two cats", "The user has 2 cats"},
		{"The user plays tennis on weekends", "The user plays tennis at weekends"},
		{"The user drinks coffee every morning", "The user drinks coffee mornings"},
	}
	distinct = []string{
		"The user has two dogs",
		"The user has 3 cats at the office",
		"The user plays golf on weekends",
		"The user does not drink coffee in the evening",
		"The user works at Acme",
		"The user is employed by Acme",
		"The user lives in Lisbon",
	}
)

// addFacts adds the paraphrases and the distinct facts to one partition,
// each under its own subject so the write-time merge leaves them all.
func addFacts(t *testing.T, a *App, user string) {
	t.Helper()
	var texts []string
	for _, p := range paraphrases {
		texts = append(texts, p[0], p[1])
	}
	texts = append(texts, distinct...)
	for i, text := range texts {
		postMemory(t, a, fmt.Sprintf(`{"user":%q,"kind":"fact","category":"event","subject":"s%d","predicate":"note","content":%q,"importance":%.2f}`,
			user, i, text, 0.5+float64(i)/100))
	}
	waitSettled(t, a)
}

// activeContents is the user's active memories' contents, sorted.
func activeContents(t *testing.T, a *App, user string) []string {
	t.Helper()
	var out []string
	for _, m := range listMemories(t, a, user, "&limit=100") {
		out = append(out, m.Content)
	}
	slices.Sort(out)
	return out
}

// The weekly dedupe (seed 001 §7.3, seed 000 §5.7) merges each of the
// three paraphrase pairs — a number written as a word, another
// preposition, a plural — and keeps facts that differ in what they say
// apart, a negation and another number included. Without a model the
// merge keeps the more important member's wording; a rebuild agrees.
func TestWeeklyDedupeMergesParaphrases(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	a := startApp(t, cfg, RoleAll)
	addFacts(t, a, "pat")
	if ran, err := a.RunJob(t.Context(), "weekly_dedupe", time.Now()); err != nil || len(ran) != 1 {
		t.Fatalf("weekly_dedupe ran %v: %v", ran, err)
	}
	waitSettled(t, a)
	got := activeContents(t, a, "pat")
	want := append([]string{}, distinct...)
	for _, p := range paraphrases {
		want = append(want, p[1]) // the second is the more important
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("active after dedupe:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	merged := listMemories(t, a, "pat", "&status=superseded")
	if len(merged) != len(paraphrases) {
		t.Fatalf("%d superseded, want %d: %+v", len(merged), len(paraphrases), merged)
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

// With a model, the dedupe clusters loosely and the model judges inside
// each cluster (seed 000 §5.7: one call per cluster, never per pair):
// what it says is one fact merges under its wording, what it keeps apart
// stays apart. Its decisions are in the events, so a rebuild calls
// nothing.
func TestWeeklyDedupeByTheModel(t *testing.T) {
	srv := llmtest.New(t)
	srv.Reply(func(req llmtest.ChatRequest) string {
		if !strings.Contains(req.System(), "near-duplicate memories") {
			return `{}`
		}
		// The members are numbered lines: say which are one fact.
		lines := strings.Split(req.LastUser(), "\n")
		num := func(sub string) int {
			for _, l := range lines {
				if n, text, ok := strings.Cut(l, ". "); ok && strings.Contains(text, sub) {
					var i int
					if _, err := fmt.Sscan(n, &i); err != nil {
						t.Errorf("a numbered line %q: %v", l, err) // the model server's goroutine: no Fatal
					}
					return i
				}
			}
			return 0
		}
		var groups []string
		if w, e := num("works at Acme"), num("employed by Acme"); w > 0 && e > 0 {
			groups = append(groups, fmt.Sprintf(`{"members":[%d,%d],"content":"MODEL: The user works at Acme"}`, w, e))
		}
		if c, m := num("has two cats"), num("has 2 cats"); c > 0 && m > 0 {
			groups = append(groups, fmt.Sprintf(`{"members":[%d,%d],"content":"MODEL: The user has two cats"}`, c, m))
		}
		return `{"merges":[` + strings.Join(groups, ",") + `]}`
	})
	cfg := testConfig(t, t.TempDir())
	cfg.LLM.BaseURL, cfg.LLM.Model = srv.Config().BaseURL, srv.Config().Model
	a := startApp(t, cfg, RoleAll)
	addFacts(t, a, "quinn")
	before := srv.Calls()
	if ran, err := a.RunJob(t.Context(), "weekly_dedupe", time.Now()); err != nil || len(ran) != 1 {
		t.Fatalf("weekly_dedupe ran %v: %v", ran, err)
	}
	waitSettled(t, a)
	calls := srv.Calls()
	if calls == before {
		t.Fatal("the dedupe asked the model nothing")
	}
	got := activeContents(t, a, "quinn")
	for _, w := range []string{"MODEL: The user works at Acme", "MODEL: The user has two cats", "The user has two dogs",
		"The user lives in Lisbon", "The user does not drink coffee in the evening"} {
		if !slices.Contains(got, w) {
			t.Errorf("active after dedupe lacks %q:\n%s", w, strings.Join(got, "\n"))
		}
	}
	for _, gone := range []string{"The user is employed by Acme", "The user works at Acme", "The user has 2 cats"} {
		if slices.Contains(got, gone) {
			t.Errorf("%q is still active:\n%s", gone, strings.Join(got, "\n"))
		}
	}
	var n int
	for _, m := range listMemories(t, a, "quinn", "&status=superseded") {
		if m.Status == memory.StatusSuperseded {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("%d superseded, want the model's two merges at least", n)
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
}
