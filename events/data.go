package events

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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

func knownType(t string) bool {
	_, ok := lookup(t)
	return ok
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
	return checkName(field, s, MaxIDBytes, required)
}

// checkName applies the identifier rules with another limit, for short
// labels such as a memory's subject and predicate.
func checkName(field, s string, limit int, required bool) error {
	if err := checkProse(field, s, limit, required); err != nil {
		return err
	}
	for _, c := range s {
		if unicode.IsControl(c) {
			return fieldErr(field, fmt.Sprintf("contains the control character %U", c))
		}
	}
	return nil
}

// checkProse checks free text: it may hold any character but is bounded
// in bytes.
func checkProse(field, s string, limit int, required bool) error {
	switch {
	case s == "" && required:
		return fieldErr(field, "required")
	case len(s) > limit:
		return fieldErr(field, fmt.Sprintf("is %d bytes long; the limit is %d", len(s), limit))
	case !utf8.ValidString(s):
		return fieldErr(field, "is not valid UTF-8") // only a Go producer's value can be
	}
	return nil
}

// checkTexts checks a list of at most limit short, non-empty texts.
func checkTexts(field string, texts []string, limit int, what string) error {
	if err := checkCount(field, len(texts), 0, limit, what); err != nil {
		return err
	}
	return each(field, len(texts), func(i int) error { return checkProse("", texts[i], MaxNoteBytes, true) })
}

// oneOf checks a required enumerated string.
func oneOf(field, s string, allowed ...string) error {
	if s == "" {
		return fieldErr(field, "required")
	}
	if slices.Contains(allowed, s) {
		return nil
	}
	list := strings.Join(allowed[:len(allowed)-1], ", ") + " or " + allowed[len(allowed)-1]
	return fieldErr(field, fmt.Sprintf("must be %s, not %s", list, quote(s)))
}

// checkInt checks that n is from lo to hi.
func checkInt[T int | int64 | uint64](field string, n, lo, hi T) error {
	if n < lo || n > hi {
		return fieldErr(field, fmt.Sprintf("must be an integer from %d to %d, not %d", lo, hi, n))
	}
	return nil
}

// checkFraction checks a number from 0 to 1 (the reader has compared
// what was written).
func checkFraction(field string, f float64) error {
	if !(f >= 0 && f <= 1) {
		return fieldErr(field, fmt.Sprintf("must be a number from 0 to 1, not %v", f))
	}
	return nil
}

// checkCount checks a list's length: from lo (0 or 1) to hi items.
func checkCount(field string, n, lo, hi int, what string) error {
	switch {
	case n > hi:
		return fieldErr(field, fmt.Sprintf("holds more than %d %s", hi, what))
	case n < lo:
		return fieldErr(field, "must not be empty")
	}
	return nil
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

// checkIDSet checks a list of at most limit identifiers, none empty and
// none twice: lists of memories, tools and entities are sets, and a
// repeat is a producer's mistake that would count twice downstream.
func checkIDSet(field string, ids []string, limit int, what string) error {
	if err := checkCount(field, len(ids), 0, limit, what); err != nil {
		return err
	}
	seen := make(map[string]bool, len(ids))
	return each(field, len(ids), func(i int) error {
		if err := checkID("", ids[i], true); err != nil {
			return err
		}
		if seen[ids[i]] {
			return fieldErr("", fmt.Sprintf("%s is listed twice", quote(ids[i])))
		}
		seen[ids[i]] = true
		return nil
	})
}

// checkIndexes checks 1 to limit turn indices, ascending, each once, so
// that two lists of the same turns compare equal.
func checkIndexes(field string, turns []int, limit int) error {
	if err := checkCount(field, len(turns), 1, limit, "turn indices"); err != nil {
		return err
	}
	return each(field, len(turns), func(i int) error {
		if i > 0 && turns[i] <= turns[i-1] {
			return fieldErr("", fmt.Sprintf("is %d after %d; turn indices must be ascending, each once", turns[i], turns[i-1]))
		}
		return checkInt("", turns[i], 0, MaxCount)
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
