package episode

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/engramhq/engram/internal/memory"
)

// Retention (raw turns aging out) takes the turns' words with them: what
// engram wrote word for word from them — an extractive episode's
// sentences, the scratchpad's lines copied from it, a day's log — loses
// those words, and keeps what it says of its own (the outcome, the tools,
// the facts learned). A model's summary rarely repeats a sentence, and so
// mostly stays.

// minVerbatimRunes is the shortest piece that counts as said word for
// word: shorter ones ("Done.", "好的。") are said by everyone.
const minVerbatimRunes = 8

// Corpus is the text of turns about to expire, as Verbatim reads it.
type Corpus struct{ text string }

// NewCorpus gathers the turns' text: their content, tool inputs and
// results.
func NewCorpus(texts []string) Corpus {
	var b strings.Builder
	for _, t := range texts {
		b.WriteString(clean(t))
		b.WriteByte(0)
	}
	return Corpus{text: b.String()}
}

// says reports whether the corpus holds s word for word.
func (c Corpus) says(s string) bool {
	s = strings.TrimRight(clean(s), "。！？!?.…;；,，:： ")
	return runes(s) >= minVerbatimRunes && strings.Contains(c.text, s)
}

// Scrub removes from text every sentence the corpus holds word for word,
// and reports whether it removed any. List items left empty go, and so
// do blank lines left behind.
func (c Corpus) Scrub(text string) (string, bool) {
	changed := false
	for _, s := range sentences(text) {
		// A sentence may carry engram's own label before the words it
		// copied: "[2026-01-02 completed] …", "goal — …", "Decision: …".
		for _, cand := range []string{s, after(s, "] "), after(s, " — "), after(s, ": "), after(s, "："), afterStamp(s)} {
			if cand == "" || !c.says(cand) || !strings.Contains(text, cand) {
				continue
			}
			text = strings.ReplaceAll(text, cand, "")
			changed = true
			break
		}
	}
	if !changed {
		return text, false
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(spaces.ReplaceAllString(l, " "), " ")
		bare := strings.Trim(listMarker.ReplaceAllString(strings.TrimSpace(l), ""), " —-:：")
		if bare == "" {
			continue // nothing left of it, or an empty list item
		}
		lines = append(lines, l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n")), true
}

var spaces = regexp.MustCompile(`[ \t]{2,}`)

// afterStamp is what follows a leading time or date ("09:30 …", a day's
// log line), or "".
func afterStamp(s string) string {
	head, rest, ok := strings.Cut(s, " ")
	if !ok || hasLetter(head) {
		return ""
	}
	return rest
}

// after is what follows the first sep in s, or "".
func after(s, sep string) string {
	_, rest, ok := strings.Cut(s, sep)
	if !ok {
		return ""
	}
	return rest
}

// verbatim reports whether an action's text (its parameters, result,
// error) repeats the corpus: any of its pieces between the cuts and
// "key=" labels engram writes is said there word for word.
func (c Corpus) verbatim(s string) bool {
	for _, piece := range strings.FieldsFunc(s, func(r rune) bool { return r == '…' || r == '\n' }) {
		for _, part := range strings.Split(piece, ", ") {
			if _, v, ok := strings.Cut(part, "="); ok && !strings.Contains(v, " ") && runes(v) < minVerbatimRunes {
				continue
			} else if ok {
				part = v
			}
			if c.says(part) {
				return true
			}
		}
	}
	return false
}

// ScrubEpisode is an episode without the corpus's words: its summary and
// goal lose the sentences the corpus holds (a summary left with nothing
// says its length, outcome and tools), and an action's parameters,
// result, error or decision that repeat it are cleared (a decision
// cleared takes its node with it). Tools, entities, the outcome and the
// turns stay. It reports whether anything changed.
func (c Corpus) ScrubEpisode(ep memory.Episode) (memory.Episode, bool) {
	summary, s1 := c.Scrub(ep.Summary)
	goal, s2 := c.Scrub(ep.Goal)
	changed := s1 || s2
	var actions []memory.ActionNode
	for _, a := range ep.Actions {
		for _, f := range []*string{&a.Params, &a.Result, &a.Error, &a.Decision} {
			if *f != "" && c.verbatim(*f) {
				*f, changed = "", true
			}
		}
		if a.Tool == "" && a.Decision == "" {
			continue
		}
		actions = append(actions, a)
	}
	if !changed {
		return ep, false
	}
	if strings.TrimSpace(summary) == "" {
		summary = fmt.Sprintf("(%d turns, %s", len(ep.Turns), ep.Outcome)
		if len(ep.Tools) > 0 {
			summary += "; tools: " + strings.Join(ep.Tools, ", ")
		}
		summary += ")"
	}
	ep.Summary, ep.Goal, ep.Actions = summary, goal, actions
	return ep, true
}

// ScrubScratchpad is a scratchpad without the corpus's words, in its
// markdown and its lists; an item left empty goes.
func (c Corpus) ScrubScratchpad(p memory.Scratchpad) (memory.Scratchpad, bool) {
	content, changed := c.Scrub(p.Content)
	focus, ch := c.Scrub(p.CurrentFocus)
	changed = changed || ch
	list := func(items []string) []string {
		var out []string
		for _, it := range items {
			s, ch := c.Scrub(it)
			changed = changed || ch
			if strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
		return out
	}
	questions, steps := list(p.OpenQuestions), list(p.NextSteps)
	if !changed {
		return p, false
	}
	p.Content, p.CurrentFocus, p.OpenQuestions, p.NextSteps = content, focus, questions, steps
	return p, true
}
