package maintain

import (
	"math"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

// Day is the unit the seeds state ages in.
const Day = 24 * time.Hour

// Half-lives and floors of the decay classes (seed 001 §8.2). The seed
// writes the rates as rounded constants (exp(-0.004·d), exp(-0.023·d),
// exp(-0.099·d)); they are ln 2 over these half-lives, and we use the
// half-lives themselves so that "half-life" means exactly that. The two
// curves stay within 0.02 of each other over the first year.
const (
	HalfLifeDecision = 180 * Day // decision, solution
	FloorDecision    = 0.30
	HalfLifeEvent    = 30 * Day // event, conversation
	FloorEvent       = 0.10
	HalfLifeTemp     = 7 * Day // temp, debug
	FloorTemp        = 0.0
)

// Access boost: each use of a memory makes it fade less ("越常用越记得牢",
// seed 001 §8.4). The boost grows with the logarithm of the access count so
// that a handful of uses matter and a thousand do not drown importance.
const (
	AccessBoostPerLog = 0.1
	AccessBoostMax    = 1.5
)

// DecayFactor is the share of its importance a memory of category c keeps
// after age without use (seed 001 §8.2):
//
//	identity, config, credential:  1
//	decision, solution:            0.30 + 0.70 · 2^(−age/180d)
//	event, conversation:           0.10 + 0.90 · 2^(−age/30d)
//	temp, debug:                          2^(−age/7d)
//
// An unknown category does not decay, as in the seed. A negative age (a
// clock skew between writers) counts as zero.
func DecayFactor(c memory.Category, age time.Duration) float64 {
	halfLife, floor, ok := decayClass(c)
	if !ok || age <= 0 {
		return 1
	}
	return floor + (1-floor)*math.Exp2(-float64(age)/float64(halfLife))
}

// Decays reports whether memories of category c fade at all.
func Decays(c memory.Category) bool {
	_, _, ok := decayClass(c)
	return ok
}

func decayClass(c memory.Category) (halfLife time.Duration, floor float64, ok bool) {
	switch c {
	case memory.CategoryDecision, memory.CategorySolution:
		return HalfLifeDecision, FloorDecision, true
	case memory.CategoryEvent, memory.CategoryConversation:
		return HalfLifeEvent, FloorEvent, true
	case memory.CategoryTemp, memory.CategoryDebug:
		return HalfLifeTemp, FloorTemp, true
	}
	return 0, 1, false
}

// AccessBoost is the multiplier n uses of a memory earn:
// min(1.5, 1 + 0.1 · ln(1 + n)). No use gives 1; 1 use 1.07; 10 uses 1.24;
// about 150 uses reach the cap.
func AccessBoost(n int) float64 {
	if n <= 0 {
		return 1
	}
	return math.Min(AccessBoostMax, 1+AccessBoostPerLog*math.Log1p(float64(n)))
}

// Score is a memory's retention score, used to archive (seed 000 §7.4:
// score < 0.1 and access count < 2) and to rank (MEMORY.md, seed 000 §7.4
// "importance × recency"):
//
//	Score = clamp(importance, 0, 1) · DecayFactor(category, now − LastUsed(m)) · AccessBoost(access count)
//
// It lies in [0, 1.5]. It never decreases with importance or access count
// and never increases as now moves on. The age runs from the last time the
// memory was used or rewritten, not from its creation: seed 001 decays by
// days since access, and a fact restated yesterday is as fresh as one
// recalled yesterday.
func Score(m memory.Memory, now time.Time) float64 {
	return clamp01(m.Importance) * DecayFactor(m.Category, Age(m, now)) * AccessBoost(m.AccessCount)
}

// LastUsed is the latest of a memory's creation, update and last access.
// It is the zero time when the memory carries none of them.
func LastUsed(m memory.Memory) time.Time {
	t := m.Created
	if m.Updated.After(t) {
		t = m.Updated
	}
	if m.LastAccessed.After(t) {
		t = m.LastAccessed
	}
	return t
}

// Age is how long ago the memory was last used, at now. A memory with no
// timestamps has age zero: what cannot be dated is not faded.
func Age(m memory.Memory, now time.Time) time.Duration {
	last := LastUsed(m)
	if last.IsZero() || !now.After(last) {
		return 0
	}
	return now.Sub(last)
}

func clamp01(x float64) float64 {
	switch {
	case math.IsNaN(x), x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	return x
}
