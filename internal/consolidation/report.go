package consolidation

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/cards"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
)

// report runs report (seed 000 §7.4 step 8, "保存归纳报告"): what the
// last window did for a user — episodes told, memories learned, replaced,
// merged and archived, days of the log compressed, memories waiting for
// the user, and the persona traits promoted to the agent's card in it
// (step 6) — counted from the read model and saved as a
// consolidation.reported event, one per user and night. A user for whom
// nothing happened gets none.
func (c *Consolidator) report(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	since := r.at.Add(-a.Duration("window"))
	rep, err := c.Store.Changes(ctx, scope, since, r.at)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "count the changes: %v", err)
	}
	mems, err := c.Store.ActiveMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
	}
	var traits []string
	var traitTexts []string
	for _, m := range cards.PersonaTraits(mems, r.at) {
		changed := m.Updated
		if m.Created.After(changed) {
			changed = m.Created
		}
		if changed.After(since) && !changed.After(r.at) && len(traits) < events.MaxReportedTraits {
			traits = append(traits, m.ID)
			traitTexts = append(traitTexts, m.Content)
		}
	}
	if rep.Episodes+rep.Learned+rep.Superseded+rep.Merged+rep.Archived+rep.DaysCompressed+rep.Pending == 0 && len(traits) == 0 {
		return nil
	}
	date := r.at.Format(time.DateOnly)
	d := &events.ConsolidationReport{Date: date, Since: since, Episodes: rep.Episodes, Learned: rep.Learned,
		Superseded: rep.Superseded, Merged: rep.Merged, Archived: rep.Archived, DaysCompressed: rep.DaysCompressed,
		Pending: rep.Pending, Traits: traits, Text: chars.CutBytes(reportText(date, rep, traitTexts), events.MaxReportBytes)}
	return emitErr(c.emit(ctx, memory.Outgoing{Type: events.TypeConsolidationReported, ID: firingID("report", r, scope),
		Scope: scope, Time: r.at, Data: d}))
}

// reportText is a report as a person reads it.
func reportText(date string, r memory.Report, traits []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Consolidation of %s: %d episodes told, %d memories learned, %d replaced by a newer version, "+
		"%d merged as duplicates, %d archived, %d days of the log compressed.", date, r.Episodes, r.Learned, r.Superseded,
		r.Merged, r.Archived, r.DaysCompressed)
	if r.Pending > 0 {
		fmt.Fprintf(&b, " %d memories wait for the user's confirmation.", r.Pending)
	}
	if len(traits) > 0 {
		b.WriteString("\nPromoted to the agent's card:")
		for _, t := range traits {
			b.WriteString("\n- " + chars.OneLine(t))
		}
	}
	return b.String()
}

// tally counts the events a job publishes, by type, for its caller.
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

type tallyKey struct{}

// emit publishes outs, counting them for a job that asked (RunJob).
func (c *Consolidator) emit(ctx context.Context, outs ...memory.Outgoing) error {
	err := c.Emit(ctx, outs...)
	if t, ok := ctx.Value(tallyKey{}).(*tally); ok && err == nil {
		t.mu.Lock()
		for _, o := range outs {
			t.n[o.Type]++
		}
		t.mu.Unlock()
	}
	return err
}
