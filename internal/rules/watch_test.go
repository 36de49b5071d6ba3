package rules

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/engramhq/engram/events"
)

const interval = 2 * time.Second

// errorLog collects what a Watcher reports.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// startWatcher runs a Watcher on dir inside the bubble until the test ends.
func startWatcher(t *testing.T, dir string) (*Watcher, *errorLog) {
	t.Helper()
	log := &errorLog{}
	w, err := NewWatcher(dir, events.Types(), interval, log.add, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return w, log
}

// tick lets the watcher poll once.
func tick() {
	time.Sleep(interval)
	synctest.Wait()
}

const ruleA = "rules:\n  - name: a\n    on: session.ended\n    do: [update_scratchpad]\n"

func TestWatcherReloads(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "a.yaml", ruleA)
		w, errs := startWatcher(t, dir)
		first := w.Current()
		if got, want := names(first.Rules), "a"; got != want {
			t.Fatalf("rules %s, want %s", got, want)
		}

		tick()
		if w.Current() != first {
			t.Fatal("reloaded with nothing changed")
		}

		// A good new file is picked up.
		write(t, dir, "b.yaml", "rules:\n  - name: b\n    schedule: \"0 3 * * *\"\n    do: [decay]\n")
		tick()
		good := w.Current()
		if got, want := names(good.Rules), "a,b"; got != want {
			t.Fatalf("after adding b.yaml: rules %s, want %s", got, want)
		}

		// A broken edit is reported with its line and the good set runs on.
		write(t, dir, "b.yaml", "rules:\n  - name: b\n    schedule: \"0 3 * * *\"\n    do: [decya]\n")
		tick()
		if w.Current() != good {
			t.Fatal("a broken file replaced the rules in force")
		}
		got := errs.all()
		if len(got) != 1 {
			t.Fatalf("%d errors reported, want 1: %v", len(got), got)
		}
		var es Errors
		if !errors.As(got[0], &es) || len(es) != 1 {
			t.Fatalf("reported %v, want one Error", got[0])
		}
		if want := filepath.Join(dir, "b.yaml") + `:4:10: rule b: do[0]: unknown action "decya" (did you mean decay?)`; es[0].Error() != want {
			t.Fatalf("reported %q, want %q", es[0].Error(), want)
		}

		// The same broken files are reported once, not at every poll.
		tick()
		tick()
		if n := len(errs.all()); n != 1 {
			t.Fatalf("%d reports of one broken version, want 1", n)
		}

		// Fixed: the new rules take over.
		write(t, dir, "b.yaml", "rules:\n  - name: b2\n    schedule: \"0 4 * * *\"\n    do: [decay]\n")
		tick()
		if got, want := names(w.Current().Rules), "a,b2"; got != want {
			t.Fatalf("after the fix: rules %s, want %s", got, want)
		}

		// Removing a file removes its rules.
		if err := os.Remove(filepath.Join(dir, "a.yaml")); err != nil {
			t.Fatal(err)
		}
		tick()
		if got, want := names(w.Current().Rules), "b2"; got != want {
			t.Fatalf("after removing a.yaml: rules %s, want %s", got, want)
		}
		if n := len(errs.all()); n != 1 {
			t.Fatalf("%d errors reported, want still 1", n)
		}
	})
}

func TestWatcherMissingDirectoryKeepsRules(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "rules")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "a.yaml", ruleA)
		w, errs := startWatcher(t, dir)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		tick()
		tick()
		if got, want := names(w.Current().Rules), "a"; got != want {
			t.Fatalf("rules %s, want %s", got, want)
		}
		if n := len(errs.all()); n != 1 {
			t.Fatalf("%d errors reported, want 1", n)
		}
	})
}

func TestNewWatcherFailsOnBrokenRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.yaml", "rules:\n  - name: a\n    on: session.endd\n    do: [decay]\n")
	_, err := NewWatcher(dir, events.Types(), interval, nil, nil)
	var es Errors
	if !errors.As(err, &es) || es[0].Line != 3 || es[0].Col != 9 {
		t.Fatalf("NewWatcher error %v, want Errors at 3:9", err)
	}
}

func TestWatcherCurrentIsSafe(t *testing.T) {
	t.Parallel()
	// Readers run while the watcher reloads; the race detector checks.
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "a.yaml", ruleA)
		w, _ := startWatcher(t, dir)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for ctx.Err() == nil {
					if len(w.Current().Rules) == 0 {
						t.Error("empty set")
					}
					time.Sleep(100 * time.Millisecond)
				}
			})
		}
		for i := range 5 {
			write(t, dir, "b.yaml", "rules:\n  - name: b"+string(rune('0'+i))+"\n    on: turn.recorded\n    do: [decay]\n")
			tick()
		}
		cancel()
		wg.Wait()
		if got, want := names(w.Current().Rules), "a,b4"; got != want {
			t.Fatalf("rules %s, want %s", got, want)
		}
	})
}

func TestRunSchedule(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The bubble's clock starts at 2000-01-01 00:00 UTC.
		start := time.Now()
		daily := mustSet(t, "rules:\n  - name: nightly\n    schedule: \"0 3 * * *\"\n    tz: UTC\n    do: [decay]\n")
		both := mustSet(t, "rules:\n  - name: nightly\n    schedule: \"0 3 * * *\"\n    tz: UTC\n    do: [decay]\n"+
			"  - name: half\n    schedule: \"*/30 * * * *\"\n    tz: UTC\n    do: [decay]\n")
		var mu sync.Mutex
		current := daily
		var fired []string
		slow := false
		fire := func(ctx context.Context, f Firing) {
			if got := time.Now(); got.Before(f.At) {
				t.Errorf("%s fired at %v, before its time %v", f.Rule.Name, got, f.At)
			}
			mu.Lock()
			fired = append(fired, f.Rule.Name+"@"+f.At.Format("02 15:04"))
			s := slow
			mu.Unlock()
			if s && f.Rule.Name == "nightly" {
				time.Sleep(2 * time.Hour) // a long job
			}
		}
		get := func() *Set { mu.Lock(); defer mu.Unlock(); return current }
		take := func() []string {
			mu.Lock()
			defer mu.Unlock()
			out := fired
			fired = nil
			return out
		}
		runSchedule(t, time.Time{}, get, fire)

		time.Sleep(2*time.Hour + 59*time.Minute)
		synctest.Wait()
		if got := take(); len(got) != 0 {
			t.Fatalf("fired %v before 03:00", got)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got, want := joined(take()), "nightly@01 03:00"; got != want {
			t.Fatalf("at 03:00 fired %s, want %s", got, want)
		}
		if elapsed := time.Since(start); elapsed != 3*time.Hour {
			t.Fatalf("elapsed %v", elapsed)
		}

		// A reloaded set takes effect at the next check.
		mu.Lock()
		current = both
		mu.Unlock()
		time.Sleep(time.Hour)
		synctest.Wait()
		if got, want := joined(take()), "half@01 03:30, half@01 04:00"; got != want {
			t.Fatalf("after reload fired %s, want %s", got, want)
		}

		// A long nightly job: the half-hourly rule, due with it at 03:00,
		// runs after it; of its times while the job ran (03:30 to 05:00)
		// only the latest fires.
		mu.Lock()
		slow = true
		mu.Unlock()
		time.Sleep(23 * time.Hour)
		synctest.Wait()
		take()
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if got, want := joined(take()), "half@02 03:00, half@02 05:00"; got != want {
			t.Fatalf("after a 2h job fired %s, want %s", got, want)
		}
	})
}

// runSchedule runs RunSchedule inside the bubble until the test ends.
func runSchedule(t *testing.T, since time.Time, current func() *Set, fire func(context.Context, Firing)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- RunSchedule(ctx, since, current, fire) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunSchedule: %v", err)
		}
	})
}

func TestRunScheduleCatchesUp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		set := mustSet(t, "rules:\n  - name: nightly\n    schedule: \"0 3 * * *\"\n    tz: UTC\n    do: [decay]\n")
		var mu sync.Mutex
		var fired []Firing
		// Down for three days: the nightly job runs once on start.
		since := time.Now().Add(-72 * time.Hour)
		runSchedule(t, since, func() *Set { return set }, func(_ context.Context, f Firing) {
			mu.Lock()
			defer mu.Unlock()
			fired = append(fired, f)
		})
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(fired) != 1 || !fired[0].At.Equal(time.Date(1999, 12, 31, 3, 0, 0, 0, time.UTC)) {
			t.Fatalf("fired %+v, want nightly once at 1999-12-31 03:00", fired)
		}
	})
}

// A rules directory created after start is loaded by the next poll; until
// then the fallback rules are in force, and a broken first version keeps
// them.
func TestWatcherDirectoryCreatedLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "rules")
		builtin := mustSet(t, "rules:\n  - name: builtin\n    on: session.ended\n    do: [build_episode]\n")
		log := &errorLog{}
		w, err := NewWatcherOr(dir, events.Types(), interval, builtin, log.add, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- w.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}()
		tick()
		if w.Current() != builtin || len(log.all()) != 0 {
			t.Fatalf("no directory: rules %s, errors %v; want the fallback, none", names(w.Current().Rules), log.all())
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "a.yaml", "rules:\n  - name: a\n    on: session.endd\n    do: [decay]\n")
		tick()
		if w.Current() != builtin || len(log.all()) != 1 {
			t.Fatalf("a broken first version: rules %s, %d errors; want the fallback, 1", names(w.Current().Rules), len(log.all()))
		}
		write(t, dir, "a.yaml", ruleA)
		tick()
		if got, want := names(w.Current().Rules), "a"; got != want {
			t.Fatalf("the directory's rules %s, want %s", got, want)
		}
	})
}
