package migrate

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

func TestMyclaw(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t, "myclaw")
	huge := "用户的超长备注" + strings.Repeat("x", events.MaxMemoryContentBytes)
	appendFile(t, filepath.Join(dir, "MEMORY.md"), "- "+huge+"\n- 最后一条：喜欢安静的工作环境\n")
	m := migrate(t, Myclaw, dir)

	added := m.ofType(events.TypeMemoryAdded)
	byContent := map[string]*events.MemoryAdded{}
	for _, d := range added {
		a := d.(*events.MemoryAdded)
		byContent[a.Content] = a
		if a.Tier != events.TierCore || a.Subject != "user" || a.Importance != 1 || a.Confidence != 1 || a.SessionID != "" {
			t.Errorf("memory %q: tier %d, subject %q, importance %v, confidence %v, session %q; want 1, user, 1 (seed 001 §12.2), 1, none",
				a.Content, a.Tier, a.Subject, a.Importance, a.Confidence, a.SessionID)
		}
	}
	for _, c := range []struct {
		content, kind, category, predicate, topic string
	}{
		{"用户时区是 Asia/Shanghai", "fact", "identity", "note", "长期记忆"},
		{"用户名 yangyang，全栈工程师", "identity", "identity", "about", "身份"},
		{"住在杭州", "identity", "identity", "about", "身份"},
		{"回复偏好中文，技术讨论用英文术语", "preference", "config", "prefers", "Preferences"},
		{"Prefers Go and TypeScript over Python", "preference", "config", "prefers", "Preferences"},
		{"喜欢简洁的回答，不要客套", "preference", "config", "prefers", "Preferences"},
		{"不要在代码里使用 emoji", "rule", "config", "rule", "规则 / Rules"},
		{"Always run `go vet` before committing", "rule", "config", "rule", "规则 / Rules"},
		{"活跃项目: myclaw (Go), stellarlink (React)", "fact", "identity", "project", "项目"},
		{"主力: Go 1.24, React 19, PostgreSQL; 部署: Docker + GitHub Actions", "fact", "identity", "tech_stack", "技术栈"},
		{"女儿叫朵朵，今年五岁", "fact", "identity", "note", "Family"},
		{"ripgrep | 搜索", "fact", "identity", "note", "Family"},
		{"Night owl; usually codes after 22:00", "identity", "identity", "about", "About me"},
		{"最后一条：喜欢安静的工作环境", "identity", "identity", "about", "About me"},
	} {
		a, ok := byContent[c.content]
		if !ok {
			t.Errorf("no memory %q", c.content)
			continue
		}
		if got, want := [4]string{a.Kind, a.Category, a.Predicate, a.Topic}, [4]string{c.kind, c.category, c.predicate, c.topic}; got != want {
			t.Errorf("memory %q: kind, category, predicate, topic = %q, want %q", c.content, got, want)
		}
	}
	if got, want := len(added), 14; got != want {
		t.Errorf("%d memories, want %d: %v", got, want, keys(byContent))
	}

	daily := m.ofType(events.TypeDailySummarized)
	var dates []string
	for _, d := range daily {
		s := d.(*events.DailySummary)
		dates = append(dates, s.Date)
		if s.Channel != "myclaw" || s.Source != events.SourceMigration || s.RawTokens <= 0 {
			t.Errorf("daily %s: channel %q, source %q, raw tokens %d", s.Date, s.Channel, s.Source, s.RawTokens)
		}
		if s.Summary != strings.TrimSpace(s.Summary) || s.Summary == "" {
			t.Errorf("daily %s: summary not trimmed: %q", s.Date, s.Summary)
		}
	}
	if want := []string{"2025-05-31", "2025-06-01", "2025-06-02"}; !slices.Equal(dates, want) {
		t.Errorf("daily dates=%v, want %v", dates, want)
	}
	for i, e := range m.events {
		s, ok := m.data[i].(*events.DailySummary)
		if !ok {
			continue
		}
		if want, err := time.Parse(time.DateOnly, s.Date); err != nil || !e.Time().Equal(want) {
			t.Errorf("daily %s: time %v, want midnight UTC of its date", s.Date, e.Time())
		}
	}
	for _, e := range m.events {
		if e.Subject() != "" {
			t.Errorf("event %s has subject %q; migrated myclaw data names no session", e.ID(), e.Subject())
		}
	}

	// What was left out, and why.
	hugeLine := 0
	for i, l := range strings.Split(readFile(t, filepath.Join(dir, "MEMORY.md")), "\n") {
		if strings.Contains(l, huge) {
			hugeLine = i + 1
		}
	}
	problemFor(t, m.rep, fmt.Sprintf("MEMORY.md:%d: ", hugeLine), "bytes; a memory's limit is 4096")
	problemFor(t, m.rep, "MEMORY.md:35: ", "code block of 2 lines left out")
	problemFor(t, m.rep, "memory/2025-06-03.md: ", "empty file")
	problemFor(t, m.rep, "memory/2025-06-04.md: ", "empty file")
	problemFor(t, m.rep, "memory/notes.md: ", "not a dated log")
	problemFor(t, m.rep, "memory/2025-02-30.md: ", "not a real date")
	if got, want := m.rep.Skipped, 6; got != want {
		t.Errorf("Skipped=%d, want %d:\n%s", got, want, strings.Join(m.rep.Problems, "\n"))
	}
	if got, want := m.rep.Files, 7; got != want { // MEMORY.md and six dated logs, not README.md or notes.md
		t.Errorf("Files=%d, want %d", got, want)
	}
	checkProblemsShort(t, m.rep, huge)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A re-run makes the same events, so the stream drops them; an edited
// line makes a new one.
func TestMyclawDeterministic(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t, "myclaw")
	first, second := migrate(t, Myclaw, dir), migrate(t, Myclaw, dir)
	if !slices.Equal(ids(first), ids(second)) {
		t.Fatalf("two runs made different ids:\n%v\n%v", ids(first), ids(second))
	}
	for i := range first.events {
		if !reflect.DeepEqual(first.events[i], second.events[i]) {
			t.Fatalf("two runs made different events:\n%v\n%v", first.events[i], second.events[i])
		}
	}
	if n := len(ids(first)); len(uniq(ids(first))) != n {
		t.Fatalf("ids repeat within a run: %v", ids(first))
	}

	path := filepath.Join(dir, "MEMORY.md")
	mem := readFile(t, path)
	if err := os.WriteFile(path, []byte(strings.Replace(mem, "住在杭州", "住在上海", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	third := migrate(t, Myclaw, dir)
	if got, want := len(uniq(append(ids(first), ids(third)...))), len(ids(first))+1; got != want {
		t.Fatalf("after editing one line, %d distinct ids; want %d (one new)", got, want)
	}

	// Another user's identical workspace must not collide with this one's.
	var other []string
	if _, err := Myclaw(dir, Options{Namespace: "acme", User: "someone-else"}, func(e event.Event) error {
		other = append(other, e.ID())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range other {
		if slices.Contains(ids(third), id) {
			t.Fatalf("id %s is the same for two users", id)
		}
	}
}

func uniq(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

func TestMyclawLongLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; b.Len() < 3*events.MaxDailySummaryBytes; i++ {
		fmt.Fprintf(&b, "- %05d 讨论了记忆系统的压缩管线 and the weekly dedupe.\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory", "2025-06-05.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m := migrate(t, Myclaw, dir)
	daily := m.ofType(events.TypeDailySummarized)
	if len(daily) != 1 {
		t.Fatalf("%d daily summaries, want 1", len(daily))
	}
	s := daily[0].(*events.DailySummary)
	if len(s.Summary) > events.MaxDailySummaryBytes || len(s.Summary) < events.MaxDailySummaryBytes/2 {
		t.Fatalf("summary is %d bytes; want at most %d, and most of it", len(s.Summary), events.MaxDailySummaryBytes)
	}
	if !strings.HasSuffix(s.Summary, "dedupe.") {
		t.Fatalf("summary not cut at a line: ends %q", s.Summary[len(s.Summary)-20:])
	}
	if want := memory.EstimateTokens(strings.TrimSpace(b.String())); s.RawTokens != want {
		t.Fatalf("RawTokens=%d, want the whole file's %d", s.RawTokens, want)
	}
	problemFor(t, m.rep, "memory/2025-06-05.md: ", "summary cut from")
	if m.rep.Skipped != 0 {
		t.Fatalf("Skipped=%d, want 0: a cut summary is not a skip", m.rep.Skipped)
	}
}

func TestMyclawEmptyDir(t *testing.T) {
	t.Parallel()
	m := migrate(t, Myclaw, t.TempDir())
	if m.rep.Files != 0 || m.rep.Events != 0 || len(m.rep.Problems) != 0 {
		t.Fatalf("report=%+v, want nothing", m.rep)
	}
}

// The seed's layout keeps MEMORY.md in memory/ beside the logs.
func TestMyclawMemoryInSubdir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memory", "MEMORY.md"), []byte("## Rules\n- 回答要简短\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := migrate(t, Myclaw, dir)
	added := m.ofType(events.TypeMemoryAdded)
	if len(added) != 1 || added[0].(*events.MemoryAdded).Kind != events.KindRule {
		t.Fatalf("memories=%v, want one rule", added)
	}
	if len(m.rep.Problems) != 0 {
		t.Fatalf("problems: %v", m.rep.Problems)
	}
}

func TestParseMemoryMD(t *testing.T) {
	t.Parallel()
	type entry struct {
		line            int
		content, topic  string
		kind, predicate string
	}
	for _, c := range []struct {
		name, in string
		want     []entry
		problems []int
	}{
		{"lines before any heading", "hello\n\n  world  \n", []entry{{1, "hello", "", "fact", "note"}, {3, "world", "", "fact", "note"}}, nil},
		{"nested heading inherits its parent's class", "# Preferences\n## Food\n- 不吃香菜\n",
			[]entry{{3, "不吃香菜", "Food", "preference", "prefers"}}, nil},
		{"a sibling heading ends the class", "## 偏好\n- a\n## Pets\n- b\n",
			[]entry{{2, "a", "偏好", "preference", "prefers"}, {4, "b", "Pets", "fact", "note"}}, nil},
		{"markers", "- [ ] task\n+ plus\n12) twelve\n> - quoted\n• dot\n",
			[]entry{{1, "task", "", "fact", "note"}, {2, "plus", "", "fact", "note"}, {3, "twelve", "", "fact", "note"},
				{4, "quoted", "", "fact", "note"}, {5, "dot", "", "fact", "note"}}, nil},
		{"a hashtag is not a heading", "#golang tips\n", []entry{{1, "#golang tips", "", "fact", "note"}}, nil},
		{"closing hashes", "## Rules ##\nx\n", []entry{{2, "x", "Rules", "rule", "rule"}}, nil},
		{"front matter", "---\ntitle: memory\n---\n- a\n", []entry{{4, "a", "", "fact", "note"}}, nil},
		{"byte order mark and CRLF", "\uFEFF## About\r\n- 小明\r\n", []entry{{2, "小明", "About", "identity", "about"}}, nil},
		{"rules and comments", "***\n___\n<!-- x -->\n- a\n", []entry{{4, "a", "", "fact", "note"}}, nil},
		{"unclosed code block", "- a\n```\ncode\n", []entry{{1, "a", "", "fact", "note"}}, []int{2}},
		{"not UTF-8", "- a\n- \xff\xfe\n", []entry{{1, "a", "", "fact", "note"}}, []int{2}},
		{"table without a header rule", "| a | b |\n", []entry{{1, "a | b", "", "fact", "note"}}, nil},
		{"longest line", "- " + strings.Repeat("x", events.MaxMemoryContentBytes) + "\n",
			[]entry{{1, strings.Repeat("x", events.MaxMemoryContentBytes), "", "fact", "note"}}, nil},
		{"line too long", "- " + strings.Repeat("x", events.MaxMemoryContentBytes+1) + "\n", nil, []int{1}},
		{"heading too long for a topic", "## " + strings.Repeat("h", 300) + "\n- a\n", []entry{{2, "a", strings.Repeat("h", 256), "fact", "note"}}, nil},
		{"heading with a control character", "## a\x01b\n- a\n", []entry{{2, "a", "", "fact", "note"}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, problems, err := parseMemoryMD(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			var gotEntries []entry
			for _, e := range got {
				gotEntries = append(gotEntries, entry{e.line, e.content, e.topic, e.class.kind, e.class.predicate})
			}
			if !reflect.DeepEqual(gotEntries, c.want) {
				t.Fatalf("entries=%+v\nwant     %+v", gotEntries, c.want)
			}
			var lines []int
			for _, p := range problems {
				lines = append(lines, p.line)
			}
			if !slices.Equal(lines, c.problems) {
				t.Fatalf("problems at lines %v, want %v: %v", lines, c.problems, problems)
			}
		})
	}
}

// Migrated memories must add to each other: no predicate chosen for them
// may be one whose newer value replaces the older.
func TestPredicatesAreSets(t *testing.T) {
	t.Parallel()
	preds := []string{noteClass.predicate}
	for _, c := range headingClasses {
		preds = append(preds, c.class.predicate)
	}
	for _, k := range akitaKinds {
		preds = append(preds, k.predicate)
	}
	for _, p := range preds {
		if memory.SingleValued(p) {
			t.Errorf("predicate %q is single-valued: migrated memories with it would supersede each other", p)
		}
	}
}
