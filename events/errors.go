package events

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// ErrTooLarge is matched (errors.Is) by the error DecodeStructured returns
// for an event over its size limit, so that an HTTP edge can answer 413.
var ErrTooLarge = errors.New("event too large")

// FieldError is every validation error of this package. Field names the
// offending part of the event the way a producer would look for it:
// an attribute ("specversion", "namespace"), a path into the data
// ("data.turns[2].role"), or "event" / "data" / "batch" for a problem with
// the whole document.
type FieldError struct {
	Field   string
	Problem string

	err error // for errors.Is, e.g. ErrTooLarge
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

func (e *FieldError) Unwrap() error { return e.err }

func fieldErr(field, problem string) *FieldError {
	return &FieldError{Field: field, Problem: problem}
}

// quote shows a producer's value in an error message without letting a
// megabyte-long value make a megabyte-long message.
func quote(s string) string {
	const limit = 64
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
