package events_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/engramhq/engram/events"
)

// checkErr fails unless err is nil for want == "" or a *FieldError for
// the field want.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("err=%v, want nil", err)
		}
		return
	}
	var fe *events.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err=%v (%T), want a *FieldError for %q", err, err, want)
	}
	if got := fe.Field; got != want {
		t.Fatalf("Field=%q, want %q (error: %v)", got, want, err)
	}
	if fe.Problem == "" {
		t.Fatalf("FieldError for %q has no Problem", want)
	}
	if got, want := err.Error(), fe.Field+": "+fe.Problem; !strings.HasSuffix(got, want) {
		t.Fatalf("Error()=%q, want it to end in %q", got, want)
	}
}

func TestDecodeData(t *testing.T) {
	t.Parallel()
	for _, s := range dataSamples {
		t.Run(s.name, func(t *testing.T) {
			v, err := events.DecodeData(s.eventType, []byte(s.body))
			checkErr(t, err, s.field)
			if err != nil {
				if v != nil {
					t.Fatalf("DecodeData returned %v with an error", v)
				}
				return
			}
			if got, want := reflect.TypeOf(v).String(), map[string]string{
				events.TypeTurnRecorded:          "*events.TurnRecorded",
				events.TypeContextCompressing:    "*events.ContextCompressing",
				events.TypeSessionEnded:          "*events.SessionEnded",
				events.TypeExtractionRequested:   "*events.ExtractionRequested",
				events.TypeMemoryExtracted:       "*events.MemoryExtracted",
				events.TypeExtractionFailed:      "*events.ExtractionFailed",
				events.TypeMemoryAdded:           "*events.MemoryAdded",
				events.TypeMemoryUpdated:         "*events.MemoryUpdated",
				events.TypeMemoryDeleted:         "*events.MemoryDeleted",
				events.TypePendingConfirmed:      "*events.PendingDecision",
				events.TypePendingIgnored:        "*events.PendingDecision",
				events.TypePendingSnoozed:        "*events.PendingDecision",
				events.TypeMemoryImportant:       "*events.MemoryImportant",
				events.TypeEpisodeBuilt:          "*events.Episode",
				events.TypeScratchpadUpdated:     "*events.Scratchpad",
				events.TypeProfileRefreshed:      "*events.ProfileRefreshed",
				events.TypeDailySummarized:       "*events.DailySummary",
				events.TypeMemoriesMerged:        "*events.MemoriesMerged",
				events.TypeMemoriesArchived:      "*events.MemoriesArchived",
				events.TypeMemoriesAccessed:      "*events.MemoriesAccessed",
				events.TypeRetrievalDegraded:     "*events.RetrievalDegraded",
				events.TypeUserForgotten:         "*events.UserForgotten",
				events.TypeMemoryEmbedded:        "*events.MemoryEmbedded",
				events.TypeTurnsExpired:          "*events.TurnsExpired",
				events.TypeIdentityConfirmed:     "*events.IdentityConfirmed",
				events.TypeConsolidationReported: "*events.ConsolidationReport",
			}[s.eventType]; got != want {
				t.Fatalf("DecodeData type=%s, want %s", got, want)
			}
		})
	}
}

func TestDecodeDataUnknownType(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"", "turn.Recorded", "memory.archived", "memory.write"} {
		_, err := events.DecodeData(typ, []byte(`{}`))
		checkErr(t, err, "type")
	}
}

func TestDecodeDataValues(t *testing.T) {
	t.Parallel()
	t.Run("turn", func(t *testing.T) {
		v, err := events.DecodeData(events.TypeTurnRecorded, []byte(`{"session_id":"s-42","turn_index":3e0,"role":"assistant",
			"content":"hi","tool_calls":[{"id":"c1","name":"search","input": {"q" : 1}}],
			"tool_results":[{"tool_call_id":"c0","content":"r","is_error":true}],
			"attachments":[{"name":"a.png","mime":"image/png","size":12,"url":"u"},{"name":"b","direction":"outbound"}],
			"channel":"web","project":"p"}`))
		if err != nil {
			t.Fatal(err)
		}
		want := &events.TurnRecorded{
			SessionID: "s-42", TurnIndex: 3, Role: "assistant", Content: "hi",
			ToolCalls:   []events.ToolCall{{ID: "c1", Name: "search", Input: json.RawMessage(`{"q" : 1}`)}},
			ToolResults: []events.ToolResult{{ToolCallID: "c0", Content: "r", IsError: true}},
			Attachments: []events.Attachment{
				{Name: "a.png", Mime: "image/png", Size: 12, URL: "u", Direction: events.DirectionInbound},
				{Name: "b", Direction: events.DirectionOutbound},
			},
			Channel: "web", Project: "p",
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("DecodeData=%+v\nwant %+v", v, want)
		}
	})
	t.Run("compressing fills in the session", func(t *testing.T) {
		v, err := events.DecodeData(events.TypeContextCompressing, []byte(`{"session_id":"s1","summary":"x",
			"turns":[{"turn_index":0,"role":"user","content":"a"},{"session_id":"s1","turn_index":1,"role":"assistant","content":"b"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		c := v.(*events.ContextCompressing)
		if got, want := len(c.Turns), 2; got != want {
			t.Fatalf("len(Turns)=%d, want %d", got, want)
		}
		for i, turn := range c.Turns {
			if got, want := turn.SessionID, "s1"; got != want {
				t.Fatalf("Turns[%d].SessionID=%q, want %q", i, got, want)
			}
			if got, want := turn.TurnIndex, i; got != want {
				t.Fatalf("Turns[%d].TurnIndex=%d, want %d", i, got, want)
			}
		}
	})
	t.Run("session ended", func(t *testing.T) {
		v, err := events.DecodeData(events.TypeSessionEnded, []byte(`{"reason":"timeout","message_count":7,"session_id":"s1"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := *v.(*events.SessionEnded), (events.SessionEnded{SessionID: "s1", MessageCount: 7, Reason: "timeout"}); got != want {
			t.Fatalf("DecodeData=%+v, want %+v", got, want)
		}
	})
}

// The Go types and DecodeData must agree: what json.Marshal makes of a
// value decodes back to the same value.
func TestMarshalDecodes(t *testing.T) {
	t.Parallel()
	for _, s := range dataSamples {
		if s.field != "" {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			v, err := events.DecodeData(s.eventType, []byte(s.body))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			again, err := events.DecodeData(s.eventType, b)
			if err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if !reflect.DeepEqual(normalize(t, again), normalize(t, v)) {
				t.Fatalf("round trip=%+v, want %+v", again, v)
			}
		})
	}
}

// normalize re-marshals tool inputs compactly: json.Marshal compacts a
// RawMessage, which is not a change of value.
// decodesTo checks that DecodeData reads body, of eventType, as want: the
// same data, and of the same type.
func decodesTo(t *testing.T, eventType, body string, want any) {
	t.Helper()
	v, err := events.DecodeData(eventType, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(t, v), normalize(t, want)) {
		t.Fatalf("DecodeData=%s\nwant        %s", normalize(t, v), normalize(t, want))
	}
	if got, want := reflect.TypeOf(v), reflect.TypeOf(want); got != want {
		t.Fatalf("DecodeData type=%v, want %v", got, want)
	}
}

func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodeStructured(t *testing.T) {
	t.Parallel()
	for _, s := range eventSamples {
		t.Run(s.name, func(t *testing.T) {
			e, data, err := events.DecodeStructured([]byte(s.body), 0)
			checkErr(t, err, s.field)
			if err != nil {
				return
			}
			if data == nil {
				t.Fatal("DecodeStructured returned no data")
			}
			if got := e.Subject(); got != "" && got != events.SessionID(data) {
				t.Fatalf("subject %q accepted for data of session %q", got, events.SessionID(data))
			}
			if err := e.Validate(); err != nil {
				t.Fatalf("sdk-go finds the event invalid: %v", err)
			}
		})
	}
}

func TestDecodeStructuredAttributes(t *testing.T) {
	t.Parallel()
	e, data, err := events.DecodeStructured([]byte(with(m{
		"time":        "2025-06-01T11:30:00.5+02:00",
		"dataschema":  "https://example.com/s.json",
		"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	})), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"ID", e.ID(), "9f0c2a4e-1b7d-4c55-8f3e-2d6a1e0b7c41"},
		{"Source", e.Source(), "https://agent.example.com"},
		{"Type", e.Type(), events.TypeTurnRecorded},
		{"Subject", e.Subject(), "s-42"},
		{"DataContentType", e.DataContentType(), "application/json"},
		{"DataSchema", e.DataSchema(), "https://example.com/s.json"},
		{"Namespace", events.Namespace(e), "acme"},
		{"User", events.User(e), "alice"},
		{"Agent", events.Agent(e), "helpdesk"},
		{"traceparent", e.Extensions()[events.ExtTraceParent].(string), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	} {
		if c.got != c.want {
			t.Errorf("%s=%q, want %q", c.name, c.got, c.want)
		}
	}
	if got, want := e.Time(), time.Date(2025, 6, 1, 9, 30, 0, 5e8, time.UTC); !got.Equal(want) {
		t.Errorf("Time=%v, want %v", got, want)
	}
	if got, want := data.(*events.TurnRecorded).Content, "hi"; got != want {
		t.Errorf("Content=%q, want %q", got, want)
	}
}

func TestDecodeStructuredDefaults(t *testing.T) {
	t.Parallel()
	e, _, err := events.DecodeStructured([]byte(with(m{"namespace": drop, "agent": drop, "datacontenttype": drop})), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := events.Namespace(e), events.DefaultNamespace; got != want {
		t.Errorf("Namespace=%q, want %q", got, want)
	}
	if got, want := events.Agent(e), ""; got != want {
		t.Errorf("Agent=%q, want %q", got, want)
	}
	if _, ok := e.Extensions()[events.ExtNamespace]; ok {
		t.Errorf("DecodeStructured added a namespace attribute; it must not change the event")
	}
}

func TestDecodeStructuredSize(t *testing.T) {
	t.Parallel()
	body := []byte(with(nil))
	if _, _, err := events.DecodeStructured(body, len(body)); err != nil {
		t.Fatalf("an event at the limit: %v", err)
	}
	_, _, err := events.DecodeStructured(body, len(body)-1)
	checkErr(t, err, "event")
	if !errors.Is(err, events.ErrTooLarge) {
		t.Fatalf("err=%v, want ErrTooLarge", err)
	}
	for _, n := range []int{len(body), len(body) - 1} {
		if !strings.Contains(err.Error(), itoa(n)) {
			t.Errorf("error %q does not say %d", err, n)
		}
	}

	big := []byte(with(m{"data": m{"session_id": "s-42", "turn_index": 0, "role": "user", "content": strings.Repeat("x", events.DefaultMaxEventBytes)}}))
	_, _, err = events.DecodeStructured(big, 0)
	if !errors.Is(err, events.ErrTooLarge) {
		t.Fatalf("a %d-byte event with the default limit: err=%v, want ErrTooLarge", len(big), err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestDecodeStructuredMessages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, want string }{
		{with(m{"specversion": "0.3"}), "0.3 is not accepted"},
		{with(m{"id": 42}), "must be a string, not a number"},
		{with(m{"source": "HTTPS://agent.example.com"}), `send "https://agent.example.com"`},
		{with(m{"data": drop, "data_base64": "e30="}), `send the data as a JSON object in "data"`},
		{with(m{"data": []any{}}), "must be a JSON object, not an array"},
		{with(m{"subject": "s-43"}), `data.session_id is "s-42"`},
		{with(m{"data": m{"session_id": "s-42", "turn_index": 0, "role": strings.Repeat("r", 1000), "content": "x"}}), `not "rrrr`},
	} {
		_, _, err := events.DecodeStructured([]byte(c.body), 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err=%v, want it to say %q", err, c.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("error is %d bytes long: %.100s…", len(err.Error()), err)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	good := func() event.Event {
		e, err := events.New("https://agent.example.com", events.TypeSessionEnded, "acme", "alice",
			events.SessionEnded{SessionID: "s1", MessageCount: 2})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		name   string
		change func(e *event.Event)
		field  string
	}{
		{"as built", func(e *event.Event) {}, ""},
		{"no context", func(e *event.Event) { e.Context = nil }, "specversion"},
		{"v0.3 context", func(e *event.Event) { e.SetSpecVersion(event.CloudEventsVersionV03) }, "specversion"},
		{"base64 data", func(e *event.Event) { e.DataBase64 = true }, "data_base64"},
		{"no data", func(e *event.Event) { e.DataEncoded = nil }, "data"},
		{"bad source", func(e *event.Event) { e.SetSource("http://[::1") }, "source"},
		{"empty id", func(e *event.Event) { e.Context.(*event.EventContextV1).ID = "" }, "id"},
		{"unknown type", func(e *event.Event) { e.SetType("session.started") }, "type"},
		{"integer user", func(e *event.Event) { e.SetExtension(events.ExtUser, 5) }, "user"},
		{"no user", func(e *event.Event) { e.SetExtension(events.ExtUser, nil) }, "user"},
		{"unknown extension", func(e *event.Event) { e.SetExtension("tenant", "x") }, "tenant"},
		{"agent", func(e *event.Event) { e.SetExtension(events.ExtAgent, "bot") }, ""},
		{"text content type", func(e *event.Event) { e.SetDataContentType("text/plain") }, "datacontenttype"},
		{"no content type", func(e *event.Event) { e.Context.(*event.EventContextV1).DataContentType = nil }, ""},
		{"relative dataschema", func(e *event.Event) { e.SetDataSchema("s.json") }, "dataschema"},
		{"no subject", func(e *event.Event) { e.SetSubject("") }, ""},
		{"other subject", func(e *event.Event) { e.SetSubject("s2") }, "subject"},
		{"zero time", func(e *event.Event) { e.SetTime(time.Time{}) }, ""}, // sdk-go drops a zero time
	} {
		t.Run(c.name, func(t *testing.T) {
			e := good()
			c.change(&e)
			v, err := events.Validate(e)
			checkErr(t, err, c.field)
			if err == nil && v == nil {
				t.Fatal("Validate returned no data")
			}
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	turn := events.TurnRecorded{SessionID: "s1", TurnIndex: 4, Role: events.RoleUser, Content: "我的项目叫 engram"}
	e, err := events.New("urn:agent:test", events.TypeTurnRecorded, "", "bob", &turn)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"Namespace", events.Namespace(e), events.DefaultNamespace},
		{"namespace attribute", e.Extensions()[events.ExtNamespace].(string), events.DefaultNamespace},
		{"User", events.User(e), "bob"},
		{"Subject", e.Subject(), "s1"},
		{"DataContentType", e.DataContentType(), event.ApplicationJSON},
		{"SpecVersion", e.SpecVersion(), "1.0"},
	} {
		if c.got != c.want {
			t.Errorf("%s=%q, want %q", c.name, c.got, c.want)
		}
	}
	if len(e.ID()) != 36 {
		t.Errorf("ID=%q, want a UUID", e.ID())
	}
	if d := time.Since(e.Time()); d < 0 || d > time.Minute {
		t.Errorf("Time=%v, want about now", e.Time())
	}

	// What a Go agent publishes, DecodeStructured accepts as the same event.
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	got, data, err := events.DecodeStructured(b, 0)
	if err != nil {
		t.Fatalf("DecodeStructured(%s): %v", b, err)
	}
	if !reflect.DeepEqual(data, &turn) {
		t.Fatalf("data=%+v, want %+v", data, turn)
	}
	if msg := sameEvent(got, e); msg != "" {
		t.Fatal(msg)
	}

	again, err := events.New("urn:agent:test", events.TypeTurnRecorded, "", "bob", turn)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID() == e.ID() {
		t.Fatalf("two events share the id %q", e.ID())
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	ok := events.SessionEnded{SessionID: "s1"}
	for _, c := range []struct {
		name                        string
		source, typ, namespace, usr string
		data                        any
		field                       string
	}{
		{"no user", "a", events.TypeSessionEnded, "", "", ok, "user"},
		{"no source", "", events.TypeSessionEnded, "", "u", ok, "source"},
		{"bad source", "http://[::1", events.TypeSessionEnded, "", "u", ok, "source"},
		{"unknown type", "a", "session.paused", "", "u", ok, "type"},
		{"wrong data", "a", events.TypeTurnRecorded, "", "u", ok, "data.message_count"},
		{"invalid data", "a", events.TypeSessionEnded, "", "u", events.SessionEnded{}, "data.session_id"},
		{"not an object", "a", events.TypeSessionEnded, "", "u", []int{1}, "data"},
		{"bad namespace", "a", events.TypeSessionEnded, "a\tb", "u", ok, "namespace"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := events.New(c.source, c.typ, c.namespace, c.usr, c.data)
			checkErr(t, err, c.field)
		})
	}
	if _, err := events.New("a", events.TypeSessionEnded, "", "u", make(chan int)); err == nil {
		t.Fatal("New marshalled a channel")
	}
}

func TestExtensionsOfEmptyEvent(t *testing.T) {
	t.Parallel()
	var e event.Event
	if got, want := events.Namespace(e), events.DefaultNamespace; got != want {
		t.Errorf("Namespace=%q, want %q", got, want)
	}
	if got := events.User(e) + events.Agent(e); got != "" {
		t.Errorf("User+Agent=%q, want empty", got)
	}
}

func TestSessionID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		data any
		want string
	}{
		{events.TurnRecorded{SessionID: "a"}, "a"},
		{&events.ContextCompressing{SessionID: "b"}, "b"},
		{events.SessionEnded{SessionID: "c"}, "c"},
		{&events.Episode{SessionID: "d"}, "d"},
		{&events.MemoryAdded{}, ""},
		{events.MemoryUpdated{MemoryID: "m"}, ""},
		{"s", ""},
		{(*events.TurnRecorded)(nil), ""},
		{nil, ""},
	} {
		if got := events.SessionID(c.data); got != c.want {
			t.Errorf("SessionID(%#v)=%q, want %q", c.data, got, c.want)
		}
	}
}

func TestDecodeBatch(t *testing.T) {
	t.Parallel()
	one, two := with(nil), with(m{"id": "2"})
	raws, err := events.DecodeBatch([]byte(" [" + one + ",\n" + two + "] "))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(raws), 2; got != want {
		t.Fatalf("len=%d, want %d", got, want)
	}
	for i, want := range []string{one, two} {
		if got := string(raws[i]); got != want {
			t.Errorf("raws[%d]=%s, want %s", i, got, want)
		}
	}
	for _, c := range []struct{ name, body, field string }{
		{"object", one, "batch"},
		{"empty", `[]`, "batch"},
		{"null", `null`, "batch"},
		{"nothing", ``, "batch"},
		{"broken", `[` + one + `,`, "batch[1]"},
		{"trailing", `[` + one + `] []`, "batch"},
		{"invalid UTF-8", "[\"\xff\"]", "batch[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := events.DecodeBatch([]byte(c.body))
			checkErr(t, err, c.field)
		})
	}
}

// sameEvent says how two events differ, or "" when they are the same
// event: same attributes (times compared as instants), extensions and data.
func sameEvent(a, b event.Event) string {
	for _, c := range []struct{ name, a, b string }{
		{"specversion", a.SpecVersion(), b.SpecVersion()},
		{"id", a.ID(), b.ID()},
		{"source", a.Source(), b.Source()},
		{"type", a.Type(), b.Type()},
		{"subject", a.Subject(), b.Subject()},
		{"datacontenttype", a.DataContentType(), b.DataContentType()},
		{"dataschema", a.DataSchema(), b.DataSchema()},
		{"data", string(a.Data()), string(b.Data())},
	} {
		if c.a != c.b {
			return c.name + ": " + c.a + " != " + c.b
		}
	}
	if !a.Time().Equal(b.Time()) {
		return "time: " + a.Time().String() + " != " + b.Time().String()
	}
	if !reflect.DeepEqual(a.Extensions(), b.Extensions()) {
		return "extensions differ"
	}
	return ""
}
