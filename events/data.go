package events

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Data is the data of an event: a pointer to the type Types' registry
// gives its event type (see DecodeData).
type Data interface {
	// Validate checks what the type's JSON Schema says and what a schema
	// cannot say (lengths in bytes, order, one value against another),
	// and fills in the documented defaults. Its error is a *FieldError
	// naming the field within the data ("turns[2].role").
	Validate() error
}

// registration ties an event type to its data's type: new returns a
// fresh value, with any default a member takes when it is left out.
type registration struct {
	eventType string
	new       func() Data
}

// registry is every event type, inputs first; each file registers the
// types it defines beside them.
var registry = slices.Concat(inputTypes, derivedTypes, consolidationTypes, embeddingTypes, identityTypes)

// Types returns every event type Validate accepts: the input types, then
// the derived ones.
func Types() []string {
	out := make([]string, len(registry))
	for i, r := range registry {
		out[i] = r.eventType
	}
	return out
}

func lookup(eventType string) (registration, bool) {
	for _, r := range registry {
		if r.eventType == eventType {
			return r, true
		}
	}
	return registration{}, false
}

// DecodeData strictly decodes and validates the data of a known event type
// (see Types) and returns a pointer to its data type, e.g. *TurnRecorded
// for turn.recorded (*PendingDecision for all three pending.* types). An
// unknown member, a repeated key, data after the JSON value, a wrong JSON
// type or a broken rule is a *FieldError naming the field
// ("data.turns[2].role"); an unknown event type is a *FieldError for
// "type".
func DecodeData(eventType string, data []byte) (Data, error) {
	r, ok := lookup(eventType)
	if !ok {
		return nil, unknownType(eventType)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fieldErr("data", "required")
	}
	v := r.new()
	if err := read(data, "data", "data", v); err != nil {
		return nil, err
	}
	if err := v.Validate(); err != nil {
		return nil, within("data", err)
	}
	if t, ok := v.(interface{ validateAs(eventType string) error }); ok {
		if err := t.validateAs(eventType); err != nil {
			return nil, within("data", err)
		}
	}
	return v, nil
}

// SessionID returns the session of data, the value of its session_id
// member, or "" for data without one: every type without that member,
// a MemoryAdded or MemoryImportant that names no session, and anything
// else.
func SessionID(data any) string {
	v := reflect.Indirect(reflect.ValueOf(data))
	if !v.IsValid() {
		return "" // nil, or a nil pointer
	}
	for _, f := range fieldsOf(v.Type()) {
		if f.name == "session_id" {
			return v.Field(f.index).String()
		}
	}
	return ""
}

func unknownType(t string) error {
	if t == "" {
		return fieldErr("type", "required")
	}
	return fieldErr("type", fmt.Sprintf("%s is not an engram event type (want one of %s)",
		quote(t), strings.Join(Types(), ", ")))
}

// checkID applies the identifier rules: at most MaxIDBytes of UTF-8 and no
// control characters, which would break logs, subjects and terminals.
// An empty optional identifier is absent.
func checkID(field, s string, required bool) error {
	return within(field, rule{kind: "id", max: MaxIDBytes}.text(s, required))
}

// each runs check on the elements of a list, and names the first
// failure within the list: check's field is relative to element i.
func each(list string, n int, check func(i int) error) error {
	for i := range n {
		if err := check(i); err != nil {
			return within(at(list, i), err)
		}
	}
	return nil
}

// unique names the first item of a list whose key an earlier item has:
// member is the key's name within an item.
func unique(list, member string, n int, key func(i int) string, advice string) error {
	seen := make(map[string]int, n)
	return each(list, n, func(i int) error {
		if j, ok := seen[key(i)]; ok {
			return fieldErr(member, fmt.Sprintf("%s is also %s; %s", quote(key(i)), at(list, j), advice))
		}
		seen[key(i)] = i
		return nil
	})
}

// when is a rule between values, for firstErr: problem with field if
// broken.
func when(broken bool, field, problem string) error {
	if broken {
		return fieldErr(field, problem)
	}
	return nil
}

// firstErr returns the first error of checks that are cheap enough to run
// all of.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
