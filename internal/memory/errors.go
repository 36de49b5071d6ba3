package memory

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
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

// PanicError is a panic recovered from a worker's code (Recovered): a bug,
// contained so that the worker goes on. It counts as an EINTERNAL failure
// of what was being done; Error says where the panic happened, Stack
// shows how it got there.
type PanicError struct {
	Value any
	// Where is the function, file and line that panicked.
	Where string
	// Stack is the panicking goroutine's frames, from the panic up, at
	// most maxPanicFrames of them, one a line.
	Stack string
}

func (e *PanicError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("panic: %v", e.Value)
	}
	return fmt.Sprintf("panic: %v (in %s)", e.Value, e.Where)
}

// Unwrap is the panic's value when it was an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// maxPanicFrames bounds PanicError.Stack: enough to see the handler's
// call, short enough for a log line.
const maxPanicFrames = 12

// Recovered runs f and returns its error, or a *PanicError if it panics.
func Recovered(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = newPanicError(v)
		}
	}()
	return f()
}

// newPanicError is called by the deferred function of Recovered, so the
// stack it reads starts in the runtime's panic machinery, then the
// function that panicked.
func newPanicError(v any) *PanicError {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	e := &PanicError{Value: v}
	var stack strings.Builder
	count := 0
	for {
		f, more := frames.Next()
		// The runtime's own frames (gopanic, the map or slice check that
		// raised it) say nothing of which code was at fault.
		if strings.HasSuffix(f.Function, "/memory.Recovered") {
			break // what called f: the worker's machinery, not the fault
		}
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			line := fmt.Sprintf("%s %s:%d", f.Function, filepath.Base(f.File), f.Line)
			if e.Where == "" {
				e.Where = line
			}
			if count < maxPanicFrames {
				stack.WriteString(line + "\n")
				count++
			}
		}
		if !more || count == maxPanicFrames {
			break
		}
	}
	e.Stack = strings.TrimSuffix(stack.String(), "\n")
	return e
}
