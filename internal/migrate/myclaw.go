package migrate

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// What myclaw's migration writes that no record says.
const (
	myclawChannel = "myclaw"
	myclawSubject = "user"
	// Seed 001 §12.2 imports every MEMORY.md line at 1.0: what the user
	// kept by hand is identity-grade (§6.4's scale: identity 1.0,
	// technical decisions 0.8).
	myclawImportance = 1.0
)

// Myclaw migrates a myclaw workspace (seed 001 §12.2): MEMORY.md into the
// core profile, dated logs into daily summaries. See the package doc for
// the mapping. It returns an error only when dir cannot be read or emit
// fails; everything else is a problem in the report.
func Myclaw(dir string, opt Options, emit func(event.Event) error) (*Report, error) {
	r, err := newRun("myclaw", dir, opt, emit)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"MEMORY.md", filepath.Join("memory", "MEMORY.md")} {
		if err := r.memoryMD(filepath.Join(dir, name)); err != nil {
			return r.rep, err
		}
	}
	top, err := os.ReadDir(dir)
	if err != nil {
		return r.rep, fmt.Errorf("migrate myclaw: %w", err)
	}
	var logs []string
	for _, e := range top {
		if !e.IsDir() && datedName.MatchString(e.Name()) {
			logs = append(logs, filepath.Join(dir, e.Name()))
		}
	}
	sub, err := os.ReadDir(filepath.Join(dir, "memory"))
	if err != nil && !os.IsNotExist(err) {
		return r.rep, fmt.Errorf("migrate myclaw: %w", err)
	}
	for _, e := range sub {
		name := e.Name()
		switch {
		case e.IsDir() || !strings.HasSuffix(name, ".md") || name == "MEMORY.md":
		case datedName.MatchString(name):
			logs = append(logs, filepath.Join(dir, "memory", name))
		default:
			r.skip(r.rel(filepath.Join(dir, "memory", name)), 0, "not a dated log (YYYY-MM-DD.md)")
		}
	}
	for _, path := range logs {
		if err := r.dailyLog(path); err != nil {
			return r.rep, err
		}
	}
	return r.rep, nil
}

// memoryMD turns each line of a MEMORY.md into a core-profile memory.
func (r *run) memoryMD(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	file := r.rel(path)
	if err != nil {
		r.skip(file, 0, "cannot read: %v", err)
		return nil
	}
	defer quiet.Close(f) // only read
	info, err := f.Stat()
	if err != nil {
		r.skip(file, 0, "cannot read: %v", err)
		return nil
	}
	r.rep.Files++
	entries, problems, err := parseMemoryMD(f)
	if err != nil {
		r.skip(file, 0, "cannot read: %v", err)
		return nil
	}
	for _, p := range problems {
		r.skip(file, p.line, "%s", p.what)
	}
	t := modTime(info)
	for _, e := range entries {
		data := events.MemoryAdded{
			Tier:       events.TierCore,
			Kind:       e.class.kind,
			Category:   e.class.category,
			Subject:    myclawSubject,
			Predicate:  e.class.predicate,
			Content:    e.content,
			Topic:      e.topic,
			Importance: myclawImportance,
			Confidence: 1,
		}
		id := r.id(file, fmt.Sprint(e.line), e.topic+"\x00"+e.content)
		if err := r.publish(file, e.line, events.TypeMemoryAdded, id, t, data); err != nil {
			return err
		}
	}
	return nil
}

// datedName is a daily log's file name.
var datedName = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}\.md$`)

// dailyLog turns one dated log into a daily summary.
func (r *run) dailyLog(path string) error {
	file := r.rel(path)
	b, err := os.ReadFile(path)
	if err != nil {
		r.skip(file, 0, "cannot read: %v", err)
		return nil
	}
	r.rep.Files++
	date := strings.TrimSuffix(filepath.Base(path), ".md")
	day, err := time.Parse(time.DateOnly, date)
	if err != nil {
		r.skip(file, 0, "%s is not a real date", date)
		return nil //nolint:nilerr // the file is skipped and reported, not a failure of the run
	}
	if !utf8.Valid(b) {
		r.skip(file, 0, "not valid UTF-8")
		return nil
	}
	content := strings.TrimSpace(string(b))
	if content == "" {
		r.skip(file, 0, "empty file")
		return nil
	}
	summary := content
	if len(summary) > events.MaxDailySummaryBytes {
		summary = cutSummary(summary, events.MaxDailySummaryBytes)
		r.problem(file, 0, "summary cut from %d to %d bytes (the limit is %d)", len(content), len(summary), events.MaxDailySummaryBytes)
	}
	data := events.DailySummary{
		Date:      date,
		Channel:   myclawChannel,
		Summary:   summary,
		RawTokens: memory.EstimateTokens(content),
		Source:    events.SourceMigration,
	}
	return r.publish(file, 0, events.TypeDailySummarized, r.id(file, date, content), day, data)
}

// cutSummary cuts s to at most limit bytes, at the last line break when
// that keeps at least half, else at a character boundary.
func cutSummary(s string, limit int) string {
	s = chars.CutBytes(s, limit)
	if i := strings.LastIndexByte(s, '\n'); i >= limit/2 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// headingClass is what a MEMORY.md heading says of the lines under it.
type headingClass struct {
	kind, category, predicate string
}

// noteClass is the class of a line under no known heading.
var noteClass = headingClass{events.KindFact, events.CategoryIdentity, "note"}

// headingClasses are tried in order on the lower-cased heading; the first
// with a keyword in it wins, so "Project preferences" is a preference.
var headingClasses = []struct {
	keywords []string
	class    headingClass
}{
	{[]string{"规则", "约束", "指令", "要求", "规范", "rule", "instruction", "guideline", "constraint"},
		headingClass{events.KindRule, events.CategoryConfig, "rule"}},
	{[]string{"偏好", "喜好", "习惯", "preference", "likes", "habit"},
		headingClass{events.KindPreference, events.CategoryConfig, "prefers"}},
	{[]string{"项目", "project"},
		headingClass{events.KindFact, events.CategoryIdentity, "project"}},
	{[]string{"技术栈", "tech stack", "stack"},
		headingClass{events.KindFact, events.CategoryIdentity, "tech_stack"}},
	{[]string{"身份", "关于", "个人信息", "基本信息", "用户信息", "about", "identity", "profile", "who i am", "personal"},
		headingClass{events.KindIdentity, events.CategoryIdentity, "about"}},
}

func classify(heading string) (headingClass, bool) {
	h := strings.ToLower(heading)
	for _, c := range headingClasses {
		for _, k := range c.keywords {
			if strings.Contains(h, k) {
				return c.class, true
			}
		}
	}
	return headingClass{}, false
}

// mdEntry is one memory read from a MEMORY.md.
type mdEntry struct {
	line    int
	content string // trimmed, one line, valid UTF-8, within events.MaxMemoryContentBytes
	topic   string // the innermost heading, when it is a valid identifier
	class   headingClass

	tableRow bool // a table's row, which turns out to be its header if a rule follows
}

// mdProblem is a line of a MEMORY.md left out, and why.
type mdProblem struct {
	line int
	what string
}

var (
	atxHeading   = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	thematic     = regexp.MustCompile(`^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:=[ \t]*){3,})$`)
	tableRule    = regexp.MustCompile(`^\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?$`)
	htmlComment  = regexp.MustCompile(`^<!--.*-->$`)
	fence        = regexp.MustCompile("^ {0,3}(```|~~~)")
	listMarker   = regexp.MustCompile(`^(?:[-*+•]|[0-9]{1,9}[.)])[ \t]+`)
	taskMarker   = regexp.MustCompile(`^\[[ xX]\][ \t]+`)
	quoteMarker  = regexp.MustCompile(`^>[ \t]?`)
	frontMatter  = []byte("---")
	maxMDContent = events.MaxMemoryContentBytes
)

// parseMemoryMD reads a MEMORY.md: every line of text is a memory, classed
// by the headings above it. Lines that cannot be memories (too long, not
// UTF-8, in a code block) are problems; only a read error is an error.
func parseMemoryMD(rd io.Reader) ([]mdEntry, []mdProblem, error) {
	type heading struct {
		level int
		text  string
	}
	var (
		entries  []mdEntry
		problems []mdProblem
		stack    []heading
		inFront  bool
		fenceTok string
		fenceAt  int
	)
	err := eachLine(rd, func(l line) error {
		if l.tooLong > 0 {
			problems = append(problems, mdProblem{l.n, fmt.Sprintf("line is %d bytes; a memory's limit is %d", l.tooLong, maxMDContent)})
			return nil
		}
		text := l.text
		if l.n == 1 {
			text = bytes.TrimPrefix(text, []byte("\uFEFF")) // a byte order mark
			if bytes.Equal(bytes.TrimSpace(text), frontMatter) {
				inFront = true
				return nil
			}
		}
		if inFront {
			if bytes.Equal(bytes.TrimSpace(text), frontMatter) {
				inFront = false
			}
			return nil
		}
		if !utf8.Valid(text) {
			problems = append(problems, mdProblem{l.n, "not valid UTF-8"})
			return nil
		}
		s := string(text)
		if fenceTok != "" {
			if strings.HasPrefix(strings.TrimLeft(s, " "), fenceTok) {
				problems = append(problems, mdProblem{fenceAt, fmt.Sprintf("code block of %d lines left out", l.n-fenceAt-1)})
				fenceTok = ""
			}
			return nil
		}
		if m := fence.FindStringSubmatch(s); m != nil {
			fenceTok, fenceAt = m[1], l.n
			return nil
		}
		if m := atxHeading.FindStringSubmatch(s); m != nil {
			level := len(m[1])
			for len(stack) > 0 && stack[len(stack)-1].level >= level {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, heading{level, strings.TrimSpace(m[2])})
			return nil
		}
		trimmed := strings.TrimSpace(s)
		if tableRule.MatchString(trimmed) && strings.Contains(trimmed, "|") {
			// The line above was the table's header, not a memory.
			if n := len(entries); n > 0 && entries[n-1].line == l.n-1 && entries[n-1].tableRow {
				entries = entries[:n-1]
			}
			return nil
		}
		if trimmed == "" || thematic.MatchString(s) || htmlComment.MatchString(trimmed) {
			return nil
		}
		row := isTableRow(trimmed)
		content := stripMarkers(trimmed)
		if row {
			content = tableCells(trimmed)
		}
		if content == "" {
			return nil
		}
		if len(content) > maxMDContent {
			problems = append(problems, mdProblem{l.n, fmt.Sprintf("line is %d bytes; a memory's limit is %d", len(content), maxMDContent)})
			return nil
		}
		e := mdEntry{line: l.n, content: content, class: noteClass, tableRow: row}
		for i := len(stack) - 1; i >= 0; i-- {
			if c, ok := classify(stack[i].text); ok {
				e.class = c
				break
			}
		}
		if len(stack) > 0 {
			if t := chars.CutBytes(stack[len(stack)-1].text, events.MaxIDBytes); validID(t, events.MaxIDBytes) {
				e.topic = t
			}
		}
		entries = append(entries, e)
		return nil
	})
	if err == nil && fenceTok != "" {
		problems = append(problems, mdProblem{fenceAt, "code block never closed; the rest of the file left out"})
	}
	return entries, problems, err
}

func isTableRow(s string) bool {
	return len(s) >= 2 && strings.HasPrefix(s, "|") && strings.HasSuffix(s, "|")
}

// tableCells writes a table row as its cells, " | " between them.
func tableCells(s string) string {
	cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, "|"), "|"), "|")
	var out []string
	for _, c := range cells {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return strings.Join(out, " | ")
}

// stripMarkers takes list, task and quote markers off a line.
func stripMarkers(s string) string {
	for {
		before := s
		for _, re := range []*regexp.Regexp{quoteMarker, listMarker, taskMarker} {
			if loc := re.FindStringIndex(s); loc != nil {
				s = strings.TrimSpace(s[loc[1]:])
			}
		}
		if s == before {
			return s
		}
	}
}
