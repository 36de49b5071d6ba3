package maintain

import (
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// Priority is how long a memory is kept regardless of use (seed 003).
type Priority string

const (
	Transient Priority = "transient"  // expires 24 h after creation
	ShortTerm Priority = "short_term" // expires 3 days after creation
	LongTerm  Priority = "long_term"  // never expires; fades by decay and is archived by score
	Permanent Priority = "permanent"  // never expires, never fades, never archived by score
)

// Lifetimes of the expiring priorities (seed 003; DESIGN §5).
const (
	TransientTTL = 24 * time.Hour
	ShortTermTTL = 3 * Day
)

// TTL is how long after creation a memory of priority p expires; zero means
// never.
func (p Priority) TTL() time.Duration {
	switch p {
	case Transient:
		return TransientTTL
	case ShortTerm:
		return ShortTermTTL
	}
	return 0
}

// PriorityOf maps engram's decay categories (seed 001) onto seed 003's
// priorities:
//
//	temp                          → Transient  (24 h)
//	debug                         → ShortTerm  (3 days)
//	event, conversation,
//	decision, solution            → LongTerm
//	identity, config, credential  → Permanent
//	anything else                 → LongTerm
//
// Only the two classes that seed 001 lets decay to zero expire. A debugging
// note outlives its session by a few days because a fix is often resumed
// the next day; a temp note is scratch. Events and conversation summaries
// are not ShortTerm even though they are "short-term" in spirit: "the
// release is on 3 May" or "we chose Postgres last week" must outlive three
// days, and their 30-day half-life with the archive rule (score < 0.1,
// fewer than 2 uses) retires them once they stop being used, which a fixed
// three-day clock cannot tell. Identity, config and credentials are what
// seed 003 calls PERMANENT ("重要规则、核心偏好"): they change by being
// superseded, never by time.
func PriorityOf(c memory.Category) Priority {
	switch c {
	case memory.CategoryTemp:
		return Transient
	case memory.CategoryDebug:
		return ShortTerm
	case memory.CategoryIdentity, memory.CategoryConfig, memory.CategoryCredential:
		return Permanent
	}
	return LongTerm
}

// Expired reports whether m has outlived its priority at now: at or after
// Created + TTL. Status is not looked at (Daily only asks about active
// memories), and a memory without a creation time never expires.
func Expired(m memory.Memory, now time.Time) bool {
	ttl := PriorityOf(m.Category).TTL()
	if ttl == 0 || m.Created.IsZero() {
		return false
	}
	return !now.Before(m.Created.Add(ttl))
}
