package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram/events"
)

// valid is a rule file with one rule of each trigger; the error cases
// below break one line of it each.
const valid = `rules:
  - name: consolidate
    on: session.ended
    when:
      all:
        - field: data.message_count
          op: gte
          value: 3
    do:
      - build_episode: {source: session_end}
      - update_scratchpad
  - name: nightly
    schedule: "0 3 * * *"
    tz: Asia/Shanghai
    do:
      - compress_daily: {days: 2}
`

func TestParseValid(t *testing.T) {
	t.Parallel()
	rules, err := Parse("rules/x.yaml", []byte(valid), events.Types())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rules), 2; got != want {
		t.Fatalf("%d rules, want %d", got, want)
	}
	r := rules[0]
	if r.Name != "consolidate" || r.On != events.TypeSessionEnded || r.Line != 2 || r.Col != 5 || r.Mode != ModeAuto || !r.Enabled {
		t.Fatalf("rule 0 = %+v", r)
	}
	if got, want := len(r.When.All), 1; got != want {
		t.Fatalf("when has %d conditions, want %d", got, want)
	}
	if c := r.When.All[0]; c.Field != "data.message_count" || c.Op != OpGte || c.Value != 3.0 || c.Line != 6 {
		t.Fatalf("condition = %+v", c)
	}
	if got, want := r.Do[1].String(), "update_scratchpad max_chars=2000"; got != want {
		t.Fatalf("do[1] = %s, want %s", got, want)
	}
	if got, want := r.Do[1].Line, 11; got != want {
		t.Fatalf("do[1] at line %d, want %d", got, want)
	}
	n := rules[1]
	if n.Schedule == nil || n.Schedule.Loc.String() != "Asia/Shanghai" || n.Do[0].Int("days") != 2 {
		t.Fatalf("rule 1 = %+v", n)
	}
}

// edit replaces old with new in the valid file, once.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(valid, old) {
		t.Fatalf("valid file has no %q", old)
	}
	return strings.Replace(valid, old, new, 1)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		file string
		want []string // every error, in order, as Error() prints it
	}{
		{"yaml syntax: bad indentation", edit(t, "    on: session.ended\n", "    on: session.ended\n   bad: 1\n"),
			[]string{"x.yaml:4:4: YAML syntax: did not find expected '-' indicator"}},
		{"yaml syntax: tab", edit(t, "    on: session.ended\n", "\ton: session.ended\n"),
			[]string{"x.yaml:3:1: YAML syntax: found a tab character that violates indentation"}},
		{"yaml syntax: unclosed quote", edit(t, `"0 3 * * *"`, `"0 3 * * *`),
			[]string{"x.yaml:13:5: YAML syntax: found unexpected end of stream"}},
		{"yaml syntax: unclosed flow mapping", edit(t, "{days: 2}", "{days: 2"),
			[]string{"x.yaml:16:7: YAML syntax: did not find expected ',' or '}'"}},
		{"yaml syntax: mapping in a value", edit(t, "on: session.ended", "on: session.ended: x"),
			[]string{"x.yaml:3:5: YAML syntax: mapping values are not allowed in this context"}},
		{"yaml syntax: after a multi-line flow list", edit(t, "    do:\n      - compress_daily: {days: 2}\n", "    do: [\n      decay,\n      compress_daily]\n   bad: 1\n"),
			[]string{"x.yaml:18:4: YAML syntax: did not find expected '-' indicator"}},
		{"yaml syntax: after a multi-line quoted string", edit(t, "    tz: Asia/Shanghai\n", "    description: \"two\n      lines\"\n    tz: Asia/Shanghai\n  x\n"),
			[]string{"x.yaml:17:3: YAML syntax: could not find expected ':'"}},
		{"yaml syntax: CRLF line ends", strings.ReplaceAll(edit(t, "    on: session.ended\n", "    on: session.ended\n   bad: 1\n"), "\n", "\r\n"),
			[]string{"x.yaml:4:4: YAML syntax: did not find expected '-' indicator"}},
		{"unquoted step schedule", edit(t, `"0 3 * * *"`, `*/15 * * * *`),
			[]string{`x.yaml:13:5: YAML syntax: did not find expected alphabetic or numeric character (quote the schedule: schedule: "*/15 * * * *")`}},
		{"unquoted descriptor", edit(t, `"0 3 * * *"`, `@daily`),
			[]string{`x.yaml:13:5: YAML syntax: found character that cannot start any token (quote the schedule: schedule: "@daily")`}},
		{"second document", valid + "---\nrules: []\n",
			[]string{"x.yaml:17:1: a second YAML document; a rule file holds one"}},
		{"alias", edit(t, "value: 3", "value: *three"),
			[]string{"x.yaml:8:11: YAML syntax: unknown anchor 'three' referenced"}},
		{"alias to an anchor", "x: &three 3\n" + strings.Replace(valid, "value: 3", "value: *three", 1),
			[]string{"x.yaml:9:18: aliases (*three) are not supported in rule files; write the value out"}},
		{"quiet_gap off turn.recorded", edit(t, "      - update_scratchpad\n", "      - extract_now: {reason: quiet, quiet_gap: 3m}\n"),
			[]string{"x.yaml:11:9: rule consolidate: do[1]: extract_now: quiet_gap and token_cap are watched per recorded turn: the rule needs on: turn.recorded"}},
		{"token_cap with the wrong reason", strings.Replace(edit(t, "    on: session.ended\n", "    on: turn.recorded\n"),
			"      - update_scratchpad\n", "      - extract_now: {reason: quiet, token_cap: 6000}\n", 1),
			[]string{`x.yaml:11:9: rule consolidate: do[1]: extract_now: token_cap needs reason: token_cap, not "quiet"`}},
		{"quiet reason without a gap", strings.Replace(edit(t, "    on: session.ended\n", "    on: turn.recorded\n"),
			"      - update_scratchpad\n", "      - extract_now: {reason: quiet}\n", 1),
			[]string{"x.yaml:11:9: rule consolidate: do[1]: extract_now: on turn.recorded it needs quiet_gap (reason quiet, e.g. 3m) or token_cap (reason token_cap, e.g. 6000)"}},
		{"bad min_messages", edit(t, "      - update_scratchpad\n", "      - extract_now: {min_messages: 0}\n"),
			[]string{"x.yaml:11:37: rule consolidate: do[1].min_messages: 0 is below 1"}},
		{"unknown top-level key", "version: 1\n" + valid,
			[]string{`x.yaml:1:1: unknown key "version" (want one of rules)`}},
		{"top-level list", "- name: x\n",
			[]string{"x.yaml:1:1: the file is a list; put the rules under a top-level rules: key"}},
		{"unknown rule key", edit(t, "    when:\n", "    priority: 1\n    when:\n"),
			[]string{`x.yaml:4:5: rule consolidate: unknown key "priority" (want one of name, description, on, schedule, tz, when, do, mode, enabled)`}},
		{"seed 002 key", edit(t, "    on: session.ended", "    event_type: session.ended"),
			[]string{`x.yaml:2:5: rule consolidate: want on: (an event type) or schedule: (a cron expression)`,
				`x.yaml:3:5: rule consolidate: unknown key "event_type" (did you mean on?)`}},
		{"misspelt rule key", edit(t, "    do:\n      - build", "    doo:\n      - build"),
			[]string{`x.yaml:2:5: rule consolidate: do: missing; a rule needs at least one action`,
				`x.yaml:9:5: rule consolidate: unknown key "doo" (did you mean do?)`}},
		{"repeated key", edit(t, "    tz: Asia/Shanghai\n", "    tz: Asia/Shanghai\n    tz: UTC\n"),
			[]string{"x.yaml:15:5: rule nightly: tz: key repeated"}},
		{"unknown action", edit(t, "build_episode:", "buld_episode:"),
			[]string{`x.yaml:10:9: rule consolidate: do[0]: unknown action "buld_episode" (did you mean build_episode?)`}},
		{"unknown bare action", edit(t, "- update_scratchpad", "- update_scratchpd"),
			[]string{`x.yaml:11:9: rule consolidate: do[1]: unknown action "update_scratchpd" (did you mean update_scratchpad?)`}},
		{"unknown parameter", edit(t, "{days: 2}", "{dayz: 2}"),
			[]string{`x.yaml:16:26: rule nightly: do[0]: compress_daily: unknown key "dayz" (did you mean days?)`}},
		{"bad parameter value", edit(t, "{days: 2}", "{days: 0}"),
			[]string{`x.yaml:16:32: rule nightly: do[0].days: 0 is below 1`}},
		{"bad enum", edit(t, "{source: session_end}", "{source: session_ends}"),
			[]string{`x.yaml:10:33: rule consolidate: do[0].source: "session_ends" (did you mean session_end?)`}},
		{"dedupe similarity out of range", edit(t, "compress_daily: {days: 2}", "dedupe: {similarity: 1.5}"),
			[]string{`x.yaml:16:30: rule nightly: do[0].similarity: 1.5 is outside (0, 1]`}},
		{"publish needs a type", edit(t, "- update_scratchpad", "- publish: {data: {a: 1}}"),
			[]string{`x.yaml:11:9: rule consolidate: do[1]: publish: type: missing`}},
		{"publish unknown type", edit(t, "- update_scratchpad", "- publish: {type: memory.add}"),
			[]string{`x.yaml:11:25: rule consolidate: do[1].type: unknown event type "memory.add" (did you mean memory.added?)`}},
		{"action with two names", edit(t, "- update_scratchpad", "- {decay: {}, archive: {}}"),
			[]string{`x.yaml:11:9: rule consolidate: do[1]: want an action name, or one name mapped to its parameters (dedupe: {similarity: 0.9})`}},
		{"bad op", edit(t, "op: gte", "op: greater"),
			[]string{`x.yaml:7:15: rule consolidate: when.all[0].op: unknown operator "greater" (want one of eq, ne, gt, gte, lt, lte, in, not_in, contains, matches, exists)`}},
		{"misspelt op", edit(t, "op: gte", "op: gtee"),
			[]string{`x.yaml:7:15: rule consolidate: when.all[0].op: unknown operator "gtee" (did you mean gte?)`}},
		{"value of the wrong kind", edit(t, "value: 3", "value: [3]"),
			[]string{`x.yaml:8:18: rule consolidate: when.all[0].value: want a single value (string, number, true, false or null)`}},
		{"bad regexp", edit(t, "op: gte\n          value: 3", "op: matches\n          value: \"(\""),
			[]string{"x.yaml:8:18: rule consolidate: when.all[0].value: bad regular expression: error parsing regexp: missing closing ): `(`"}},
		{"payload field", edit(t, "data.message_count", "payload.message_count"),
			[]string{`x.yaml:6:18: rule consolidate: when.all[0].field: unknown field "payload.message_count" (event data is under data: did you mean data.message_count?)`}},
		{"comparison beside a group", edit(t, "      all:\n", "      field: type\n      all:\n"),
			[]string{`x.yaml:5:7: rule consolidate: when: all with field/op/value; put the comparison inside all`}},
		{"missing value", edit(t, "          value: 3\n", ""),
			[]string{`x.yaml:6:11: rule consolidate: when.all[0]: value: missing`}},
		{"unknown event type", edit(t, "on: session.ended", "on: session.end"),
			[]string{`x.yaml:3:9: rule consolidate: on: unknown event type "session.end" (did you mean session.ended?)`}},
		{"pattern matching nothing", edit(t, "on: session.ended", "on: sessions.*"),
			[]string{`x.yaml:3:9: rule consolidate: on: "sessions.*" matches no known event type (` + strings.Join(events.Types(), ", ") + `)`}},
		{"on and schedule", edit(t, "    tz: Asia", "    on: session.ended\n    tz: Asia"),
			[]string{`x.yaml:13:15: rule nightly: on and schedule: a rule has one trigger, an event or a schedule`}},
		{"when on a schedule", edit(t, "    tz: Asia/Shanghai\n", "    when: {field: type, op: exists}\n"),
			[]string{`x.yaml:14:11: rule nightly: when: a scheduled rule has no event to test; conditions need on:`}},
		{"tz on an event rule", edit(t, "    on: session.ended\n", "    on: session.ended\n    tz: UTC\n"),
			[]string{`x.yaml:4:9: rule consolidate: tz: only a scheduled rule has a time zone`}},
		{"unknown time zone", edit(t, "Asia/Shanghai", "Asia/Shang_hai"),
			[]string{`x.yaml:14:9: rule nightly: tz: unknown time zone "Asia/Shang_hai"`}},
		{"missing do", edit(t, "    do:\n      - compress_daily: {days: 2}\n", ""),
			[]string{`x.yaml:12:5: rule nightly: do: missing; a rule needs at least one action`}},
		{"empty do", edit(t, "      - compress_daily: {days: 2}\n", ""),
			[]string{`x.yaml:15:8: rule nightly: do: want a non-empty list of actions`}},
		{"missing name", edit(t, "  - name: nightly\n    schedule", "  - schedule"),
			[]string{`x.yaml:12:5: rules[1]: name: missing`}},
		{"same name twice in a file", edit(t, "name: nightly", "name: consolidate"),
			[]string{`x.yaml:12:5: rule consolidate: name used twice in this file (first at line 2)`}},
		{"bad mode", valid + "    mode: manual\n",
			[]string{`x.yaml:17:11: rule nightly: mode "manual": want auto or confirm`}},
		{"enabled not a bool", valid + "    enabled: yes\n",
			[]string{`x.yaml:17:14: rule nightly: enabled: want true or false`}},
		{"many errors at once", edit(t, "op: gte", "op: gtee") + "    mode: manual\n",
			[]string{`x.yaml:7:15: rule consolidate: when.all[0].op: unknown operator "gtee" (did you mean gte?)`,
				`x.yaml:17:11: rule nightly: mode "manual": want auto or confirm`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.file), events.Types())
			checkErrors(t, err, tc.want)
		})
	}
}

func checkErrors(t *testing.T, err error, want []string) {
	t.Helper()
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v (%T), want Errors", err, err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Error())
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Fatalf("errors:\n%s\nwant:\n%s", g, w)
	}
}

func TestParseScheduleErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec string
		want string
	}{
		// "    schedule: " is 14 columns; the quote is column 15, the
		// spec's first character column 16.
		{"61 3 * * *", `x.yaml:13:16: rule nightly: schedule "61 3 * * *": minute field "61": 61 is out of range 0-59`},
		{"0 24 * * *", `x.yaml:13:18: rule nightly: schedule "0 24 * * *": hour field "24": 24 is out of range 0-23`},
		{"0 3 0 * *", `x.yaml:13:20: rule nightly: schedule "0 3 0 * *": day-of-month field "0": 0 is out of range 1-31`},
		{"0 3 * 13 *", `x.yaml:13:22: rule nightly: schedule "0 3 * 13 *": month field "13": 13 is out of range 1-12`},
		{"0 3 * * 8", `x.yaml:13:24: rule nightly: schedule "0 3 * * 8": day-of-week field "8": 8 is out of range 0-7`},
		{"0 3 * * FUN", `x.yaml:13:24: rule nightly: schedule "0 3 * * FUN": day-of-week field "FUN": "FUN" is not a number or a name (sun, mon, tue, wed, thu, fri, sat)`},
		{"*/0 3 * * *", `x.yaml:13:16: rule nightly: schedule "*/0 3 * * *": minute field "*/0": step "0" is not a positive number`},
		{"0 5-3 * * *", `x.yaml:13:18: rule nightly: schedule "0 5-3 * * *": hour field "5-3": range 5-3 runs backwards`},
		{"0 3,,4 * * *", `x.yaml:13:18: rule nightly: schedule "0 3,,4 * * *": hour field "3,,4": empty list item`},
		{"0 3 30 2 *", `x.yaml:13:20: rule nightly: schedule "0 3 30 2 *": never fires: no month in the month field has the days in the day-of-month field`},
		{"0 3 * *", `x.yaml:13:16: rule nightly: schedule "0 3 * *": 4 fields, want 5: minute hour day-of-month month day-of-week`},
		{"0 0 3 * * *", `x.yaml:13:16: rule nightly: schedule "0 0 3 * * *": 6 fields: schedules have no seconds field; drop the first (seed 001's "0 0 3 * * *" is "0 3 * * *")`},
		{"@dayly", `x.yaml:13:16: rule nightly: schedule "@dayly": unknown descriptor "@dayly" (did you mean @daily?)`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(edit(t, `"0 3 * * *"`, `"`+tc.spec+`"`)), events.Types())
			checkErrors(t, err, []string{tc.want})
		})
	}
}

func TestLoadDuplicateAcrossFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.yaml", valid)
	write(t, dir, "b.yaml", "# another file\nrules:\n  - name: nightly\n    on: turn.recorded\n    do: [decay]\n")
	_, err := Load(dir, events.Types())
	checkErrors(t, err, []string{filepath.Join(dir, "b.yaml") + ":3:5: rule nightly: name already used at " + filepath.Join(dir, "a.yaml") + ":12"})
}

func TestLoadCollectsEveryFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.yaml", edit(t, "op: gte", "op: gtee"))
	write(t, dir, "b.yml", "rules:\n  - name: x\n    on: turn.recorded\n")
	write(t, dir, "notes.txt", "not a rule file")
	write(t, dir, ".#a.yaml", "an editor's lock file")
	_, err := Load(dir, events.Types())
	checkErrors(t, err, []string{
		filepath.Join(dir, "a.yaml") + `:7:15: rule consolidate: when.all[0].op: unknown operator "gtee" (did you mean gte?)`,
		filepath.Join(dir, "b.yml") + `:2:5: rule x: do: missing; a rule needs at least one action`,
	})
}

func TestLoadEmptyAndMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set, err := Load(dir, events.Types())
	if err != nil || len(set.Rules) != 0 {
		t.Fatalf("empty dir: %v, %v; want an empty set", set, err)
	}
	write(t, dir, "empty.yaml", "# all rules removed\n")
	if set, err := Load(dir, events.Types()); err != nil || len(set.Rules) != 0 || len(set.Files) != 1 {
		t.Fatalf("comment-only file: %+v, %v; want an empty set of one file", set, err)
	}
	_, err = Load(filepath.Join(dir, "nope"), events.Types())
	checkErrors(t, err, []string{filepath.Join(dir, "nope") + ": read rules: no such file or directory"})
}

func TestLoadOneFile(t *testing.T) {
	t.Parallel()
	path := write(t, t.TempDir(), "x.yaml", valid)
	set, err := Load(path, events.Types())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(set.Rules), "consolidate,nightly"; got != want {
		t.Fatalf("rules %s, want %s", got, want)
	}
}

func TestLoadRefusesPublishLoops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.yaml", `rules:
  - name: echo
    on: memory.added
    do:
      - publish: {type: memory.updated}
  - name: back
    on: memory.*
    when: {field: data.kind, op: eq, value: rule}
    do:
      - publish: {type: memory.added}
  - name: off
    on: memory.added
    enabled: false
    do:
      - publish: {type: memory.added}
`)
	_, err := Load(dir, events.Types())
	a := filepath.Join(dir, "a.yaml")
	checkErrors(t, err, []string{
		a + ":5:9: rule echo: publish memory.updated loops back to this rule (memory.updated → memory.added → rule echo); rules may not trigger themselves",
		a + ":10:9: rule back: publish memory.added loops back to this rule (memory.added → rule back); rules may not trigger themselves",
	})
}

func TestParseTooLarge(t *testing.T) {
	t.Parallel()
	data := "rules: []\n" + strings.Repeat("# padding\n", maxFileBytes/10)
	_, err := Parse("x.yaml", []byte(data), nil)
	checkErrors(t, err, []string{"x.yaml: larger than 262144 bytes, the most a rule file may hold"})

	// Load reads no more than it needs to say so.
	path := write(t, t.TempDir(), "big.yaml", data+strings.Repeat("#\n", 1<<20))
	_, err = Load(filepath.Dir(path), nil)
	checkErrors(t, err, []string{path + ": larger than 262144 bytes, the most a rule file may hold"})
}

func TestParseAnyTypeWithoutKnownList(t *testing.T) {
	t.Parallel()
	rules, err := Parse("x.yaml", []byte("rules:\n  - name: x\n    on: agent.custom\n    do: [decay]\n"), nil)
	if err != nil || len(rules) != 1 {
		t.Fatalf("Parse with no known types: %v, %v", rules, err)
	}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
