package rules

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// sample is an event with one field of each JSON kind.
const sample = `{
  "specversion": "1.0", "id": "e1", "source": "agent", "type": "session.ended",
  "namespace": "acme", "user": "alice", "subject": "s-42", "time": "2026-03-08T07:30:00Z",
  "data": {
    "session_id": "s-42", "message_count": 5, "reason": "user_closed",
    "ratio": 0.25, "flag": true, "nothing": null,
    "tags": ["go", "nats"], "nested": {"depth": {"n": 2}},
    "turns": [{"role": "user", "content": "我的项目用 PostgreSQL 16"}]
  }
}`

func sampleEvent(t *testing.T) Event {
	t.Helper()
	ev, err := ParseEvent([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// cond parses a when: condition written in YAML flow style.
func cond(t *testing.T, when string) *Cond {
	t.Helper()
	file := "rules:\n  - name: t\n    on: session.ended\n    when: " + when + "\n    do: [decay]\n"
	rules, err := Parse("t.yaml", []byte(file), nil)
	if err != nil {
		t.Fatalf("parse %s:\n%v", when, err)
	}
	return rules[0].When
}

func TestCondEval(t *testing.T) {
	t.Parallel()
	ev := sampleEvent(t)
	for _, tc := range []struct {
		when string
		want bool
		why  string // a part of the explanation
	}{
		// eq / ne on each kind, and the seed's symbols.
		{`{field: data.message_count, op: eq, value: 5}`, true, `data.message_count = 5, eq 5`},
		{`{field: data.message_count, op: "==", value: 5.0}`, true, `eq 5`},
		{`{field: data.message_count, op: ne, value: 5}`, false, `not ne 5`},
		{`{field: data.reason, op: eq, value: user_closed}`, true, `data.reason = "user_closed"`},
		{`{field: data.reason, op: "!=", value: timeout}`, true, `ne "timeout"`},
		{`{field: data.flag, op: eq, value: true}`, true, `data.flag = true`},
		{`{field: data.nothing, op: eq, value: null}`, true, `data.nothing = null`},
		{`{field: data.reason, op: ne, value: null}`, true, `ne null`},
		{`{field: type, op: eq, value: session.ended}`, true, `type = "session.ended"`},
		{`{field: user, op: eq, value: bob}`, false, `user = "alice", not eq "bob"`},
		// ordering: numbers, strings (RFC 3339 times order as strings).
		{`{field: data.message_count, op: gt, value: 4}`, true, `gt 4`},
		{`{field: data.message_count, op: ">", value: 5}`, false, `not gt 5`},
		{`{field: data.message_count, op: gte, value: 5}`, true, `gte 5`},
		{`{field: data.ratio, op: lt, value: 0.3}`, true, `lt 0.3`},
		{`{field: data.ratio, op: "<=", value: 0.2}`, false, `not lte 0.2`},
		{`{field: time, op: gte, value: "2026-03-08T00:00:00Z"}`, true, `gte`},
		{`{field: time, op: lt, value: 2026-03-08T00:00:00Z}`, false, `not lt`},
		// in / not_in.
		{`{field: data.reason, op: in, value: [timeout, user_closed]}`, true, `in ["timeout", "user_closed"]`},
		{`{field: data.reason, op: not_in, value: [timeout, user_closed]}`, false, `not not_in`},
		{`{field: data.message_count, op: in, value: [1, 2, 3]}`, false, `not in [1, 2, 3]`},
		{`{field: data.message_count, op: not_in, value: [1, 2, 3]}`, true, `not_in [1, 2, 3]`},
		// contains: strings and lists.
		{`{field: data.turns.0.content, op: contains, value: PostgreSQL}`, true, `contains "PostgreSQL"`},
		{`{field: data.tags, op: contains, value: nats}`, true, `data.tags = ["go", "nats"]`},
		{`{field: data.tags, op: contains, value: rust}`, false, `not contains "rust"`},
		// matches: RE2, unanchored, Unicode.
		{`{field: data.turns.0.content, op: matches, value: "^我的.*\\d+$"}`, true, `matches`},
		{`{field: subject, op: matches, value: "^s-\\d{3}$"}`, false, `not matches`},
		// exists.
		{`{field: data.session_id, op: exists}`, true, `data.session_id exists`},
		{`{field: data.missing, op: exists}`, false, `data.missing is missing`},
		{`{field: data.missing, op: exists, value: false}`, true, `data.missing is missing`},
		{`{field: data.nothing, op: exists}`, true, `exists`},
		{`{field: data.reason, op: exists, value: false}`, false, `exists, want it missing`},
		{`{field: agent, op: exists}`, false, `agent is missing`},
		// nested paths.
		{`{field: data.nested.depth.n, op: eq, value: 2}`, true, `= 2`},
		{`{field: data.turns.0.role, op: eq, value: user}`, true, `"user"`},
		{`{field: data.turns.1.role, op: eq, value: user}`, false, `data.turns.1.role is missing`},
		{`{field: data.tags.x, op: eq, value: go}`, false, `is missing`},
		{`{field: data.reason.x, op: eq, value: go}`, false, `is missing`},
		// missing fields: every operator false, ne and not_in included.
		{`{field: data.missing, op: ne, value: x}`, false, `data.missing is missing`},
		{`{field: data.missing, op: not_in, value: [x]}`, false, `data.missing is missing`},
		{`{field: data.missing, op: lt, value: 3}`, false, `data.missing is missing`},
		// kind mismatches: false with the reason, never a panic.
		{`{field: data.reason, op: gte, value: 3}`, false, `data.reason = "user_closed" is a string, gte needs a number`},
		{`{field: data.message_count, op: eq, value: "5"}`, false, `is a number, eq needs a string`},
		{`{field: data.message_count, op: ne, value: "5"}`, false, `is a number, ne needs a string`},
		{`{field: data.nothing, op: eq, value: x}`, false, `data.nothing = null is null, eq needs a string`},
		{`{field: data.flag, op: gt, value: 0}`, false, `is a boolean, gt needs a number`},
		{`{field: data.tags, op: eq, value: go}`, false, `is a list, eq needs a string`},
		{`{field: data.nested, op: lt, value: 1}`, false, `is an object, lt needs a number`},
		{`{field: data.message_count, op: contains, value: 5}`, false, `is a number, contains needs a string or a list`},
		{`{field: data.reason, op: contains, value: 5}`, false, `is a string, contains needs a list`},
		{`{field: data.message_count, op: matches, value: "5"}`, false, `is a number, matches needs a string`},
		{`{field: data.message_count, op: in, value: [a, b]}`, false, `in needs one of the list's kinds`},
		{`{field: data.message_count, op: not_in, value: [a, b]}`, false, `not_in needs one of the list's kinds`},
		// groups.
		{`{all: [{field: data.message_count, op: gte, value: 3}, {field: user, op: eq, value: alice}]}`, true,
			`data.message_count = 5, gte 3 and user = "alice", eq "alice"`},
		{`{all: [{field: data.message_count, op: gte, value: 3}, {field: user, op: eq, value: bob}]}`, false,
			`user = "alice", not eq "bob"`},
		{`{any: [{field: data.message_count, op: gte, value: 30}, {field: user, op: eq, value: bob}]}`, false,
			`none of: data.message_count = 5, not gte 30; user = "alice", not eq "bob"`},
		{`{any: [{field: data.message_count, op: gte, value: 30}, {field: user, op: eq, value: alice}]}`, true, `eq "alice"`},
		{`{not: {field: data.reason, op: eq, value: error}}`, true, `not (data.reason = "user_closed", not eq "error")`},
		{`{not: {field: data.missing, op: eq, value: x}}`, true, `not (data.missing is missing)`},
		{`{all: [{any: [{field: data.flag, op: eq, value: false}, {not: {field: data.tags, op: contains, value: rust}}]}, {field: namespace, op: eq, value: acme}]}`, true,
			`not (data.tags = ["go", "nats"], not contains "rust") and namespace = "acme", eq "acme"`},
	} {
		t.Run(tc.when, func(t *testing.T) {
			got, why := cond(t, tc.when).Eval(ev)
			if got != tc.want {
				t.Fatalf("Eval = %v (%s), want %v", got, why, tc.want)
			}
			if !strings.Contains(why, tc.why) {
				t.Fatalf("why = %q, want it to contain %q", why, tc.why)
			}
		})
	}
}

func TestCondEvalEmptyEvent(t *testing.T) {
	t.Parallel()
	// An event with no data and no attributes: nothing holds, nothing panics.
	c := cond(t, `{any: [{field: data.x, op: eq, value: 1}, {field: data, op: exists}, {field: user, op: matches, value: "."}]}`)
	if ok, why := c.Eval(Event{}); ok {
		t.Fatalf("Eval on the zero Event = true (%s)", why)
	}
}

func TestParseEvent(t *testing.T) {
	t.Parallel()
	ev := sampleEvent(t)
	if got, want := ev.Type(), "session.ended"; got != want {
		t.Fatalf("Type = %q, want %q", got, want)
	}
	if v, ok := ev.Lookup("data.message_count"); !ok || v != 5.0 {
		t.Fatalf("data.message_count = %v, %v; want float64 5", v, ok)
	}
	if _, ok := ev.Lookup("user.name"); ok {
		t.Fatal("an attribute has no fields")
	}
	for _, bad := range []string{`[]`, `{"id": "x"}`, `{"type": 3}`, `{"type": "a"} {}`, `null`, `{`} {
		if _, err := ParseEvent([]byte(bad)); err == nil {
			t.Errorf("ParseEvent(%s) succeeded", bad)
		}
	}
	ev, err := NewEvent(map[string]any{"type": "turn.recorded", "user": "bob"}, []byte(`{"role": "user"}`))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := ev.Lookup("data.role"); v != "user" {
		t.Fatalf("data.role = %v", v)
	}
	if _, ok := ev.Lookup("data"); !ok {
		t.Fatal("data missing")
	}
	noData, err := NewEvent(map[string]any{"type": "turn.recorded"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := noData.Lookup("data"); ok {
		t.Fatal("data present in an event without data")
	}

	// NewEventFunc: the same event, its data encoded only when a
	// condition first looks under data, and once.
	calls := 0
	lazy := NewEventFunc(map[string]any{"type": "turn.recorded", "user": "bob"}, func() ([]byte, error) {
		calls++
		return []byte(`{"role": "user"}`), nil
	})
	if v, _ := lazy.Lookup("user"); v != "bob" || calls != 0 {
		t.Fatalf("user = %v after %d encodings, want bob after none", v, calls)
	}
	for range 2 {
		if v, _ := lazy.Lookup("data.role"); v != "user" {
			t.Fatalf("lazy data.role = %v", v)
		}
	}
	if calls != 1 {
		t.Fatalf("data encoded %d times, want once", calls)
	}
	set, err := Load("../../rules", nil)
	if err != nil {
		t.Fatal(err)
	}
	var fired []string
	for _, d := range []map[string]any{{"message_count": 2}, {"message_count": 40}} {
		b, _ := json.Marshal(d)
		eager, err := NewEvent(map[string]any{"type": "session.ended", "user": "bob"}, b)
		if err != nil {
			t.Fatal(err)
		}
		lazy := NewEventFunc(map[string]any{"type": "session.ended", "user": "bob"}, func() ([]byte, error) { return b, nil })
		if got, want := names(set.Match(lazy)), names(set.Match(eager)); got != want {
			t.Errorf("data %v: lazy event fires %v, the eager one %v", d, got, want)
		}
		fired = append(fired, names(set.Match(lazy)))
	}
	if fired[0] == fired[1] {
		t.Fatalf("both message counts fire %q: the check does not read data", fired[0])
	}
	broken := NewEventFunc(map[string]any{"type": "turn.recorded"}, func() ([]byte, error) { return nil, errors.New("no") })
	if _, ok := broken.Lookup("data"); ok {
		t.Fatal("data present in an event whose data could not be given")
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	set, err := Load("../../rules", nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := event(t, "session.ended", map[string]any{"message_count": 2})
	var fired []string
	for _, x := range set.Explain(ev) {
		if x.Fired {
			fired = append(fired, x.Rule.Name)
		}
		switch x.Rule.Name {
		case "consolidate_on_session_end":
			if got, want := x.String(), "- consolidate_on_session_end (../../rules/session.yaml:14): data.message_count = 2, not gte 3\n"; got != want {
				t.Errorf("explanation %q, want %q", got, want)
			}
		case "episode_on_compression":
			if got, want := x.Why, "on context.compressing; the event is session.ended"; got != want {
				t.Errorf("why %q, want %q", got, want)
			}
		case "daily_sweep":
			if !strings.HasPrefix(x.Why, "scheduled (0 3 * * * ") {
				t.Errorf("why %q for a scheduled rule", x.Why)
			}
		}
	}
	// A short session gets no episode, but its turns are extracted.
	if strings.Join(fired, ",") != "extract_on_session_end" {
		t.Fatalf("fired %v for a 2-message session, want extract_on_session_end", fired)
	}
	ev = event(t, "memory.write.important", map[string]any{"kind": "rule", "importance": 0.9})
	for _, x := range set.Explain(ev) {
		if x.Rule.Name == "cards_on_important_rule" {
			want := "✓ cards_on_important_rule (../../rules/important.yaml:9): data.kind = \"rule\", in [\"rule\", \"preference\"]\n" +
				"    ask, then do render_cards max_chars=1500 per_kind=5\n"
			if got := x.String(); got != want {
				t.Fatalf("explanation %q, want %q", got, want)
			}
		}
	}
}
