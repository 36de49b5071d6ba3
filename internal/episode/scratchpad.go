package episode

import (
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
)

// Who wrote a scratchpad.
const (
	ScratchpadFromEpisode = "episode"
	ScratchpadFromPerson  = "person"
)

// PersonMarker separates a person's own scratchpad text, above it, from
// the lists this package keeps, below it. It is an HTML comment, so it
// does not show when the markdown is rendered.
const PersonMarker = "<!-- engram: kept up to date from sessions below this line -->"

// Limits on the scratchpad's lists. Each stays far inside the
// scratchpad.updated event's bounds.
const (
	MaxActiveProjects = 5
	MaxOpenQuestions  = 5
	MaxNextSteps      = 5
	MaxProgress       = 3
	maxItemRunes      = 200
	maxProgressRunes  = 240
	maxProgressText   = maxProgressRunes - 30 // the date and the outcome before it
	maxProjectRunes   = 60
)

type headings struct {
	projects, focus, progress, questions, steps string
	outcomes                                    map[string]string
	zh                                          bool
}

// dated opens a progress entry: its day and, when known, how it went.
func (h headings) dated(day time.Time, outcome string) string {
	d := day.Format(time.DateOnly)
	o, ok := h.outcomes[outcome]
	switch {
	case !ok:
		return d + ": "
	case h.zh:
		return d + "（" + o + "）："
	}
	return d + " (" + o + "): "
}

// Seed 000 §4.3's sections, with the current focus given its own.
var (
	zhHeadings = headings{"当前项目", "当前关注", "近期进展", "未解决的问题", "下一步", map[string]string{
		memory.OutcomeCompleted: "完成", memory.OutcomePartial: "部分完成", memory.OutcomeFailed: "失败",
		memory.OutcomeAbandoned: "放弃", memory.OutcomeOngoing: "进行中",
	}, true}
	enHeadings = headings{"Active projects", "Current focus", "Recent progress", "Open questions", "Next steps", map[string]string{
		memory.OutcomeCompleted: "completed", memory.OutcomePartial: "partial", memory.OutcomeFailed: "failed",
		memory.OutcomeAbandoned: "abandoned", memory.OutcomeOngoing: "ongoing",
	}, false}
)

// update is what one episode brings to the scratchpad.
type update struct {
	projects, questions, steps []string
	focus, progress            string
}

// UpdateScratchpad folds an episode into a user's scratchpad, with no
// model. It is deterministic given now.
//
//   - Active projects: Projects(ep), then the previous ones; at most 5,
//     most recent first.
//   - Current focus: the episode's goal (the previous focus when it has
//     none).
//   - Open questions: a failed episode's goal with its last error
//     ("goal — error"); an ongoing episode whose summary ends in a question
//     (the user's question no one answered); then the previous ones, less
//     those a completed episode resolved (memory.Similarity to its goal ≥
//     0.5); at most 5.
//   - Next steps: the summary's sentences that plan ahead ("next", "will",
//     "TODO", "下一步", "接下来"…), then the previous ones; at most 5.
//   - Recent progress: "date (outcome): summary", dated by the episode's
//     end (else now), newest first, at most 3; a summary that opens with
//     the goal has the goal shortened, so how it went is not cut off. The
//     older entries are read back from the previous Content.
//
// Content is rendered as markdown under the seed's headings, in Chinese
// when the episode reads as Chinese (else as the previous scratchpad did,
// else English), within memory.ScratchpadMaxChars characters: the oldest
// progress is dropped first, then the oldest next steps, open questions
// and projects.
//
// A person may override the scratchpad. When prev.Source is "person",
// prev.Content is theirs: it is kept verbatim at the top (cut only if it
// alone passes the size limit), and the lists are rendered below
// PersonMarker. The result's Source is "episode", but any text above the
// marker is still the person's and is kept on every later update.
func UpdateScratchpad(prev memory.Scratchpad, ep memory.Episode, now time.Time) memory.Scratchpad {
	return apply(prev, ep, merged(prev, ep, extractiveUpdate(ep)), now)
}

// merged puts what an episode brings in front of the previous lists, less
// the questions a completed episode resolved.
func merged(prev memory.Scratchpad, ep memory.Episode, u update) update {
	oldQuestions := prev.OpenQuestions
	if ep.Outcome == memory.OutcomeCompleted && ep.Goal != "" {
		oldQuestions = slices.DeleteFunc(slices.Clone(oldQuestions), func(q string) bool {
			return memory.Similarity(q, ep.Goal) >= 0.5
		})
	}
	u.projects = slices.Concat(u.projects, prev.ActiveProjects)
	u.questions = slices.Concat(u.questions, oldQuestions)
	u.steps = slices.Concat(u.steps, prev.NextSteps)
	if u.focus == "" {
		u.focus = prev.CurrentFocus
	}
	return u
}

// extractiveUpdate reads what an episode brings, as UpdateScratchpad
// describes.
func extractiveUpdate(ep memory.Episode) update {
	u := update{projects: Projects(ep), focus: ep.Goal, progress: progressLine(ep)}
	ss := sentences(ep.Summary)
	switch ep.Outcome {
	case memory.OutcomeFailed:
		q := ep.Goal
		if q == "" && len(ss) > 0 {
			q = ss[0]
		}
		if e := lastError(ep.Actions); e != "" && q != "" {
			q = chars.ClipHead(q, maxItemRunes/2) + " — " + e
		}
		if q != "" {
			u.questions = append(u.questions, q)
		}
	case memory.OutcomeOngoing:
		if len(ss) > 0 && isQuestion(ss[len(ss)-1]) {
			u.questions = append(u.questions, ss[len(ss)-1])
		}
	}
	for _, x := range ss {
		if nextCues.in(x) && !strings.Contains(ep.Goal, x) && !slices.Contains(u.questions, x) {
			u.steps = append(u.steps, x)
		}
	}
	return u
}

// progressLine is what an episode did, for the progress list: its
// summary, but when the summary opens with the goal (as extractive ones
// do) the goal is shortened so how it went is not cut off.
func progressLine(ep memory.Episode) string {
	sum := clean(ep.Summary)
	goal := clean(ep.Goal)
	rest, ok := strings.CutPrefix(sum, goal)
	if !ok || goal == "" || strings.TrimSpace(rest) == "" {
		return fitSentences(sum, maxProgressText)
	}
	head := chars.ClipHead(goal, maxProgressText/3)
	return joinSentences([]string{head, fitSentences(rest, maxProgressText-runes(head)-2)})
}

func lastError(actions []memory.ActionNode) string {
	for i := len(actions) - 1; i >= 0; i-- {
		if a := actions[i]; a.Tool != "" && !a.Success && a.Error != "" {
			return a.Error
		}
	}
	return ""
}

// pad is a scratchpad being rendered.
type pad struct {
	person                               string
	projects, progress, questions, steps []string
	focus                                string
	h                                    headings
}

// apply renders the scratchpad that follows prev with u's lists (whole
// lists, not additions), the episode's projects always first.
func apply(prev memory.Scratchpad, ep memory.Episode, u update, now time.Time) memory.Scratchpad {
	person, ours := split(prev)
	p := pad{person: person}

	zh, ok := chinese(ep.Goal + " " + ep.Summary)
	if !ok {
		zh, _ = chinese(ours)
	}
	p.h = enHeadings
	if zh {
		p.h = zhHeadings
	}

	p.projects = items(maxProjectRunes, MaxActiveProjects, Projects(ep), u.projects)
	p.questions = items(maxItemRunes, MaxOpenQuestions, u.questions)
	p.steps = items(maxItemRunes, MaxNextSteps, u.steps)
	p.focus = item(u.focus, maxItemRunes)

	old := progressOf(ours)
	if entry := item(u.progress, maxProgressText); entry != "" {
		day := ep.Ended
		if day.IsZero() {
			day = now
		}
		entry = p.h.dated(day, ep.Outcome) + entry
		if len(old) == 0 || old[0] != entry {
			old = append([]string{entry}, old...)
		}
	}
	p.progress = items(maxProgressRunes, MaxProgress, old)

	content := p.fit()
	ns, user := prev.Namespace, prev.User
	if ns == "" {
		ns = ep.Namespace
	}
	if user == "" {
		user = ep.User
	}
	return memory.Scratchpad{
		Namespace:      ns,
		User:           user,
		Content:        content,
		ActiveProjects: p.projects,
		CurrentFocus:   p.focus,
		OpenQuestions:  p.questions,
		NextSteps:      p.steps,
		Updated:        now,
		Source:         ScratchpadFromEpisode,
	}
}

// split separates a scratchpad's Content into a person's text and the
// part this package wrote.
func split(prev memory.Scratchpad) (person, ours string) {
	if i := strings.LastIndex(prev.Content, PersonMarker); i >= 0 {
		return strings.TrimRight(prev.Content[:i], " \t\r\n"), prev.Content[i+len(PersonMarker):]
	}
	if prev.Source == ScratchpadFromPerson {
		return strings.TrimRight(prev.Content, " \t\r\n"), ""
	}
	return "", prev.Content
}

// progressOf reads the progress entries back from markdown this package
// rendered, under either language's heading.
func progressOf(md string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		if h, ok := strings.CutPrefix(line, "## "); ok {
			h = strings.TrimSpace(h)
			in = h == zhHeadings.progress || h == enHeadings.progress
			continue
		}
		if e, ok := strings.CutPrefix(line, "- "); ok && in {
			out = append(out, e)
		}
	}
	return out
}

// item makes a text fit to be one line of the list: one line, no
// comment opener (which could pass for PersonMarker), cut to n runes.
func item(s string, n int) string {
	s = strings.ReplaceAll(clean(s), "<!--", "<!-")
	return chars.ClipHead(s, n)
}

// items merges lists, first list first, once each (case-insensitively),
// at most limit.
func items(n, limit int, lists ...[]string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, l := range lists {
		for _, s := range l {
			s = item(s, n)
			if k := strings.ToLower(s); s != "" && !seen[k] && len(out) < limit {
				seen[k] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// fit renders the pad within memory.ScratchpadMaxChars, dropping the
// oldest entries first.
func (p *pad) fit() string {
	if p.person != "" {
		// The person's text is cut only when it alone leaves no room for
		// the marker.
		room := memory.ScratchpadMaxChars - runes(PersonMarker) - 3
		p.person = chars.ClipHead(p.person, max(0, room))
	}
	drops := []func() bool{
		func() bool { return dropLast(&p.progress, 1) },
		func() bool { return dropLast(&p.steps, 0) },
		func() bool { return dropLast(&p.questions, 0) },
		func() bool { return dropLast(&p.projects, 1) },
		func() bool { return dropLast(&p.progress, 0) },
		func() bool { return dropLast(&p.projects, 0) },
		func() bool {
			if p.focus == "" {
				return false
			}
			p.focus = ""
			return true
		},
	}
	for {
		md := p.render()
		if runes(md) <= memory.ScratchpadMaxChars {
			return md
		}
		dropped := false
		for _, d := range drops {
			if d() {
				dropped = true
				break
			}
		}
		if !dropped {
			return chars.ClipHead(md, memory.ScratchpadMaxChars)
		}
	}
}

func dropLast(l *[]string, keep int) bool {
	if len(*l) <= keep {
		return false
	}
	*l = (*l)[:len(*l)-1]
	return true
}

func (p *pad) render() string {
	var b strings.Builder
	if p.person != "" {
		b.WriteString(p.person)
		b.WriteString("\n\n")
		b.WriteString(PersonMarker)
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## " + title)
		for _, l := range lines {
			b.WriteString("\n- ")
			b.WriteString(l)
		}
	}
	section(p.h.projects, p.projects)
	if p.focus != "" {
		section(p.h.focus, []string{p.focus})
	}
	section(p.h.progress, p.progress)
	section(p.h.questions, p.questions)
	section(p.h.steps, p.steps)
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}
