package memory

import (
	"errors"
	"fmt"
)

// Error codes. Each edge (HTTP, NATS) maps them to its own status in one table.
const (
	EINVALID      = "invalid"      // the caller sent something wrong; Message names it
	ETOOLARGE     = "too_large"    // a size limit was exceeded
	ENOTFOUND     = "not_found"    // the thing asked for does not exist (in the caller's scope)
	ECONFLICT     = "conflict"     // the request conflicts with the current state
	EUNAUTHORIZED = "unauthorized" // missing or wrong credentials
	EUNAVAILABLE  = "unavailable"  // a dependency is down; try again
	EINTERNAL     = "internal"     // a bug or an unexpected failure
)

// Error is engram's application error: a code a program can act on and a
// message a person can read. The message must never carry memory contents
// or secrets, because it is returned to callers and logged.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, or
// EINTERNAL for any other non-nil error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the first *Error in err's chain, or a
// generic text for other errors so internal details do not leak to callers.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
