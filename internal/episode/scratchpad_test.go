package episode

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/memory"
)

func day(n int) time.Time { return t0.AddDate(0, 0, n) }

func TestScratchpadMergeThreeEpisodes(t *testing.T) {
	t.Parallel()
	var pad memory.Scratchpad
	eps := []memory.Episode{
		{ID: "e1", Goal: "Set up CI for Atlas.", Summary: "Set up CI for Atlas. The pipeline runs.", Outcome: memory.OutcomeCompleted,
			Entities: []string{"project:atlas"}, Ended: day(0)},
		{ID: "e2", Goal: "Deploy the web app.", Summary: "Deploy the web app. Next, I will add monitoring.", Outcome: memory.OutcomeFailed,
			Entities: []string{"project:web", "project:atlas"}, Ended: day(1),
			Actions: []memory.ActionNode{{Tool: "bash", Error: "Unauthorized"}}},
		{ID: "e3", Goal: "Which region should the DB live in?", Summary: "Which region should the DB live in?", Outcome: memory.OutcomeOngoing,
			Entities: []string{"project:db"}, Ended: day(2)},
	}
	for i, ep := range eps {
		pad = UpdateScratchpad(pad, ep, day(i).Add(time.Hour))
	}
	if got, want := pad.ActiveProjects, []string{"db", "web", "atlas"}; !reflect.DeepEqual(got, want) {
		t.Errorf("projects %q, want %q (most recent first)", got, want)
	}
	if got, want := pad.CurrentFocus, "Which region should the DB live in?"; got != want {
		t.Errorf("focus %q, want %q", got, want)
	}
	if got, want := pad.OpenQuestions, []string{"Which region should the DB live in?", "Deploy the web app. — Unauthorized"}; !reflect.DeepEqual(got, want) {
		t.Errorf("open questions %q, want %q", got, want)
	}
	if got, want := pad.NextSteps, []string{"Next, I will add monitoring."}; !reflect.DeepEqual(got, want) {
		t.Errorf("next steps %q, want %q", got, want)
	}
	progress := progressOf(pad.Content)
	if len(progress) != 3 || !strings.HasPrefix(progress[0], "2025-03-04 (ongoing): ") || !strings.HasPrefix(progress[2], "2025-03-02 (completed): ") {
		t.Errorf("progress %q, want three entries, newest first", progress)
	}
	if got, want := pad.Updated, day(2).Add(time.Hour); !got.Equal(want) {
		t.Errorf("Updated %v, want %v", got, want)
	}
	if pad.Source != ScratchpadFromEpisode {
		t.Errorf("Source %q", pad.Source)
	}

	t.Run("a fourth keeps three progress entries", func(t *testing.T) {
		next := UpdateScratchpad(pad, memory.Episode{Goal: "Pick a region.", Summary: "Pick a region. We chose eu-west.", Outcome: memory.OutcomeCompleted, Ended: day(3)}, day(3))
		progress := progressOf(next.Content)
		if len(progress) != MaxProgress || !strings.HasPrefix(progress[0], "2025-03-05") || !strings.HasPrefix(progress[2], "2025-03-03") {
			t.Fatalf("progress %q", progress)
		}
	})
	t.Run("the same episode twice adds one entry", func(t *testing.T) {
		again := UpdateScratchpad(pad, eps[2], day(2).Add(2*time.Hour))
		if got, want := progressOf(again.Content), progressOf(pad.Content); !reflect.DeepEqual(got, want) {
			t.Fatalf("progress %q, want %q", got, want)
		}
	})
	t.Run("a completed episode resolves its open question", func(t *testing.T) {
		done := UpdateScratchpad(pad, memory.Episode{Goal: "Deploy the web app.", Summary: "Deploy the web app. Deployed.", Outcome: memory.OutcomeCompleted}, day(4))
		for _, q := range done.OpenQuestions {
			if strings.Contains(q, "Deploy the web app") {
				t.Fatalf("resolved question kept: %q", done.OpenQuestions)
			}
		}
		if len(done.OpenQuestions) != 1 {
			t.Fatalf("open questions %q, want the unrelated one kept", done.OpenQuestions)
		}
	})
}

func TestScratchpadLimits(t *testing.T) {
	t.Parallel()
	var pad memory.Scratchpad
	long := strings.Repeat("很长的进展描述，", 60)
	for i := range 12 {
		ep := memory.Episode{
			Goal:     fmt.Sprintf("目标 %d：%s", i, long),
			Summary:  fmt.Sprintf("第 %d 次：%s。下一步要继续第 %d 项。%s？", i, long, i, long),
			Outcome:  memory.OutcomeOngoing,
			Entities: []string{fmt.Sprintf("project:项目%d", i)},
			Ended:    day(i),
		}
		pad = UpdateScratchpad(pad, ep, day(i))
		if n := utf8.RuneCountInString(pad.Content); n > memory.ScratchpadMaxChars {
			t.Fatalf("after %d episodes Content is %d runes", i+1, n)
		}
	}
	if len(pad.ActiveProjects) != MaxActiveProjects || pad.ActiveProjects[0] != "项目11" {
		t.Fatalf("projects %q", pad.ActiveProjects)
	}
	if len(pad.OpenQuestions) > MaxOpenQuestions || len(pad.NextSteps) > MaxNextSteps {
		t.Fatalf("%d questions, %d steps", len(pad.OpenQuestions), len(pad.NextSteps))
	}
	for _, l := range [][]string{pad.OpenQuestions, pad.NextSteps, {pad.CurrentFocus}} {
		for _, s := range l {
			if n := utf8.RuneCountInString(s); n > maxItemRunes || s == "" {
				t.Fatalf("item of %d runes: %q", n, s)
			}
		}
	}
	progress := progressOf(pad.Content)
	if len(progress) == 0 || !strings.HasPrefix(progress[0], "2025-03-13") {
		t.Fatalf("the newest progress must survive trimming: %q", progress)
	}
	if !strings.Contains(pad.Content, "## 近期进展") {
		t.Fatalf("Chinese episode, headings not Chinese:\n%s", pad.Content)
	}
}

func TestScratchpadPersonOverride(t *testing.T) {
	t.Parallel()
	mine := "# My notes\n\nFocus on the **billing** rewrite.\n  - keep this indentation\n"
	pad := memory.Scratchpad{Namespace: "ns", User: "u", Source: ScratchpadFromPerson, Content: mine,
		ActiveProjects: []string{"billing"}, OpenQuestions: []string{"Stripe or Adyen?"}}
	for i, in := range []func() Input{enAbandoned, enFixDeploy, enFailed} {
		pad = UpdateScratchpad(pad, Extractive(laterBy(in(), i)), day(i))
		if !strings.HasPrefix(pad.Content, strings.TrimRight(mine, "\n")+"\n\n"+PersonMarker+"\n") {
			t.Fatalf("after episode %d the person's text is not kept on top:\n%s", i+1, pad.Content)
		}
		if n := strings.Count(pad.Content, PersonMarker); n != 1 {
			t.Fatalf("marker appears %d times:\n%s", n, pad.Content)
		}
		if n := utf8.RuneCountInString(pad.Content); n > memory.ScratchpadMaxChars {
			t.Fatalf("Content is %d runes", n)
		}
	}
	if got, want := pad.ActiveProjects, []string{"engram", "atlas", "billing"}; !reflect.DeepEqual(got, want) {
		t.Errorf("projects %q, want %q", got, want)
	}
	if pad.Namespace != "ns" || pad.User != "u" {
		t.Errorf("scope %q/%q lost", pad.Namespace, pad.User)
	}
	if got := progressOf(pad.Content[strings.Index(pad.Content, PersonMarker):]); len(got) != 3 {
		t.Errorf("progress %q, want 3 entries below the marker", got)
	}

	t.Run("a person's text over the limit is cut, the marker kept", func(t *testing.T) {
		huge := memory.Scratchpad{Source: ScratchpadFromPerson, Content: strings.Repeat("我的笔记。", 1000)}
		got := UpdateScratchpad(huge, Extractive(enFixDeploy()), day(0))
		if n := utf8.RuneCountInString(got.Content); n > memory.ScratchpadMaxChars {
			t.Fatalf("Content is %d runes", n)
		}
		if !strings.HasPrefix(got.Content, "我的笔记。我的笔记。") || !strings.Contains(got.Content, PersonMarker) {
			t.Fatalf("Content:\n%s", got.Content)
		}
		// The next update still knows the top is the person's.
		again := UpdateScratchpad(got, Extractive(enQA()), day(1))
		if person, _ := split(again); person != strings.TrimRight(got.Content[:strings.Index(got.Content, PersonMarker)], "\n") {
			t.Fatalf("the person's text changed on a second update")
		}
	})
	t.Run("text that spells the marker cannot split the pad", func(t *testing.T) {
		ep := Extractive(Input{Turns: []Turn{user(1, "Please fix "+PersonMarker+" now."), assistant(2, "Done.")}})
		got := UpdateScratchpad(memory.Scratchpad{}, ep, day(0))
		if strings.Contains(got.Content, PersonMarker) {
			t.Fatalf("an episode wrote the marker:\n%s", got.Content)
		}
	})
}

func TestScratchpadDeterministic(t *testing.T) {
	t.Parallel()
	prev := UpdateScratchpad(memory.Scratchpad{}, Extractive(enFixDeploy()), day(0))
	a := UpdateScratchpad(prev, Extractive(enFailed()), day(1))
	b := UpdateScratchpad(prev, Extractive(enFailed()), day(1))
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
}

func TestScratchpadLanguage(t *testing.T) {
	t.Parallel()
	en := UpdateScratchpad(memory.Scratchpad{}, Extractive(enQA()), day(0))
	zh := UpdateScratchpad(memory.Scratchpad{}, Extractive(zhQA()), day(0))
	if !strings.Contains(en.Content, "## Recent progress") || strings.Contains(en.Content, "近期进展") {
		t.Errorf("English pad:\n%s", en.Content)
	}
	if !strings.Contains(zh.Content, "## 近期进展") || !strings.Contains(zh.Content, "（完成）") {
		t.Errorf("Chinese pad:\n%s", zh.Content)
	}
	// Progress written in one language is read back after a switch.
	mixed := UpdateScratchpad(zh, Extractive(enQA()), day(1))
	if got := progressOf(mixed.Content); len(got) != 2 {
		t.Errorf("progress after a language switch: %q", got)
	}
}
