package maintain

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// Thresholds of the scheduled jobs (DESIGN §5).
const (
	// ArchiveScore and ArchiveAccess: the daily job archives an active
	// memory whose Score is below ArchiveScore and which was used fewer
	// than ArchiveAccess times (seed 000 §7.4).
	ArchiveScore  = 0.1
	ArchiveAccess = 2
	// MaintenanceCap is the default number of active memories a user may
	// hold before the oldest, least important are archived (seed 002 §10.1).
	MaintenanceCap = 10000
	// CoreImportance is the importance from which a memory may enter the
	// core profile, and CoreProfileSize the profile's size (seed 001 §4.2,
	// §7.3).
	CoreImportance  = 0.7
	CoreProfileSize = 100
)

// Plan is what the daily job would do. Both lists are archived by the
// caller — nothing is ever deleted — and are kept apart so that each
// archive event can say why. Lists are sorted by id; Reasons has one entry
// per listed id.
type Plan struct {
	Expire  []string          // outlived their priority (seed 003)
	Archive []string          // faded: score < 0.1 and access count < 2 (seed 000 §7.4)
	Reasons map[string]string // id → why, for the archive event and the operator
}

// Daily plans the daily job over mems at now. Only active memories are
// considered. A memory is expired when its priority's lifetime has run out
// (see PriorityOf), and otherwise archived when it decays, its Score is
// below ArchiveScore and it was used fewer than ArchiveAccess times.
// Memories of the Permanent categories never decay and are never archived
// here, however low their importance: they change by being superseded.
// Memories without an id are ignored; a repeated id is decided once.
func Daily(mems []memory.Memory, now time.Time) Plan {
	p := Plan{Reasons: map[string]string{}}
	for _, m := range mems {
		if m.Status != memory.StatusActive || m.ID == "" {
			continue
		}
		if _, seen := p.Reasons[m.ID]; seen {
			continue
		}
		if Expired(m, now) {
			prio := PriorityOf(m.Category)
			p.Expire = append(p.Expire, m.ID)
			p.Reasons[m.ID] = fmt.Sprintf("expired: %s is %s, kept %s after creation; created %s ago",
				categoryName(m.Category), prio, span(prio.TTL()), span(now.Sub(m.Created)))
			continue
		}
		if !Decays(m.Category) || m.AccessCount >= ArchiveAccess {
			continue
		}
		if s := Score(m, now); s < ArchiveScore {
			p.Archive = append(p.Archive, m.ID)
			p.Reasons[m.ID] = fmt.Sprintf("archived: score %.3f < %.1f and access count %d < %d (%s, unused for %s)",
				s, ArchiveScore, m.AccessCount, ArchiveAccess, m.Category, span(Age(m, now)))
		}
	}
	slices.Sort(p.Expire)
	slices.Sort(p.Archive)
	return p
}

// Cap returns the ids to archive so that no more than limit active
// memories remain (seed 002 §10.1), in the order they should go: memories
// of decaying categories before the Permanent ones (a user's rules and
// identity outrank any old event), then lowest importance first, then the
// longest unused (LastUsed, oldest first; seed 002 orders by importance,
// then updated_at), then by id. It returns nil when there are at most
// limit active memories, or when limit ≤ 0 (no cap: a zero left in a
// config file must not archive everything).
func Cap(mems []memory.Memory, limit int, now time.Time) []string {
	if limit <= 0 {
		return nil
	}
	active := activeUnique(mems)
	if len(active) <= limit {
		return nil
	}
	slices.SortFunc(active, func(a, b memory.Memory) int {
		return cmp.Or(
			boolCmp(!Decays(a.Category), !Decays(b.Category)),
			cmp.Compare(clamp01(a.Importance), clamp01(b.Importance)),
			LastUsed(a).Compare(LastUsed(b)),
			cmp.Compare(a.ID, b.ID),
		)
	})
	out := make([]string, 0, len(active)-limit)
	for _, m := range active[:len(active)-limit] {
		out = append(out, m.ID)
	}
	return out
}

// CoreProfile chooses the ids of at most n active memories that form the
// core profile (tier 1; seed 001 §4.2 and §7.3), best first. Candidates
// have importance ≥ CoreImportance and are not of an expiring priority
// (temp and debug notes are not who the user is), nor already expired at
// now. They are ordered by class — identity (kind or category), then
// preferences and rules, then the rest — then by importance, then by the
// most recent use, then by id. n ≤ 0 gives nil.
func CoreProfile(mems []memory.Memory, n int, now time.Time) []string {
	if n <= 0 {
		return nil
	}
	var cands []memory.Memory
	for _, m := range activeUnique(mems) {
		if clamp01(m.Importance) < CoreImportance || PriorityOf(m.Category).TTL() != 0 || Expired(m, now) {
			continue
		}
		cands = append(cands, m)
	}
	slices.SortFunc(cands, func(a, b memory.Memory) int {
		return cmp.Or(
			cmp.Compare(profileClass(a), profileClass(b)),
			cmp.Compare(clamp01(b.Importance), clamp01(a.Importance)),
			LastUsed(b).Compare(LastUsed(a)),
			cmp.Compare(a.ID, b.ID),
		)
	})
	out := make([]string, 0, min(n, len(cands)))
	for _, m := range cands[:min(n, len(cands))] {
		out = append(out, m.ID)
	}
	return out
}

// profileClass ranks what a profile is for: who the user is, then how they
// want to be treated, then what they know and do.
func profileClass(m memory.Memory) int {
	switch {
	case m.Kind == memory.KindIdentity || m.Category == memory.CategoryIdentity:
		return 0
	case m.Kind == memory.KindPreference || m.Kind == memory.KindRule:
		return 1
	}
	return 2
}

// activeUnique copies the active memories with an id, keeping the first of
// any repeated id, so callers may sort the result without touching theirs.
func activeUnique(mems []memory.Memory) []memory.Memory {
	seen := make(map[string]bool, len(mems))
	out := make([]memory.Memory, 0, len(mems))
	for _, m := range mems {
		if m.Status != memory.StatusActive || m.ID == "" || seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		out = append(out, m)
	}
	return out
}

// boolCmp orders false before true.
func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func categoryName(c memory.Category) string {
	if c == "" {
		return "(none)"
	}
	return string(c)
}

// span writes a duration in the largest whole unit that reads well in a
// log line: days from two days up, hours below.
func span(d time.Duration) string {
	if d >= 2*Day {
		return fmt.Sprintf("%.1fd", d.Hours()/24)
	}
	return fmt.Sprintf("%.1fh", d.Hours())
}
