package consolidation

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"github.com/sourcegraph/conc"
	"go.uber.org/zap"
)

// Run fires the scheduled rules at their times and renders cards as they
// fall due, until ctx ends; then it returns nil. since is when the
// schedule was last run (the zero time: now), so a restart can catch up.
func (c *Consolidator) Run(ctx context.Context, since time.Time) error {
	var wg conc.WaitGroup
	wg.Go(func() { c.runCards(ctx) })
	wg.Go(func() {
		_ = rules.RunSchedule(ctx, since, c.rules, func(ctx context.Context, f rules.Firing) { c.fire(ctx, f) })
	})
	wg.Wait()
	return nil
}

// fire runs one scheduled rule at its time. Errors are logged: a schedule
// has no event to retry, and the next firing runs the job again.
func (c *Consolidator) fire(ctx context.Context, f rules.Firing) {
	switch {
	case c.CardsLease && cardsOnly(f.Rule):
		// The cards' writer renders them; no other instance may.
		if !c.holdsCards() {
			return
		}
	case c.Claim != nil && !c.Claim(ctx, f):
		c.Log.Debug("scheduled rule run by another instance", zap.String(fieldRule, f.Rule.Name), zap.Time("at", f.At))
		return
	}
	if f.Rule.Mode == rules.ModeConfirm {
		c.ask(f.Rule, nil, f.At)
		return
	}
	start := time.Now()
	// A panic fails this firing, not the schedule.
	err := memory.Recovered(func() error { return c.runRule(ctx, f.Rule, nil, f.At) })
	if err != nil && ctx.Err() == nil {
		c.Log.Error("scheduled rule failed", zap.String(fieldRule, f.Rule.Name), zap.Time("at", f.At), zap.Error(err))
		return
	}
	c.Log.Info("scheduled rule ran", zap.String(fieldRule, f.Rule.Name), zap.Time("at", f.At),
		zap.Duration("took", time.Since(start)))
}

// JobRules returns the scheduled rules a job name means: the rule of that
// name, or every scheduled rule of the rule file of that name ("daily"
// for daily.yaml), in set order.
func JobRules(set *rules.Set, name string) []rules.Rule {
	var out []rules.Rule
	for _, r := range set.Rules {
		if r.Schedule == nil {
			continue
		}
		file := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(r.File), ".yaml"), ".yml")
		if r.Name == name || file == name {
			out = append(out, r)
		}
	}
	return out
}

// RunJob runs a job now, as if its schedule had fallen due at at: the
// scheduled rule named name, or every scheduled rule of the file named
// name (see JobRules), disabled ones included (an operator asked for it).
// It returns the rules it ran. A mode: confirm rule is queued, as its
// schedule would. Unlike a firing, it returns the first error.
func (c *Consolidator) RunJob(ctx context.Context, name string, at time.Time) ([]string, error) {
	ran, _, err := c.RunJobCounted(ctx, name, at)
	return ran, err
}

// RunJobCounted is RunJob that also says how many events of each type the
// job published, for the operator who asked (engram rules run).
func (c *Consolidator) RunJobCounted(ctx context.Context, name string, at time.Time) ([]string, map[string]int, error) {
	t := &tally{n: map[string]int{}}
	ran, err := c.runJob(context.WithValue(ctx, tallyKey{}, t), name, at)
	t.mu.Lock()
	defer t.mu.Unlock()
	return ran, t.n, err
}

func (c *Consolidator) runJob(ctx context.Context, name string, at time.Time) ([]string, error) {
	job := JobRules(c.rules(), name)
	if len(job) == 0 {
		return nil, memory.Errorf(memory.ENOTFOUND, "no scheduled rule or rule file named %q", name)
	}
	var ran []string
	for _, r := range job {
		if r.Mode == rules.ModeConfirm {
			c.ask(r, nil, at)
			ran = append(ran, r.Name)
			continue
		}
		if err := c.runRule(ctx, r, nil, at); err != nil {
			return ran, err
		}
		ran = append(ran, r.Name)
	}
	return ran, nil
}
