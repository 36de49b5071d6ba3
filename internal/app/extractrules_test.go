package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	defaultrules "github.com/engramhq/engram/rules"
	"github.com/nats-io/nats.go/jetstream"
)

// rulesApp starts an engram whose rules directory holds files.
func rulesApp(t *testing.T, files map[string]string) (*App, string) {
	t.Helper()
	data, dir := t.TempDir(), t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig(t, data)
	cfg.Consolidate.RulesDir = dir
	cfg.Consolidate.RulesPoll = 20 * time.Millisecond
	return startApp(t, cfg, RoleAll), dir
}

// shippedRules is the default rule files, by name.
func shippedRules(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	names, err := fs.Glob(defaultrules.FS, "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := fs.ReadFile(defaultrules.FS, n)
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

// requests counts the extraction requests in the stream for a user.
func requests(t *testing.T, a *App, user string) int {
	t.Helper()
	s, err := jsOf(a).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	subject := stream.Subject("default", user, events.TypeExtractionRequested)
	info, err := s.Info(t.Context(), jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	return int(info.State.Subjects[subject])
}

func unextractedOf(t *testing.T, a *App, user string) int {
	t.Helper()
	turns, err := a.Store().Unextracted(t.Context(), time.Now().Add(time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tr := range turns {
		if tr.Scope == (memory.Scope{Namespace: "default", User: user}) {
			n++
		}
	}
	return n
}

func sessionOf(user string, n int) []any {
	var out []any
	for i := range n {
		out = append(out, turnEvent(user+"-t"+string(rune('a'+i)), user, "s1", i, "user", "I use Neovim and I live in Berlin"))
	}
	return append(out, endEvent(user+"-end", user, "s1", n))
}

// A rule author sets the smallest session extracted when it ends.
func TestRuleMinMessagesOnSessionEnd(t *testing.T) {
	t.Parallel()
	a, _ := rulesApp(t, map[string]string{"extraction.yaml": `
rules:
  - name: extract_on_session_end
    on: session.ended
    do:
      - extract_now: {reason: session_ended, min_messages: 5}
`})
	// The short session's end is handled before the long one's.
	mustAccept(t, postBatch(t, a, sessionOf("short", 3)...))
	mustAccept(t, postBatch(t, a, sessionOf("long", 6)...))
	wait.For(t, "the long session extracted", func() error { return wait.Equal(unextractedOf(t, a, "long"), 0) })
	waitSettled(t, a)
	if got := requests(t, a, "long"); got != 1 {
		t.Fatalf("%d requests for the 6-message session, want 1", got)
	}
	if got, n := requests(t, a, "short"), unextractedOf(t, a, "short"); got != 0 || n != 3 {
		t.Fatalf("3-message session: %d requests, %d turns waiting; want 0 and 3", got, n)
	}
}

func compressing(id, user, session string) map[string]any {
	return map[string]any{"specversion": "1.0", "id": id, "source": "test/agent", "type": "context.compressing", "user": user,
		"data": map[string]any{"session_id": session, "turns": []any{
			map[string]any{"turn_index": 0, "role": "user", "content": "My name is Ana and I prefer dark mode"},
			map[string]any{"turn_index": 1, "role": "assistant", "content": "Noted."},
		}}}
}

// Removing the compression rule switches extraction on compression off;
// putting it back switches it on.
func TestRemovingCompressionRuleStopsExtraction(t *testing.T) {
	t.Parallel()
	files := shippedRules(t)
	full := files["compression.yaml"]
	start := strings.Index(full, "  - name: extract_on_compression")
	end := strings.Index(full, "  - name: episode_on_compression")
	if start < 0 || end < start {
		t.Fatal("compression.yaml has no extract_on_compression rule before episode_on_compression")
	}
	files["compression.yaml"] = full[:start] + full[end:]
	a, dir := rulesApp(t, files)

	mustAccept(t, postEvent(t, a, compressing("cc-1", "cx", "s1")))
	mustAccept(t, postBatch(t, a, sessionOf("ctl", 2)...)) // a control: extracted at its end
	wait.For(t, "the control session extracted", func() error { return wait.Equal(requests(t, a, "ctl"), 1) })
	waitSettled(t, a)
	if got := requests(t, a, "cx"); got != 0 {
		t.Fatalf("%d extraction requests on compression without the rule, want 0", got)
	}

	if err := os.WriteFile(filepath.Join(dir, "compression.yaml"), []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the rules to reload", func() bool {
		for _, r := range a.rules().Rules {
			if r.Name == "extract_on_compression" {
				return true
			}
		}
		return false
	})
	mustAccept(t, postEvent(t, a, compressing("cc-2", "cx", "s2")))
	wait.For(t, "extraction on compression", func() error { return wait.Equal(requests(t, a, "cx"), 1) })
	waitSettled(t, a)
	if got := listMemories(t, a, "cx", ""); len(find(got, "user", "name")) != 1 {
		t.Fatalf("cx's memories after compression: %+v", got)
	}
}

// extract_now on a schedule requests every turn waiting; firing it again
// asks for nothing more.
func TestScheduledExtractNow(t *testing.T) {
	t.Parallel()
	a, _ := rulesApp(t, map[string]string{"nightly.yaml": `
rules:
  - name: nightly_extract
    schedule: "0 3 * * *"
    do:
      - extract_now: {reason: sweep}
`})
	mustAccept(t, postBatch(t, a, sessionOf("sw", 3)...))
	waitSettled(t, a)
	if n := unextractedOf(t, a, "sw"); n != 3 {
		t.Fatalf("%d turns waiting before the schedule, want 3 (no rule extracts them)", n)
	}
	for range 2 {
		if ran, err := a.RunJob(t.Context(), "nightly_extract", time.Now()); err != nil || len(ran) != 1 {
			t.Fatalf("run job: %v %v", ran, err)
		}
	}
	wait.For(t, "the waiting turns extracted", func() error { return wait.Equal(unextractedOf(t, a, "sw"), 0) })
	waitSettled(t, a)
	if _, err := a.RunJob(t.Context(), "nightly_extract", time.Now()); err != nil {
		t.Fatal(err)
	}
	waitSettled(t, a)
	if got := requests(t, a, "sw"); got != 1 {
		t.Fatalf("%d extraction requests from three firings, want 1", got)
	}
	if mems := listMemories(t, a, "sw", ""); len(mems) == 0 {
		t.Fatal("no memories from the scheduled extraction")
	}
}
