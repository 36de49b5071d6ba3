// Package wait is how tests wait for something to happen: they poll a
// condition with a deadline instead of sleeping, and when the deadline
// passes the test fails with what the condition last saw, not only what
// it waited for (nats-server's checkFor). It is for tests only.
package wait

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// Limit is how long For waits: long enough for a loaded two-core machine
// running other tests beside.
const Limit = 60 * time.Second

// every is how often a condition is polled.
const every = 5 * time.Millisecond

// For polls check until it returns nil, and fails t if Limit passes
// first, naming what it waited for and check's last error.
func For(t testing.TB, what string, check func() error) {
	t.Helper()
	Within(t, Limit, what, check)
}

// Within is For with another limit.
func Within(t testing.TB, limit time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last seen: %v", limit, what, err)
		}
		time.Sleep(every)
	}
}

// Until is For for a condition that can only say yes or no; the failure
// then says only what was waited for. A condition that can say what it
// saw returns an error for For instead.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	UntilWithin(t, Limit, what, cond)
}

// UntilWithin is Until with another limit.
func UntilWithin(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	Within(t, limit, what, func() error {
		if !cond() {
			return errNotYet
		}
		return nil
	})
}

var errNotYet = errors.New("the condition did not hold")

// Equal returns nil when got is want, and otherwise an error that says
// both, for a check: wait.For(t, "…", func() error { return wait.Equal(count(), 3) }).
func Equal[T comparable](got, want T) error {
	if got == want {
		return nil
	}
	return fmt.Errorf("got %v, want %v", got, want)
}
