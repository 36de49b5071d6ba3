package extraction

import (
	"fmt"
	"time"

	"github.com/engramhq/engram/internal/extractreq"
)

// Config holds the batcher's thresholds (seed 001 §6.2). With
// Batcher.Rules set, the rules give the quiet gap, the token cap and the
// sweep instead (SweepAt then only times the nightly release of memory).
type Config struct {
	// QuietGap: a session with no new turn for this long is extracted.
	QuietGap time.Duration
	// TokenCap: a session whose unextracted turns pass this many tokens is
	// extracted at once.
	TokenCap int
	// SweepAt is the daily sweep's local time of day, "15:04".
	SweepAt string
	// MaxTurns bounds one request; a longer batch is split.
	MaxTurns int
	// Tick is how often quiet sessions are looked for.
	Tick time.Duration
}

// DefaultConfig is seed 001's numbers.
func DefaultConfig() Config {
	return Config{QuietGap: 3 * time.Minute, TokenCap: 6000, SweepAt: "03:00", MaxTurns: extractreq.DefaultMaxTurns, Tick: 10 * time.Second}
}

// Validate names the first bad field.
func (c Config) Validate() error {
	if c.QuietGap <= 0 {
		return fmt.Errorf("quiet_gap: must be positive")
	}
	if c.TokenCap < 100 {
		return fmt.Errorf("token_cap: %d is below 100", c.TokenCap)
	}
	if _, err := time.Parse("15:04", c.SweepAt); err != nil {
		return fmt.Errorf("sweep_at: %q is not HH:MM", c.SweepAt)
	}
	if c.MaxTurns < 1 || c.MaxTurns > 500 {
		return fmt.Errorf("max_turns: %d is outside 1..500", c.MaxTurns)
	}
	return nil
}

// nextAt returns the first time after now whose local clock reads hh:mm.
func nextAt(now time.Time, hhmm string) time.Time {
	t, _ := time.Parse("15:04", hhmm)
	next := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
	if !next.After(now) {
		next = next.AddDate(0, 0, 1)
	}
	return next
}
