package maintain

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

const eps = 1e-12

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestDecayFactor(t *testing.T) {
	t.Parallel()
	long := 10 * 365 * Day
	cases := []struct {
		c    memory.Category
		age  time.Duration
		want float64
	}{
		// No decay, ever.
		{memory.CategoryIdentity, 0, 1},
		{memory.CategoryIdentity, long, 1},
		{memory.CategoryConfig, long, 1},
		{memory.CategoryCredential, long, 1},
		{"", long, 1},
		{"made-up", long, 1},
		// Fresh and negative ages keep everything.
		{memory.CategoryTemp, 0, 1},
		{memory.CategoryTemp, -time.Hour, 1},
		{memory.CategoryDecision, -Day, 1},
		// At the half-life the decaying part is exactly halved: floor + (1−floor)/2.
		{memory.CategoryDecision, 180 * Day, 0.65},
		{memory.CategorySolution, 180 * Day, 0.65},
		{memory.CategoryEvent, 30 * Day, 0.55},
		{memory.CategoryConversation, 30 * Day, 0.55},
		{memory.CategoryTemp, 7 * Day, 0.5},
		{memory.CategoryDebug, 7 * Day, 0.5},
		// Two half-lives: a quarter of the decaying part is left.
		{memory.CategoryDecision, 360 * Day, 0.30 + 0.70/4},
		{memory.CategoryEvent, 60 * Day, 0.10 + 0.90/4},
		{memory.CategoryTemp, 14 * Day, 0.25},
	}
	for _, tc := range cases {
		if got := DecayFactor(tc.c, tc.age); !near(got, tc.want, eps) {
			t.Errorf("DecayFactor(%q, %v) = %v, want %v", tc.c, tc.age, got, tc.want)
		}
	}

	t.Run("floors", func(t *testing.T) {
		for c, floor := range map[memory.Category]float64{
			memory.CategoryDecision: 0.30, memory.CategorySolution: 0.30,
			memory.CategoryEvent: 0.10, memory.CategoryConversation: 0.10,
			memory.CategoryTemp: 0, memory.CategoryDebug: 0,
		} {
			got := DecayFactor(c, long)
			if got < floor || !near(got, floor, 1e-6) {
				t.Errorf("DecayFactor(%q, 10y) = %v, want just above floor %v", c, got, floor)
			}
			if got := DecayFactor(c, time.Duration(math.MaxInt64)); got < floor {
				t.Errorf("DecayFactor(%q, max age) = %v, below floor %v", c, got, floor)
			}
		}
	})

	// The seed writes the rates rounded (0.004, 0.023, 0.099 per day); the
	// half-life form must stay close to it over the first year.
	t.Run("close to seed 001 constants", func(t *testing.T) {
		seed := map[memory.Category]func(d float64) float64{
			memory.CategoryDecision: func(d float64) float64 { return 0.3 + 0.7*math.Exp(-0.004*d) },
			memory.CategoryEvent:    func(d float64) float64 { return 0.1 + 0.9*math.Exp(-0.023*d) },
			memory.CategoryTemp:     func(d float64) float64 { return math.Exp(-0.099 * d) },
		}
		for c, f := range seed {
			for d := 0; d <= 365; d++ {
				if got, want := DecayFactor(c, time.Duration(d)*Day), f(float64(d)); !near(got, want, 0.02) {
					t.Fatalf("DecayFactor(%q, %dd) = %v, seed formula %v", c, d, got, want)
				}
			}
		}
	})
}

func TestAccessBoost(t *testing.T) {
	t.Parallel()
	if got := AccessBoost(0); got != 1 {
		t.Fatalf("AccessBoost(0) = %v, want 1", got)
	}
	if got := AccessBoost(-3); got != 1 {
		t.Fatalf("AccessBoost(-3) = %v, want 1", got)
	}
	if got, want := AccessBoost(1), 1+0.1*math.Ln2; !near(got, want, eps) {
		t.Fatalf("AccessBoost(1) = %v, want %v", got, want)
	}
	if got := AccessBoost(1 << 30); got != AccessBoostMax {
		t.Fatalf("AccessBoost(huge) = %v, want cap %v", got, AccessBoostMax)
	}
}

var t0 = time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)

func TestScore(t *testing.T) {
	t.Parallel()
	t.Run("formula", func(t *testing.T) {
		m := memory.Memory{Category: memory.CategoryEvent, Importance: 0.8, Created: t0, AccessCount: 3}
		got := Score(m, t0.Add(30*Day))
		want := 0.8 * 0.55 * (1 + 0.1*math.Log(4))
		if !near(got, want, eps) {
			t.Fatalf("Score = %v, want %v", got, want)
		}
	})
	t.Run("age runs from the latest use", func(t *testing.T) {
		m := memory.Memory{Category: memory.CategoryTemp, Importance: 1, Created: t0}
		now := t0.Add(14 * Day)
		if got := Score(m, now); !near(got, 0.25, eps) {
			t.Fatalf("unused: Score = %v, want 0.25", got)
		}
		m.Updated = t0.Add(7 * Day)
		if got := Score(m, now); !near(got, 0.5, eps) {
			t.Fatalf("updated a week ago: Score = %v, want 0.5", got)
		}
		m.LastAccessed = now
		if got := Score(m, now); !near(got, 1, eps) {
			t.Fatalf("accessed now: Score = %v, want 1", got)
		}
	})
	t.Run("undated and future memories are fresh", func(t *testing.T) {
		m := memory.Memory{Category: memory.CategoryTemp, Importance: 0.5}
		if got := Score(m, t0); got != 0.5 {
			t.Fatalf("undated: Score = %v, want 0.5", got)
		}
		m.Created = t0.Add(Day)
		if got := Score(m, t0); got != 0.5 {
			t.Fatalf("future: Score = %v, want 0.5", got)
		}
	})
	t.Run("importance is clamped", func(t *testing.T) {
		for imp, want := range map[float64]float64{-1: 0, 2: 1, math.NaN(): 0, math.Inf(1): 1} {
			m := memory.Memory{Category: memory.CategoryIdentity, Importance: imp, Created: t0}
			if got := Score(m, t0); got != want {
				t.Errorf("Score(importance %v) = %v, want %v", imp, got, want)
			}
		}
	})

	// Properties over many random memories: Score never decreases with
	// importance or access count, never increases with time, and stays in
	// [0, AccessBoostMax].
	t.Run("monotone", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for i := range 5000 {
			m := memory.Memory{
				Category:    memory.Categories[r.IntN(len(memory.Categories))],
				Importance:  r.Float64(),
				Created:     t0.Add(-time.Duration(r.Int64N(int64(400 * Day)))),
				AccessCount: r.IntN(50),
			}
			if r.IntN(2) == 0 {
				m.LastAccessed = m.Created.Add(time.Duration(r.Int64N(int64(30 * Day))))
			}
			now := t0.Add(time.Duration(r.Int64N(int64(100 * Day))))
			s := Score(m, now)
			if s < 0 || s > AccessBoostMax {
				t.Fatalf("#%d: Score = %v outside [0, %v]", i, s, AccessBoostMax)
			}
			later := now.Add(time.Duration(1 + r.Int64N(int64(200*Day))))
			if got := Score(m, later); got > s {
				t.Fatalf("#%d %s: Score rose with time: %v → %v", i, m.Category, s, got)
			}
			more := m
			more.Importance = m.Importance + (1-m.Importance)*r.Float64()
			if got := Score(more, now); got < s {
				t.Fatalf("#%d: Score fell with importance %v → %v: %v → %v", i, m.Importance, more.Importance, s, got)
			}
			used := m
			used.AccessCount += 1 + r.IntN(10)
			if got := Score(used, now); got < s {
				t.Fatalf("#%d: Score fell with access %d → %d: %v → %v", i, m.AccessCount, used.AccessCount, s, got)
			}
			recalled := m
			recalled.LastAccessed = now
			if got := Score(recalled, now); got < s {
				t.Fatalf("#%d: recall lowered Score: %v → %v", i, s, got)
			}
		}
	})
	t.Run("decaying categories fade strictly", func(t *testing.T) {
		for _, c := range []memory.Category{memory.CategoryDecision, memory.CategoryEvent, memory.CategoryTemp} {
			m := memory.Memory{Category: c, Importance: 0.9, Created: t0}
			prev := Score(m, t0)
			for d := 1; d <= 60; d++ {
				s := Score(m, t0.Add(time.Duration(d)*Day))
				if s >= prev {
					t.Fatalf("%s: Score at day %d = %v, not below day %d = %v", c, d, s, d-1, prev)
				}
				prev = s
			}
		}
	})
}

func TestExpired(t *testing.T) {
	t.Parallel()
	cases := []struct {
		c    memory.Category
		age  time.Duration
		want bool
	}{
		{memory.CategoryTemp, 24*time.Hour - time.Nanosecond, false},
		{memory.CategoryTemp, 24 * time.Hour, true},
		{memory.CategoryDebug, 24 * time.Hour, false},
		{memory.CategoryDebug, 72*time.Hour - time.Second, false},
		{memory.CategoryDebug, 72 * time.Hour, true},
		{memory.CategoryEvent, 365 * Day, false},
		{memory.CategoryConversation, 365 * Day, false},
		{memory.CategoryDecision, 365 * Day, false},
		{memory.CategoryIdentity, 3650 * Day, false},
		{memory.CategoryCredential, 3650 * Day, false},
		{"", 3650 * Day, false},
	}
	for _, tc := range cases {
		m := memory.Memory{Category: tc.c, Created: t0}
		if got := Expired(m, t0.Add(tc.age)); got != tc.want {
			t.Errorf("Expired(%q, age %v) = %v, want %v", tc.c, tc.age, got, tc.want)
		}
	}
	t.Run("from creation, not from use", func(t *testing.T) {
		m := memory.Memory{Category: memory.CategoryTemp, Created: t0, LastAccessed: t0.Add(23 * time.Hour)}
		if !Expired(m, t0.Add(25*time.Hour)) {
			t.Fatal("a temp memory recalled late must still expire a day after creation")
		}
	})
	t.Run("undated never expires", func(t *testing.T) {
		if Expired(memory.Memory{Category: memory.CategoryTemp}, t0) {
			t.Fatal("undated temp memory expired")
		}
	})
}

func TestPriorityOf(t *testing.T) {
	t.Parallel()
	want := map[memory.Category]Priority{
		memory.CategoryTemp: Transient, memory.CategoryDebug: ShortTerm,
		memory.CategoryEvent: LongTerm, memory.CategoryConversation: LongTerm,
		memory.CategoryDecision: LongTerm, memory.CategorySolution: LongTerm,
		memory.CategoryIdentity: Permanent, memory.CategoryConfig: Permanent, memory.CategoryCredential: Permanent,
	}
	for _, c := range memory.Categories {
		if got, ok := want[c]; !ok {
			t.Errorf("category %q has no expected priority in this test", c)
		} else if p := PriorityOf(c); p != got {
			t.Errorf("PriorityOf(%q) = %q, want %q", c, p, got)
		}
		// Permanent is exactly "does not decay".
		if got := PriorityOf(c) == Permanent; got == Decays(c) {
			t.Errorf("%q: Permanent=%v but Decays=%v", c, got, Decays(c))
		}
	}
}
