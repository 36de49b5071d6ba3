package cards

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/maintain"
	"github.com/engramhq/engram/internal/memory"
)

// Seed 004's L1 layer beside MEMORY.md and USER.md (User.md): the agent's
// own identity card (ShiYi.md), the projects' rolling log (Project.md)
// and the hot insights (Insights.md). Like the other cards they are
// rendered from the read model, never the other way round; unlike them
// they are not read back: a person changes them through what they are
// rendered from (the identity confirmed, the memories, the episodes).

// Limits of the L1 cards.
const (
	// ProjectMDLines is where Project.md rolls up (seed 004 §6: "超过阈值
	// （如 >100 行）触发滚动总结归档"): past it the oldest progress lines
	// become one line a month.
	ProjectMDLines = 100
	// InsightsMDEntries is how many insights stay hot (seed 004 §6: "只保
	// 热点（如最近常用 10 条），其余下沉 DB").
	InsightsMDEntries = 10
	// TraitConfidence is the confidence a persona trait needs to be
	// promoted to the agent's card (seed 000 §7.4 step 6: 高置信度特质).
	TraitConfidence = 0.85
	// agentTraits bounds the traits on the agent's card.
	agentTraits = 15
)

// traitWords mark a preference about how the agent should behave: how it
// answers, in what tone, language or format.
var traitWords = []string{
	"answer", "reply", "replies", "respond", "response", "tone", "style", "emoji", "format", "formal", "casual",
	"concise", "brief", "verbose", "in english", "in chinese", "assistant", "call me",
	"回答", "回复", "答复", "语气", "风格", "口吻", "表情", "格式", "简洁", "啰嗦", "用中文", "用英文", "称呼我", "叫我",
}

var agentSubjects = []string{"assistant", "agent", "ai", "bot", "助手", "你"}

// PersonaTraits are the memories promoted to the agent's card (seed 000
// §7.4 step 6, PERSONA_TRAIT): active, confidence at least
// TraitConfidence, and about how the agent should behave — a rule, a
// memory about the agent, or a preference about its answers (their tone,
// language, length, format). Best first by maintain.Score at now.
func PersonaTraits(mems []memory.Memory, now time.Time) []memory.Memory {
	var out []memory.Memory
	for _, m := range mems {
		if !onCard(m, now) || m.Confidence < TraitConfidence {
			continue
		}
		low := strings.ToLower(m.Content)
		switch {
		case m.Kind == memory.KindRule,
			slices.Contains(agentSubjects, memory.NormalizeKey(m.Subject)),
			m.Kind == memory.KindPreference && slices.ContainsFunc(traitWords, func(w string) bool { return strings.Contains(low, w) }):
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b memory.Memory) int {
		return cmp.Or(cmp.Compare(maintain.Score(b, now), maintain.Score(a, now)), strings.Compare(a.ID, b.ID))
	})
	return out
}

// AgentMD renders the agent's identity card (seed 004's ShiYi.md: who the
// agent is to this user and its boundaries) from the identity the user
// confirmed (nil when none yet), then the persona traits promoted from
// the memories (PersonaTraits):
//
//	# Agent
//	- Name: 十一
//	- Tone: 直接、简洁
//
//	## Boundaries
//	- 不替用户做决定
//
//	## Learned traits
//	- Rule: answer in Chinese
//
// It returns "" when there is nothing to say.
func AgentMD(id *memory.Identity, mems []memory.Memory, now time.Time) string {
	traits := PersonaTraits(mems, now)
	var texts []string
	for _, t := range traits {
		texts = append(texts, t.Content)
	}
	var a memory.AgentIdentity
	if id != nil {
		a = id.Agent
		texts = append(texts, a.Name, a.Role, a.Tone)
		texts = append(texts, a.Boundaries...)
	}
	zh := chinese(texts)
	h := agentHeadings[zh]
	var b strings.Builder
	for _, f := range []struct{ label, v string }{{h.name, a.Name}, {h.role, a.Role}, {h.tone, a.Tone}} {
		if v := inline(f.v, EntryMaxChars); v != "" {
			b.WriteString("- " + f.label + v + "\n")
		}
	}
	for _, s := range []struct {
		title string
		items []string
	}{{h.boundaries, a.Boundaries}, {h.avoid, a.Avoid}, {h.priorities, a.Priorities}} {
		list(&b, s.title, s.items)
	}
	var learned []string
	for _, t := range traits[:min(len(traits), agentTraits)] {
		learned = append(learned, t.Content)
	}
	list(&b, h.traits, learned)
	if b.Len() == 0 {
		return ""
	}
	return "# " + h.title + "\n" + b.String()
}

// list writes a section of items, if it has any.
func list(b *strings.Builder, title string, items []string) {
	var lines []string
	for _, it := range items {
		if v := inline(it, EntryMaxChars); v != "" && !slices.Contains(lines, v) {
			lines = append(lines, v)
		}
	}
	if len(lines) == 0 {
		return
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString("## " + title + "\n")
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
}

var agentHeadings = map[bool]struct{ title, name, role, tone, boundaries, avoid, priorities, traits string }{
	false: {"Agent", "Name: ", "Role: ", "Tone: ", "Boundaries", "Never", "First", "Learned traits"},
	true:  {"智能体身份", "名字：", "角色：", "语气：", "边界", "禁区", "优先行为", "习得特质"},
}

// ProjectMD renders the projects' rolling log (seed 004's Project.md):
// the current focus and next steps from the scratchpad, each project's
// facts, then what happened, newest first, one line per episode (its
// date, outcome, projects and summary). Past ProjectMDLines lines it
// rolls up: the oldest progress lines are folded into one line per month
// (how many sessions, about which projects) under "Earlier", until it
// fits, so the card stays a summary however long the history.
func ProjectMD(mems []memory.Memory, pad *memory.Scratchpad, eps []memory.Episode, now time.Time) string {
	var texts []string
	for _, e := range eps {
		texts = append(texts, e.Summary)
	}
	for _, m := range mems {
		if m.Project != "" {
			texts = append(texts, m.Content)
		}
	}
	h := projectHeadings[chinese(texts)]
	var head strings.Builder
	if pad != nil {
		if f := inline(pad.CurrentFocus, EntryMaxChars); f != "" {
			head.WriteString(h.focus + f + "\n")
		}
		list(&head, h.next, pad.NextSteps)
	}
	byProject := map[string][]string{}
	var names []string
	for _, m := range mems {
		if m.Project == "" || !onCard(m, now) {
			continue
		}
		if _, ok := byProject[m.Project]; !ok {
			names = append(names, m.Project)
		}
		if len(byProject[m.Project]) < 5 {
			byProject[m.Project] = append(byProject[m.Project], m.Content)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		list(&head, n, byProject[n])
	}
	sorted := slices.Clone(eps)
	slices.SortStableFunc(sorted, func(a, b memory.Episode) int { return cmp.Or(b.Ended.Compare(a.Ended), strings.Compare(a.ID, b.ID)) })
	var progress []string
	for _, e := range sorted {
		line := e.Ended.Format(time.DateOnly) + " [" + e.Outcome + "] "
		if ps := episodeProjects(e); len(ps) > 0 {
			line += strings.Join(ps, ", ") + ": "
		}
		progress = append(progress, "- "+line+inline(e.Summary, EntryMaxChars))
	}
	headLines := strings.Count(head.String(), "\n")
	budget := ProjectMDLines - headLines - 4 // the title, the headings, their blank lines
	var earlier []string
	if len(progress) > budget {
		// Roll the oldest up by month until the rest fits beside them.
		keep := max(budget/2, 0)
		earlier = rollUp(sorted[keep:], h.sessions)
		for len(earlier) > 0 && keep+len(earlier) > budget && keep > 0 {
			keep--
			earlier = rollUp(sorted[keep:], h.sessions)
		}
		progress = progress[:keep]
		if len(earlier) > budget-keep {
			earlier = earlier[:max(budget-keep, 0)]
		}
	}
	var b strings.Builder
	b.WriteString("# " + h.title + "\n")
	if head.Len() > 0 {
		b.WriteString("\n" + head.String())
	}
	if len(progress) > 0 {
		b.WriteString("\n## " + h.log + "\n" + strings.Join(progress, "\n") + "\n")
	}
	if len(earlier) > 0 {
		b.WriteString("\n## " + h.earlier + "\n" + strings.Join(earlier, "\n") + "\n")
	}
	if head.Len() == 0 && len(progress) == 0 && len(earlier) == 0 {
		return ""
	}
	return b.String()
}

// rollUp folds episodes (newest first) into one line per month, newest
// month first: how many sessions, and the projects they were about.
func rollUp(eps []memory.Episode, sessions string) []string {
	type month struct {
		n        int
		projects []string
	}
	byMonth := map[string]*month{}
	var order []string
	for _, e := range eps {
		k := e.Ended.Format("2006-01")
		m, ok := byMonth[k]
		if !ok {
			m = &month{}
			byMonth[k] = m
			order = append(order, k)
		}
		m.n++
		for _, p := range episodeProjects(e) {
			if !slices.Contains(m.projects, p) && len(m.projects) < 5 {
				m.projects = append(m.projects, p)
			}
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		line := fmt.Sprintf("- %s: %d %s", k, byMonth[k].n, sessions)
		if ps := byMonth[k].projects; len(ps) > 0 {
			line += " (" + inline(strings.Join(ps, ", "), EntryMaxChars) + ")"
		}
		out = append(out, line)
	}
	return out
}

// episodeProjects are the projects an episode names (its entities marked
// as projects).
func episodeProjects(e memory.Episode) []string {
	var out []string
	for _, en := range e.Entities {
		if p, ok := strings.CutPrefix(en, "project:"); ok && p != "" {
			out = append(out, p)
		}
	}
	return out
}

var projectHeadings = map[bool]struct{ title, focus, next, log, earlier, sessions string }{
	false: {"Projects", "Current focus: ", "Next steps", "Progress", "Earlier", "sessions"},
	true:  {"项目", "当前重点：", "下一步", "进展", "更早", "次会话"},
}

// InsightsMD renders the hot insights (seed 004's Insights.md): the
// lessons, skills and solutions the user's agent used most lately — at
// most InsightsMDEntries, by how often and how lately they were handed
// to the agent, then by score; the rest stay in the store, found by
// search.
func InsightsMD(mems []memory.Memory, now time.Time) string {
	var hot []memory.Memory
	for _, m := range mems {
		if !onCard(m, now) {
			continue
		}
		if m.Kind == memory.KindSkill || m.Kind == memory.KindError || m.Category == memory.CategorySolution {
			hot = append(hot, m)
		}
	}
	slices.SortStableFunc(hot, func(a, b memory.Memory) int {
		return cmp.Or(cmp.Compare(b.AccessCount, a.AccessCount), b.LastAccessed.Compare(a.LastAccessed),
			cmp.Compare(maintain.Score(b, now), maintain.Score(a, now)), strings.Compare(a.ID, b.ID))
	})
	var texts []string
	for _, m := range hot {
		texts = append(texts, m.Content)
	}
	title := map[bool]string{false: "Insights", true: "经验"}[chinese(texts)]
	var b strings.Builder
	seen := map[string]bool{}
	for _, m := range hot {
		if len(seen) == InsightsMDEntries {
			break
		}
		if v := inline(m.Content, EntryMaxChars); v != "" && !seen[v] {
			seen[v] = true
			b.WriteString("- " + v + "\n")
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "# " + title + "\n" + b.String()
}
