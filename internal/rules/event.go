package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// attributes are the CloudEvent attributes a condition may name; anything
// else must be under data.
var attributes = []string{
	"id", "source", "type", "subject", "time", "specversion",
	"datacontenttype", "dataschema", "namespace", "user", "agent",
}

// Event is what a rule sees of a CloudEvent: its attributes and its JSON
// data, looked up by path ("type", "user", "data.message_count",
// "data.turns.0.role"). Numbers in data are float64, as encoding/json
// decodes them. The zero Event has no type and no fields.
type Event struct {
	attrs   map[string]any
	data    any
	hasData bool
	// lazy, when set, gives data on the first look under data
	// (NewEventFunc): most events meet no rule that reads their data.
	lazy *lazyData
}

type lazyData struct {
	once sync.Once
	get  func() ([]byte, error)
	data any
	has  bool
}

func (l *lazyData) load() (any, bool) {
	l.once.Do(func() {
		b, err := l.get()
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return
		}
		l.has = json.Unmarshal(b, &l.data) == nil
	})
	return l.data, l.has
}

// ParseEvent reads a CloudEvent in JSON structured mode: attributes at the
// top level, data under "data". A binary payload ("data_base64") is no
// data to rules. A worker holding an sdk-go event can pass json.Marshal of
// it.
func ParseEvent(structured []byte) (Event, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(structured))
	if err := dec.Decode(&m); err != nil {
		return Event{}, fmt.Errorf("read event: %w", err)
	}
	if dec.More() {
		return Event{}, errors.New("read event: more than one JSON value")
	}
	if m == nil {
		return Event{}, errors.New("read event: not a JSON object")
	}
	if t, ok := m["type"].(string); !ok || t == "" {
		return Event{}, errors.New("read event: no type attribute")
	}
	ev := Event{attrs: m}
	if d, ok := m["data"]; ok {
		ev.data, ev.hasData = d, true
	}
	delete(m, "data")
	delete(m, "data_base64")
	return ev, nil
}

// NewEvent builds an Event from attributes (type, id, source, subject,
// time, namespace, user, …) and the event's JSON data, which may be empty.
func NewEvent(attrs map[string]any, data []byte) (Event, error) {
	ev := Event{attrs: make(map[string]any, len(attrs))}
	for k, v := range attrs {
		ev.attrs[k] = v
	}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &ev.data); err != nil {
			return Event{}, fmt.Errorf("read event data: %w", err)
		}
		ev.hasData = true
	}
	return ev, nil
}

// NewEventFunc is NewEvent with the data given by data, which is called
// at most once, and only when a condition first looks under data. Data
// that data cannot give, or that is not JSON, is no data: for data that
// is known to encode (a decoded event's), where NewEvent's error could
// not happen. The event keeps attrs, which the caller must not change
// after (it runs for every event: a copy would be one more map each).
func NewEventFunc(attrs map[string]any, data func() ([]byte, error)) Event {
	return Event{attrs: attrs, lazy: &lazyData{get: data}}
}

// Type is the event's type attribute.
func (e Event) Type() string {
	t, _ := e.attrs["type"].(string)
	return t
}

// Lookup returns the value at path and whether it is there. A JSON null is
// there, with value nil.
func (e Event) Lookup(path string) (any, bool) {
	head, rest, nested := strings.Cut(path, ".")
	if head != "data" {
		if nested {
			return nil, false
		}
		v, ok := e.attrs[head]
		return v, ok
	}
	v, has := e.data, e.hasData
	if e.lazy != nil {
		v, has = e.lazy.load()
	}
	if !has {
		return nil, false
	}
	for nested {
		var seg string
		seg, rest, nested = strings.Cut(rest, ".")
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[seg]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}
