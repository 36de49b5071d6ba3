package rules

import (
	"context"
	"time"
)

// recheck bounds how long RunSchedule sleeps, so a reloaded Set's new or
// changed schedules take effect within it.
const recheck = time.Minute

// RunSchedule fires the scheduled rules of current() at their times until
// ctx ends, then returns nil. It starts from since (the zero time: now),
// so a worker that remembers when it last ran can catch up on what fell
// due while it was down; each rule fires once however often it fell due
// (see Set.Due). fire runs on the calling goroutine, one firing at a time,
// in time order; a firing that takes long delays the ones after it but
// loses none. current may return nil: no rules yet.
//
// Time comes from the time package, so tests drive it with
// testing/synctest.
func RunSchedule(ctx context.Context, since time.Time, current func() *Set, fire func(context.Context, Firing)) error {
	last := since
	if last.IsZero() {
		last = time.Now()
	}
	for {
		set := current()
		if set == nil {
			set = &Set{}
		}
		now := time.Now()
		if now.After(last) {
			for _, f := range set.Due(last, now) {
				if ctx.Err() != nil {
					return nil //nolint:nilerr // stopping is how the loop ends, not a failure
				}
				fire(ctx, f)
			}
			last = now
		}
		wait := recheck
		if up := set.Upcoming(last); len(up) > 0 {
			wait = min(wait, time.Until(up[0].At))
		}
		timer := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}
