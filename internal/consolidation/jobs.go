package consolidation

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/dedupe"
	"github.com/engramhq/engram/internal/maintain"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"go.uber.org/zap"
)

// The scheduled jobs: each reads one user's state from the read model,
// decides with the pure packages (dedupe, maintain) and publishes what it
// decided. Ids are the job, the user and the firing time, so running a job
// twice for the same firing publishes nothing new.

// firingID is the id of what a job publishes for a user at a firing.
func firingID(job string, r *run, scope memory.Scope, parts ...string) string {
	id := job + "-" + scopeKey(scope) + "-" + strconv.FormatInt(r.at.Unix(), 10)
	for _, p := range parts {
		id += "-" + p
	}
	return id
}

// compressDaily runs compress_daily (seed 001 §7.2): each of the last
// `days` days (yesterday first) whose event log is not compressed yet
// becomes tier-2 knowledge. A day with no log entry but with episodes gets
// one, written from them. Each entry turns into one memory.added (an event
// memory, which fades with its 30-day half-life) and is marked compressed
// by a daily.summarized of source compression. With a Model the
// model writes the summary both carry (one call per entry); when it fails
// the log is kept as written. The model's text is in the events, so a
// replay never calls it.
func (c *Consolidator) compressDaily(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	days := max(a.Int("days"), 1)
	var out []memory.Outgoing
	for k := 1; k <= days; k++ {
		day := r.at.AddDate(0, 0, -k)
		date := day.Format(time.DateOnly)
		entries, err := c.Store.DailySummaries(ctx, scope, date)
		if err != nil {
			return memory.Errorf(memory.EUNAVAILABLE, "read daily summaries: %v", err)
		}
		if len(entries) == 0 {
			start := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, day.Location())
			eps, err := c.Store.EpisodesEnded(ctx, scope, start, start.AddDate(0, 0, 1))
			if err != nil {
				return memory.Errorf(memory.EUNAVAILABLE, "read the day's episodes: %v", err)
			}
			if e, ok := daySummary(scope, date, eps); ok {
				entries = append(entries, e)
			}
		}
		for _, e := range entries {
			if e.Compressed {
				continue
			}
			tag := date + "-" + hashOf(e.Channel)[:8]
			// A day written in many parts may be longer than one entry holds.
			text := chars.CutBytes(e.Summary, events.MaxDailySummaryBytes)
			if c.Model != nil {
				s, err := summarizeDay(ctx, c.Model, date, e.Channel, e.Summary)
				if err != nil {
					if ctx.Err() != nil {
						return fmt.Errorf("compress daily: %w", ctx.Err())
					}
					c.Log.Warn("day summary by the model failed; the log is kept as written", zap.String(fieldUser, scopeKey(scope)),
						zap.String("date", date), zap.Error(err))
				} else {
					text = s
				}
			}
			summary := &events.DailySummary{Date: date, Channel: e.Channel, Summary: text, RawTokens: e.RawTokens,
				Source: events.SourceCompression}
			addedID := firingID("daily-memory", r, scope, tag)
			content := chars.CutBytes(fmt.Sprintf("%s (%s): %s", date, e.Channel, text), events.MaxMemoryContentBytes)
			out = append(out,
				memory.Outgoing{Type: events.TypeMemoryAdded, ID: addedID, Scope: scope, Time: r.at,
					Data: &events.MemoryAdded{MemoryID: memory.MemoryID(Source, addedID, 0), Kind: events.KindContext,
						Category: events.CategoryEvent, Subject: date, Predicate: "event_log", Content: content,
						Topic: "daily", Importance: 0.4, Confidence: 1, Tier: events.TierKnowledge}},
				memory.Outgoing{Type: events.TypeDailySummarized, ID: firingID("daily-compressed", r, scope, tag),
					Scope: scope, Time: r.at, Data: summary})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return emitErr(c.emit(ctx, out...))
}

// daySummary writes a day's event log entry from its episodes: one line
// each, in the order they ended, cut to the event's limit.
func daySummary(scope memory.Scope, date string, eps []memory.Episode) (memory.DailySummary, bool) {
	if len(eps) == 0 {
		return memory.DailySummary{}, false
	}
	var b strings.Builder
	for _, ep := range eps {
		line := ep.Summary
		if ep.Goal != "" && !strings.Contains(ep.Summary, ep.Goal) {
			line = ep.Goal + " — " + ep.Summary
		}
		fmt.Fprintf(&b, "- [%s] %s\n", ep.Outcome, strings.Join(strings.Fields(line), " "))
	}
	text := strings.TrimSpace(b.String())
	return memory.DailySummary{Namespace: scope.Namespace, User: scope.User, Date: date, Channel: "engram",
		Summary: chars.CutBytes(text, events.MaxDailySummaryBytes), RawTokens: memory.EstimateTokens(text)}, true
}

// dedupe runs dedupe (seed 001 §7.3, seed 002 §6.1, seed 000 §5.7): per
// project/topic partition of at least min_entries memories, memories whose
// words (dedupe.Key: stems, digits, no stopwords, negation kept) are more
// similar than similarity are clustered in O(n log n) and each cluster is
// merged into its most important member. With a Judge (a model), clusters
// are found at the looser model_similarity and the model decides inside
// each, in one call per cluster: what it groups merges too, under its
// wording, and the event names it; what the words alone join merges
// anyway. A failed call leaves the cluster to the words. Without a Judge
// but with a Rewriter the model rewrites each kept memory once.
func (c *Consolidator) dedupe(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	mems, err := c.Store.ActiveMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
	}
	items := make([]dedupe.Item, len(mems))
	byID := make(map[string]dedupe.Item, len(mems))
	for i, m := range mems {
		items[i] = dedupe.Item{ID: m.ID, Text: m.Content, Key: dedupe.Key(m.Content), Importance: m.Importance,
			Updated: m.Updated, Partition: m.Project + "/" + m.Topic}
		byID[m.ID] = items[i]
	}
	similarity := a.Float("similarity")
	var plans []dedupe.MergePlan
	judged := map[string]string{} // cluster id → the model that judged it
	if c.Judge.Client == nil {
		for _, p := range dedupe.Plan(dedupe.Clusters(items, similarity, a.Int("min_entries")), byID) {
			if len(p.Merged) > 0 {
				plans = append(plans, p)
			}
		}
	} else {
		loose := min(a.Float("model_similarity"), similarity)
		for _, cl := range dedupe.Clusters(items, loose, a.Int("min_entries")) {
			if len(cl.Members) < 2 {
				continue
			}
			verdicts, _, err := c.Judge.Judge(ctx, cl, byID)
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("dedupe: %w", ctx.Err())
				}
				c.Log.Warn("the model's dedupe judgement failed; the words alone decide", zap.String(fieldUser, scopeKey(scope)),
					zap.Error(err))
			}
			for _, d := range dedupe.Decide(cl, byID, similarity, verdicts) {
				for _, p := range dedupe.Plan([]dedupe.Cluster{d.Cluster}, byID) {
					p.Content = d.Content
					if d.ByModel {
						judged[p.Cluster.ID] = c.Judge.Client.Model()
					}
					plans = append(plans, p)
				}
			}
		}
	}
	if len(plans) == 0 {
		return nil
	}
	if c.Rewriter.Client != nil && c.Judge.Client == nil {
		stats, err := c.Rewriter.RewriteAll(ctx, plans, byID)
		if err != nil {
			return err
		}
		c.Log.Info("merged memories rewritten", zap.String(fieldUser, scopeKey(scope)), zap.Int("calls", stats.Calls),
			zap.Int("failed", stats.Failed), zap.Int("clusters", len(plans)))
	}
	var out []memory.Outgoing
	for _, p := range plans {
		for start := 0; start < len(p.Merged); start += events.MaxMemoryBatch {
			merged := p.Merged[start:min(start+events.MaxMemoryBatch, len(p.Merged))]
			d := &events.MemoriesMerged{Into: p.Into, Merged: merged, Importance: p.Importance, ClusterID: p.Cluster.ID,
				Model: judged[p.Cluster.ID]}
			if p.Content != "" {
				d.Content = new(chars.CutBytes(p.Content, events.MaxMemoryContentBytes))
			}
			out = append(out, memory.Outgoing{Type: events.TypeMemoriesMerged,
				ID: "merged-" + scopeKey(scope) + "-" + p.Cluster.ID + "-" + strconv.Itoa(start), Scope: scope, Time: r.at, Data: d})
		}
	}
	c.Log.Info("memories merged", zap.String(fieldUser, scopeKey(scope)), zap.Int("clusters", len(plans)),
		zap.Int("judged_by_model", len(judged)))
	return emitErr(c.emit(ctx, out...))
}

// refreshProfile runs refresh_profile (seed 001 §7.3): the core profile
// (tier 1, maintain.CoreProfileSize memories) is chosen again from the
// active memories of at least min_importance; those that leave it are
// demoted to knowledge. min_importance can raise the bar
// maintain.CoreProfile sets (maintain.CoreImportance), not lower it. With
// a Model the model chooses the core among the eligible memories (seed
// 001 §7.3), in one call; the ids it chose are in the event, so a replay
// never calls it.
func (c *Consolidator) refreshProfile(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	mems, err := c.Store.ActiveMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
	}
	floor := a.Float("min_importance")
	candidates := slices.DeleteFunc(slices.Clone(mems), func(m memory.Memory) bool { return m.Importance < floor })
	size := min(maintain.CoreProfileSize, events.MaxProfileMemories)
	core := maintain.CoreProfile(candidates, size, r.at)
	if c.Model != nil && len(core) > 0 {
		core = c.modelProfile(ctx, scope, candidates, size, r, core)
	}
	prev, err := c.Store.CoreMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read the core profile: %v", err)
	}
	kept := make(map[string]bool, len(core))
	for _, id := range core {
		kept[id] = true
	}
	var demoted, before []string
	for _, m := range prev {
		before = append(before, m.ID)
		if !kept[m.ID] && len(demoted) < events.MaxProfileMemories {
			demoted = append(demoted, m.ID)
		}
	}
	if slices.Equal(before, core) {
		return nil
	}
	if core == nil {
		core = []string{}
	}
	return emitErr(c.emit(ctx, memory.Outgoing{Type: events.TypeProfileRefreshed, ID: firingID("profile", r, scope),
		Scope: scope, Time: r.at, Data: &events.ProfileRefreshed{MemoryIDs: core, Demoted: demoted}}))
}

// modelProfile asks the model to choose the core among the eligible
// candidates, at most MaxProfileMemories of them best first; when the call
// fails it returns fallback, the rule's own choice.
func (c *Consolidator) modelProfile(ctx context.Context, scope memory.Scope, candidates []memory.Memory, size int, r *run,
	fallback []string) []string {
	byID := make(map[string]memory.Memory, len(candidates))
	for _, m := range candidates {
		byID[m.ID] = m
	}
	var ranked []memory.Memory
	for _, id := range maintain.CoreProfile(candidates, events.MaxProfileMemories, r.at) {
		ranked = append(ranked, byID[id])
	}
	ids, err := chooseProfile(ctx, c.Model, ranked, size)
	if err != nil {
		c.Log.Warn("core profile by the model failed; the rule's choice is kept", zap.String(fieldUser, scopeKey(scope)),
			zap.Error(err))
		return fallback
	}
	return ids
}

// archive runs archive (seed 000 §7.4): an active memory of a decaying
// category whose score at the firing is below score_below and which was
// used fewer than access_below times is archived — kept, never deleted.
func (c *Consolidator) archive(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	mems, err := c.Store.ActiveMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
	}
	below, uses := a.Float("score_below"), a.Int("access_below")
	var ids []string
	for _, m := range mems {
		if maintain.Decays(m.Category) && m.AccessCount < uses && maintain.Score(m, r.at) < below {
			ids = append(ids, m.ID)
		}
	}
	return c.emitArchived(ctx, r, scope, ids, events.ArchiveDecay)
}

// expire runs expire (seed 003): memories of the expiring priorities
// (maintain.PriorityOf: temp is transient, debug short-term) are archived
// once they are older than the rule's lifetime for their priority.
func (c *Consolidator) expire(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	mems, err := c.Store.ActiveMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
	}
	ttl := map[maintain.Priority]time.Duration{maintain.Transient: a.Duration("transient"), maintain.ShortTerm: a.Duration("short_term")}
	var ids []string
	for _, m := range mems {
		life, ok := ttl[maintain.PriorityOf(m.Category)]
		if ok && life > 0 && !m.Created.IsZero() && !r.at.Before(m.Created.Add(life)) {
			ids = append(ids, m.ID)
		}
	}
	return c.emitArchived(ctx, r, scope, ids, events.ArchiveExpired)
}

// enforceCap runs enforce_cap (seed 002 §10.1): above max_memories active
// memories, the least important and longest unused are archived.
func (c *Consolidator) enforceCap(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	mems, err := c.Store.ActiveMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
	}
	return c.emitArchived(ctx, r, scope, maintain.Cap(mems, a.Int("max_memories"), r.at), events.ArchiveCap)
}

func (c *Consolidator) emitArchived(ctx context.Context, r *run, scope memory.Scope, ids []string, reason string) error {
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	var out []memory.Outgoing
	for start := 0; start < len(ids); start += events.MaxMemoryBatch {
		out = append(out, memory.Outgoing{Type: events.TypeMemoriesArchived,
			ID: firingID("archived-"+reason, r, scope, strconv.Itoa(start)), Scope: scope, Time: r.at,
			Data: &events.MemoriesArchived{MemoryIDs: ids[start:min(start+events.MaxMemoryBatch, len(ids))], Reason: reason}})
	}
	c.Log.Info("memories archived", zap.String(fieldUser, scopeKey(scope)), zap.String("reason", reason), zap.Int("memories", len(ids)))
	return emitErr(c.emit(ctx, out...))
}
