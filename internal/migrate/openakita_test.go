package migrate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
)

func TestOpenAkita(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t, "openakita")
	// A message over the event limit, made here rather than kept in the
	// repository.
	hugeContent := "这是一条超长的消息" + strings.Repeat("y", events.DefaultMaxEventBytes)
	huge, err := json.Marshal(map[string]string{"role": "user", "content": hugeContent, "timestamp": "2026-01-31T09:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(dir, "conversation_history", "telegram_42.jsonl"),
		string(huge)+"\n"+`{"role": "user", "content": "after the huge one", "timestamp": "2026-01-31T09:00:01Z"}`+"\n")
	m := migrate(t, OpenAkita, dir)

	// memories.json
	type mem struct {
		tier                               int
		kind, category, subject, predicate string
		importance                         float64
		time                               string
	}
	got := map[string]mem{}
	for i, e := range m.events {
		if a, ok := m.data[i].(*events.MemoryAdded); ok {
			if a.Confidence != 1 {
				t.Errorf("memory %q: confidence %v, want 1", a.Content, a.Confidence)
			}
			got[a.Content] = mem{a.Tier, a.Kind, a.Category, a.Subject, a.Predicate, a.Importance, e.Time().Format(time.RFC3339)}
		}
	}
	mtime := fileTime(t, filepath.Join(dir, "memories.json"))
	want := map[string]mem{
		`用户的代码目录在 D:\code`:                                               {1, "fact", "identity", "user", "note", 0.9, "2026-01-20T10:15:30Z"},
		"User prefers Python for scripting and Go for services":          {2, "preference", "decision", "user", "prefers", 0.7, "2026-01-21T00:00:00Z"},
		"用 pytest 测试比 unittest 更可靠，fixture 复用方便":                         {2, "skill", "event", "user", "skill", 0.6, "2026-01-28T21:40:05Z"},
		"Deleting files directly without a backup caused data loss once": {2, "error", "temp", "user", "lesson", 0.4, "2026-01-30T23:59:59Z"},
		"不要有太强的风险意识":                                                     {1, "rule", "config", "user", "rule", 0.5, "2026-01-15T09:00:00Z"},
		"当前项目是 myagent":                                                  {2, "context", "decision", "user", "context", 0.5, mtime},
		"Python 版本是 3.12":                                                {2, "fact", "decision", "Python", "version", 0.5, "2026-01-31T22:53:20Z"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("memories:\n%+v\nwant\n%+v", got, want)
	}

	// conversation_history
	type turn struct {
		session string
		index   int
		role    string
		content string
		calls   int
		results int
		time    string
	}
	var turns []turn
	for i, e := range m.events {
		tr, ok := m.data[i].(*events.TurnRecorded)
		if !ok {
			continue
		}
		if got, want := e.Subject(), tr.SessionID; got != want {
			t.Errorf("turn %s/%d: subject %q, want the session", tr.SessionID, tr.TurnIndex, got)
		}
		turns = append(turns, turn{tr.SessionID, tr.TurnIndex, tr.Role, tr.Content, len(tr.ToolCalls), len(tr.ToolResults), e.Time().Format(time.RFC3339Nano)})
	}
	wantTurns := []turn{
		{"cli_20260130", 0, "user", "帮我看看为什么 gateway 重连时会丢消息", 0, 0, "2026-01-30T10:00:00Z"},
		{"cli_20260130", 1, "assistant", "我先看一下 processLoop。", 1, 0, "2026-01-30T10:00:05.12Z"},
		{"cli_20260130", 2, "user", "", 0, 1, "2026-01-30T10:00:06Z"},
		{"cli_20260130", 3, "assistant", "processLoop ignores ctx cancellation; messages in flight are dropped on reconnect.", 0, 0, "2026-01-30T10:00:20Z"},
		// Line 5, broken, keeps index 4 for when it is fixed.
		{"cli_20260130", 5, "assistant", "", 1, 0, "2026-01-30T10:01:40Z"},
		{"cli_20260130", 6, "tool", "", 0, 1, "2026-01-30T10:01:41Z"},
		{"cli-session-7", 0, "assistant", "Fixed: processLoop now drains in-flight messages before it returns.", 0, 0, "2026-01-30T10:01:41Z"},
		{"telegram_42", 0, "user", "Remind me: I prefer green tea, no sugar.", 0, 0, "2026-01-31T08:00:00Z"},
		{"telegram_42", 1, "assistant", "记住了：绿茶，不加糖。", 0, 0, "2026-01-31T08:00:02Z"},
		{"telegram_42", 3, "user", "after the huge one", 0, 0, "2026-01-31T09:00:01Z"},
	}
	if !reflect.DeepEqual(turns, wantTurns) {
		t.Errorf("turns:\n%+v\nwant\n%+v", turns, wantTurns)
	}

	// Tool calls in both shapes keep their input as JSON.
	for _, d := range m.ofType(events.TypeTurnRecorded) {
		for _, c := range d.(*events.TurnRecorded).ToolCalls {
			var input map[string]any
			if err := json.Unmarshal(c.Input, &input); err != nil || input == nil {
				t.Errorf("tool call %s: input %s is not an object", c.Name, c.Input)
			}
		}
	}
	if tr := m.ofType(events.TypeTurnRecorded)[7].(*events.TurnRecorded); tr.Channel != "telegram" {
		t.Errorf("channel=%q, want the record's", tr.Channel)
	}

	problemFor(t, m.rep, "conversation_history/cli_20260130.jsonl:5: ", "invalid JSON")
	problemFor(t, m.rep, "conversation_history/cli_20260130.jsonl:9: ", `unknown role "narrator"`)
	problemFor(t, m.rep, "conversation_history/cli_20260130.jsonl:11: ", "empty message")
	problemFor(t, m.rep, "conversation_history/empty.jsonl: ", "empty file")
	problemFor(t, m.rep, "conversation_history/telegram_42.jsonl:3: ", "event would be")
	problemFor(t, m.rep, "memories.json:52: ", `created_at "yesterday" not understood`)
	problemFor(t, m.rep, "memories.json:58: ", `unknown type "OPINION"`)
	problemFor(t, m.rep, "memories.json:65: ", "importance 7 is not from 0 to 1")
	problemFor(t, m.rep, "memories.json:72: ", "no content")
	problemFor(t, m.rep, "memories.json:78: ", "superseded by")
	problemFor(t, m.rep, "memories.json:97: ", "a string, not an object")
	if got, want := m.rep.Skipped, 9; got != want {
		t.Errorf("Skipped=%d, want %d:\n%s", got, want, strings.Join(m.rep.Problems, "\n"))
	}
	if got, want := m.rep.Files, 4; got != want {
		t.Errorf("Files=%d, want %d", got, want)
	}
	checkProblemsShort(t, m.rep, hugeContent)
}

func fileTime(t *testing.T, path string) string {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime().UTC().Format(time.RFC3339)
}

func TestOpenAkitaDeterministic(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "openakita")
	first, second := migrate(t, OpenAkita, dir), migrate(t, OpenAkita, dir)
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
}

// OpenAkita's own layout keeps both under data/memory, and memories.json
// may be a bare array.
func TestOpenAkitaDataLayout(t *testing.T) {
	t.Parallel()
	m := migrate(t, OpenAkita, filepath.Join("testdata", "openakita_data"))
	var kinds []string
	for _, d := range m.ofType(events.TypeMemoryAdded) {
		a := d.(*events.MemoryAdded)
		kinds = append(kinds, a.Kind+"/"+a.Category)
	}
	if want := []string{"fact/identity", "preference/event"}; !slices.Equal(kinds, want) {
		t.Fatalf("memories=%v, want %v", kinds, want)
	}
	if got := len(m.ofType(events.TypeTurnRecorded)); got != 1 {
		t.Fatalf("%d turns, want 1", got)
	}
	if len(m.rep.Problems) != 0 {
		t.Fatalf("problems: %v", m.rep.Problems)
	}
}

func TestMemoriesJSONBroken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, body string
		events     int
		problem    string
	}{
		{"broken in the middle", "[\n" + `{"content":"a","type":"FACT"},` + "\n" + `{"content":"b",` + "\n" + `"type": FACT}` + "\n]",
			1, "memories.json:4: invalid JSON"},
		{"cut short", `[{"content":"a"},` + "\n" + `{"content":"b"`, 1, "memories.json:2: invalid JSON"},
		{"an object without memories", `{"items":[{"content":"a"}]}`, 0, `memories.json: neither an array nor an object with "memories"`},
		{"memories after other keys", `{"version":2,"meta":{"a":[1]},"memories":[{"content":"a"}]}`, 1, ""},
		{"memories not a list", `{"memories":{"content":"a"}}`, 0, `memories.json:1: "memories" is not an array`},
		{"a number", `42`, 0, `memories.json: neither an array nor an object with "memories"`},
		{"empty", " \n", 0, "memories.json: empty file"},
		{"a field of the wrong type", `[{"content":"a","importance_score":"high"}]`, 0, `memories.json:1: not a memory record: "importance_score" is a string`},
		{"content too long", `[{"content":"` + strings.Repeat("长", 2000) + `"}]`, 0, "memories.json:1: content is 6000 bytes; a memory's limit is 4096"},
		{"unknown priority", `[{"content":"a","priority":"FOREVER"}]`, 0, `memories.json:1: unknown priority "FOREVER"`},
		{"subject with a newline", `[{"content":"a","subject":"a\nb"}]`, 0, "memories.json:1: not a valid memory.added event: data.subject"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "memories.json"), []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			m := migrate(t, OpenAkita, dir)
			if got := len(m.events); got != c.events {
				t.Fatalf("%d events, want %d", got, c.events)
			}
			if c.problem == "" {
				if len(m.rep.Problems) != 0 {
					t.Fatalf("problems: %v", m.rep.Problems)
				}
				return
			}
			problemFor(t, m.rep, c.problem, "")
		})
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw  string
		want string // "" for not understood
	}{
		{`"2026-01-30T10:00:00Z"`, "2026-01-30T10:00:00Z"},
		{`"2026-01-30T18:00:00+08:00"`, "2026-01-30T10:00:00Z"},
		{`"2026-01-30T10:00:00.123456"`, "2026-01-30T10:00:00.123456Z"},
		{`"2026-01-30 10:00:00"`, "2026-01-30T10:00:00Z"},
		{`1769767200`, "2026-01-30T10:00:00Z"},
		{`1769767200500`, "2026-01-30T10:00:00.5Z"},
		{`"yesterday"`, ""},
		{`null`, ""},
		{``, ""},
		{`-5`, ""},
		{`"0001-01-01T00:00:00Z"`, ""},
		{`1e300`, ""},
	} {
		got, ok := parseTime(json.RawMessage(c.raw))
		s := ""
		if ok {
			s = got.Format(time.RFC3339Nano)
		}
		if s != c.want {
			t.Errorf("parseTime(%s)=%q, want %q", c.raw, s, c.want)
		}
	}
}

// A line too long to read into memory is skipped on its own, and the
// lines after it are read.
func TestHistoryLineTooLongToRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hist := filepath.Join(dir, "conversation_history")
	if err := os.Mkdir(hist, 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"role":"user","content":"%s"}`+"\n"+`{"role":"user","content":"next"}`+"\n", strings.Repeat("z", maxLineBytes))
	if err := os.WriteFile(filepath.Join(hist, "s.jsonl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	m := migrate(t, OpenAkita, dir)
	problemFor(t, m.rep, "conversation_history/s.jsonl:1: ", "no event from it fits")
	turns := m.ofType(events.TypeTurnRecorded)
	if len(turns) != 1 || turns[0].(*events.TurnRecorded).Content != "next" || turns[0].(*events.TurnRecorded).TurnIndex != 1 {
		t.Fatalf("turns=%+v, want the next line alone, as turn 1", turns)
	}
}
