package events_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
)

func TestDecodeDerivedValues(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	str := func(s string) *string { return &s }
	num := func(f float64) *float64 { return &f }
	until := at("2025-06-08T09:30:00+08:00")
	for _, c := range []struct {
		name, eventType, body string
		want                  any
	}{
		{"request", events.TypeExtractionRequested,
			`{"request_id":"r1","session_id":"s1","reason":"compressing","summary":"sum","turns":[
			{"turn_index":2,"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","input":{"a":1}}],"time":"2025-06-01T11:30:00.5+02:00","project":"p"},
			{"turn_index":3,"role":"tool","tool_results":[{"tool_call_id":"c1","content":"ok"}],"time":"2025-06-01T09:30:01Z"}]}`,
			&events.ExtractionRequested{RequestID: "r1", SessionID: "s1", Reason: events.ReasonCompressing, Summary: "sum",
				Turns: []events.ExtractionTurn{
					{TurnIndex: 2, Role: events.RoleAssistant, ToolCalls: []events.ToolCall{{ID: "c1", Name: "f", Input: json.RawMessage(`{"a":1}`)}},
						Time: at("2025-06-01T11:30:00.5+02:00"), Project: "p"},
					{TurnIndex: 3, Role: events.RoleTool, ToolResults: []events.ToolResult{{ToolCallID: "c1", Content: "ok"}}, Time: at("2025-06-01T09:30:01Z")},
				}}},
		{"extracted", events.TypeMemoryExtracted,
			`{"request_id":"r1","session_id":"s1","extractor":"llm","model":"m","usage":{"prompt_tokens":10,"completion_tokens":2},"calls":1,"turns":[2,3],
			"candidates":[{"kind":"fact","category":"solution","subject":"s","predicate":"p","content":"c","project":"x","topic":"t","importance":0.25,"confidence":1e0,"updates":true,"said_at":"2025-06-01T11:30:00.5+02:00"}]}`,
			&events.MemoryExtracted{RequestID: "r1", SessionID: "s1", Extractor: events.ExtractorLLM, Model: "m",
				Usage: events.Usage{PromptTokens: 10, CompletionTokens: 2}, Calls: 1, Turns: []int{2, 3},
				Candidates: []events.Candidate{{Kind: events.KindFact, Category: events.CategorySolution, Subject: "s", Predicate: "p", Content: "c",
					Project: "x", Topic: "t", Importance: 0.25, Confidence: 1, Updates: true, SaidAt: at("2025-06-01T11:30:00.5+02:00")}}}},
		{"extracted nothing", events.TypeMemoryExtracted,
			`{"request_id":"r1","session_id":"s1","extractor":"rules","usage":{"prompt_tokens":0,"completion_tokens":0},"calls":0,"turns":[0],"candidates":[]}`,
			&events.MemoryExtracted{RequestID: "r1", SessionID: "s1", Extractor: events.ExtractorRules, Turns: []int{0}, Candidates: []events.Candidate{}}},
		{"failed", events.TypeExtractionFailed,
			`{"request_id":"r1","session_id":"s1","reason":"x","attempts":5,"turns":[1]}`,
			&events.ExtractionFailed{RequestID: "r1", SessionID: "s1", Reason: "x", Attempts: 5, Turns: []int{1}}},
		{"added takes the defaults", events.TypeMemoryAdded,
			`{"kind":"rule","category":"decision","subject":"team","predicate":"rule","content":"c","importance":0.9}`,
			&events.MemoryAdded{Tier: events.TierKnowledge, Kind: events.KindRule, Category: events.CategoryDecision,
				Subject: "team", Predicate: "rule", Content: "c", Importance: 0.9, Confidence: 1}},
		{"added keeps what it is told", events.TypeMemoryAdded,
			`{"memory_id":"m1","tier":1,"kind":"identity","category":"identity","subject":"user","predicate":"name","content":"c","importance":1,"confidence":0,"session_id":"s1","said_at":"2025-06-01T09:30:01Z"}`,
			&events.MemoryAdded{MemoryID: "m1", Tier: events.TierCore, Kind: events.KindIdentity, Category: events.CategoryIdentity,
				Subject: "user", Predicate: "name", Content: "c", Importance: 1, Confidence: 0, SessionID: "s1", SaidAt: at("2025-06-01T09:30:01Z")}},
		{"updated", events.TypeMemoryUpdated,
			`{"memory_id":"m1","content":"c","project":"","importance":0}`,
			&events.MemoryUpdated{MemoryID: "m1", Content: str("c"), Project: str(""), Importance: num(0)}},
		{"deleted", events.TypeMemoryDeleted, `{"memory_id":"m1","reason":"asked"}`,
			&events.MemoryDeleted{MemoryID: "m1", Reason: "asked"}},
		{"confirmed", events.TypePendingConfirmed, `{"memory_id":"m1"}`, &events.PendingDecision{MemoryID: "m1"}},
		{"snoozed", events.TypePendingSnoozed, `{"memory_id":"m1","until":"2025-06-08T09:30:00+08:00"}`,
			&events.PendingDecision{MemoryID: "m1", Until: &until}},
		{"important", events.TypeMemoryImportant,
			`{"memory_id":"m1","kind":"fact","category":"event","subject":"s","predicate":"p","content":"c","importance":0.8,"cause_event_id":"e1"}`,
			&events.MemoryImportant{MemoryID: "m1", Kind: events.KindFact, Category: events.CategoryEvent, Subject: "s", Predicate: "p",
				Content: "c", Importance: 0.8, CauseEventID: "e1"}},
	} {
		t.Run(c.name, func(t *testing.T) { decodesTo(t, c.eventType, c.body, c.want) })
	}
}

func TestDecodeDerivedTimes(t *testing.T) {
	t.Parallel()
	v, err := events.DecodeData(events.TypePendingSnoozed, []byte(`{"memory_id":"m1","until":"2025-06-08T09:30:00.25+08:00"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *v.(*events.PendingDecision).Until, time.Date(2025, 6, 8, 1, 30, 0, 25e7, time.UTC); !got.Equal(want) {
		t.Fatalf("Until=%v, want %v", got, want)
	}
}

// A Go worker with nothing to report leaves Candidates nil; that must
// still make a valid event.
func TestMemoryExtractedWithNilCandidates(t *testing.T) {
	t.Parallel()
	x := events.MemoryExtracted{RequestID: "r1", SessionID: "s1", Extractor: events.ExtractorRules, Turns: []int{0}}
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.DecodeData(events.TypeMemoryExtracted, b); err != nil {
		t.Fatalf("DecodeData(%s): %v", b, err)
	}
	// The method must not change the value it was called on.
	if x.Candidates != nil {
		t.Fatalf("MarshalJSON set Candidates to %#v", x.Candidates)
	}
}

func TestSessionIDDerived(t *testing.T) {
	t.Parallel()
	var nilAdded *events.MemoryAdded
	for _, c := range []struct {
		data any
		want string
	}{
		{events.ExtractionRequested{SessionID: "a"}, "a"},
		{&events.MemoryExtracted{SessionID: "b"}, "b"},
		{events.ExtractionFailed{SessionID: "c"}, "c"},
		{&events.MemoryAdded{SessionID: "d"}, "d"},
		{events.MemoryImportant{SessionID: "e"}, "e"},
		{&events.MemoryAdded{}, ""},
		{nilAdded, ""},
		{&events.MemoryUpdated{MemoryID: "m"}, ""},
		{events.MemoryDeleted{MemoryID: "m"}, ""},
		{&events.PendingDecision{MemoryID: "m"}, ""},
	} {
		if got := events.SessionID(c.data); got != c.want {
			t.Errorf("SessionID(%#v)=%q, want %q", c.data, got, c.want)
		}
	}
}

func TestTypes(t *testing.T) {
	t.Parallel()
	all := events.Types()
	if got, want := len(all), 26; got != want {
		t.Fatalf("len(Types())=%d, want %d", got, want)
	}
	seen := map[string]bool{}
	for _, typ := range all {
		if seen[typ] {
			t.Fatalf("%s is listed twice", typ)
		}
		seen[typ] = true
		// Every listed type decodes: an error names the data, not the type
		// (user.forgotten needs nothing, nor does a declined identity).
		_, err := events.DecodeData(typ, []byte(`{}`))
		if (typ == events.TypeUserForgotten || typ == events.TypeIdentityConfirmed) && err == nil {
			continue
		}
		checkErrNot(t, err, "type")
	}
	all[0] = "changed"
	if events.Types()[0] == "changed" {
		t.Fatal("Types returns the package's own slice")
	}
}

// checkErrNot fails unless err is a *FieldError for a field other than
// field.
func checkErrNot(t *testing.T, err error, field string) {
	t.Helper()
	var fe *events.FieldError
	if !errors.As(err, &fe) || fe.Field == field {
		t.Fatalf("err=%v, want a *FieldError for a field other than %q", err, field)
	}
}

func TestNewDerived(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 6, 1, 17, 30, 0, 123456789, time.FixedZone("CST", 8*3600))
	added := events.MemoryAdded{Kind: events.KindRule, Category: events.CategoryDecision, Subject: "team", Predicate: "rule",
		Content: "Run go vet before a commit.", Importance: 0.9, Confidence: 1, SessionID: "s1"}
	e, err := events.NewDerived("urn:engram:rules", events.TypeMemoryAdded, "rule-e7-0", "acme", "alice", at, added)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"ID", e.ID(), "rule-e7-0"},
		{"Source", e.Source(), "urn:engram:rules"},
		{"Type", e.Type(), events.TypeMemoryAdded},
		{"Subject", e.Subject(), "s1"},
		{"Namespace", events.Namespace(e), "acme"},
		{"User", events.User(e), "alice"},
	} {
		if c.got != c.want {
			t.Errorf("%s=%q, want %q", c.name, c.got, c.want)
		}
	}
	if got := e.Time(); !got.Equal(at) {
		t.Errorf("Time=%v, want %v", got, at)
	}

	// The same cause makes the same event, byte for byte: that is what lets
	// the stream drop a retried publish.
	again, err := events.NewDerived("urn:engram:rules", events.TypeMemoryAdded, "rule-e7-0", "acme", "alice", at, added)
	if err != nil {
		t.Fatal(err)
	}
	b1, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := json.Marshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if string(b1) != string(b2) {
		t.Fatalf("two events from the same cause differ:\n%s\n%s", b1, b2)
	}

	// What a worker publishes, DecodeStructured accepts as the same event.
	got, data, err := events.DecodeStructured(b1, 0)
	if err != nil {
		t.Fatalf("DecodeStructured(%s): %v", b1, err)
	}
	if msg := sameEvent(got, e); msg != "" {
		t.Fatal(msg)
	}
	want := added
	want.Tier = events.TierKnowledge // left out, so the default
	if !reflect.DeepEqual(data, &want) {
		t.Fatalf("data=%+v, want %+v", data, want)
	}
}

func TestNewDerivedWithoutSession(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		typ  string
		data any
	}{
		{events.TypeMemoryDeleted, events.MemoryDeleted{MemoryID: "m1"}},
		{events.TypePendingSnoozed, events.PendingDecision{MemoryID: "m1", Until: &at}},
		{events.TypeMemoryAdded, events.MemoryAdded{Kind: events.KindFact, Category: events.CategoryEvent, Subject: "s", Predicate: "p", Content: "c"}},
	} {
		t.Run(c.typ, func(t *testing.T) {
			e, err := events.NewDerived("urn:engram:test", c.typ, "id-1", "", "u", at, c.data)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Subject(); got != "" {
				t.Fatalf("Subject=%q, want none", got)
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := events.DecodeStructured(b, 0); err != nil {
				t.Fatalf("DecodeStructured(%s): %v", b, err)
			}
		})
	}
}

func TestNewDerivedErrors(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)
	ok := events.MemoryDeleted{MemoryID: "m1"}
	for _, c := range []struct {
		name  string
		typ   string
		id    string
		t     time.Time
		data  any
		field string
	}{
		{"no id", events.TypeMemoryDeleted, "", at, ok, "id"},
		{"id with a newline", events.TypeMemoryDeleted, "a\nb", at, ok, "id"},
		{"zero time", events.TypeMemoryDeleted, "id", time.Time{}, ok, "time"},
		{"year 10000", events.TypeMemoryDeleted, "id", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), ok, "time"},
		{"year -1", events.TypeMemoryDeleted, "id", time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), ok, "time"},
		{"unknown type", "memory.archived", "id", at, ok, "type"},
		{"source with a space", events.TypeMemoryDeleted, "id", at, ok, "source"},
		{"source not canonical", events.TypeMemoryDeleted, "id", at, ok, "source"},
		{"invalid data", events.TypeMemoryDeleted, "id", at, events.MemoryDeleted{}, "data.memory_id"},
		{"snooze without an end", events.TypePendingSnoozed, "id", at, events.PendingDecision{MemoryID: "m1"}, "data.until"},
		{"confirmation with an end", events.TypePendingConfirmed, "id", at, events.PendingDecision{MemoryID: "m1", Until: &at}, "data.until"},
	} {
		t.Run(c.name, func(t *testing.T) {
			source := map[string]string{"source with a space": "engram migrate", "source not canonical": "HTTPS://engram.example.com"}[c.name]
			if source == "" {
				source = "urn:engram:test"
			}
			_, err := events.NewDerived(source, c.typ, c.id, "", "u", c.t, c.data)
			checkErr(t, err, c.field)
		})
	}
}

func TestDerivedMessages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ typ, body, want string }{
		{events.TypeMemoryExtracted, extracted(candidateWith(`"importance":1.0000000000000000001`)),
			`data.candidates[0].importance: must be a number from 0 to 1, not "1.0000000000000000001"`},
		{events.TypeMemoryExtracted, extracted(candidateWith(`"kind":"opinion"`)),
			`data.candidates[0].kind: must be fact, preference, rule, skill, error, context or identity, not "opinion"`},
		{events.TypeMemoryExtracted, strings.Replace(extracted(), `[0,1,2]`, `[0,2,1]`, 1),
			"data.turns[2]: is 1 after 2; turn indices must be ascending, each once"},
		{events.TypeExtractionRequested, request(turn0, turn0),
			"data.turns[1].turn_index: is 0 after 0; turns must be in ascending turn_index order, each once"},
		{events.TypeExtractionRequested, request(turnsUpTo(events.MaxExtractionTurns + 1)...),
			"data.turns: holds more than 500 turns"},
		{events.TypeMemoryUpdated, `{"memory_id":"m1"}`, "data: must change at least one of"},
		{events.TypePendingConfirmed, `{"memory_id":"m1","until":"2025-06-08T09:30:00Z"}`, "data.until: is only for pending.snoozed"},
		{events.TypePendingSnoozed, `{"memory_id":"m1","until":"0001-01-01T00:00:00Z"}`, "data.until: must not be the zero time 0001-01-01T00:00:00Z"},
	} {
		_, err := events.DecodeData(c.typ, []byte(c.body))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("err=%v, want it to start %q", err, c.want)
		}
	}

	_, _, err := events.DecodeStructured([]byte(with(m{"type": events.TypeMemoryDeleted, "data": m{"memory_id": "m1"}})), 0)
	if want := `subject: is "s-42" but the data names no session`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err=%v, want it to start %q", err, want)
	}
	_, err = events.DecodeData("memory.archived", []byte(`{}`))
	if want := "memory.write.important"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err=%v, want it to list the types", err)
	}
}
