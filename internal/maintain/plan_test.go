package maintain

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/memory"
)

func mem(id string, k memory.Kind, c memory.Category, imp float64, created time.Time) memory.Memory {
	return memory.Memory{ID: id, Kind: k, Category: c, Importance: imp, Status: memory.StatusActive, Created: created, Updated: created}
}

func TestDaily(t *testing.T) {
	t.Parallel()
	now := t0
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	with := func(m memory.Memory, f func(*memory.Memory)) memory.Memory { f(&m); return m }

	mems := []memory.Memory{
		// Expire: past their priority's lifetime.
		mem("temp-old", memory.KindContext, memory.CategoryTemp, 0.9, ago(25*time.Hour)),
		mem("debug-old", memory.KindError, memory.CategoryDebug, 0.9, ago(4*Day)),
		// Kept: within their lifetime.
		mem("temp-new", memory.KindContext, memory.CategoryTemp, 0.9, ago(23*time.Hour)),
		mem("debug-new", memory.KindError, memory.CategoryDebug, 0.9, ago(2*Day)),
		// Archive: faded below 0.1 and rarely used.
		// 0.5 · (0.1 + 0.9·2^(−200/30)) ≈ 0.054
		mem("event-faded", memory.KindFact, memory.CategoryEvent, 0.5, ago(200*Day)),
		// 0.2 · (0.3 + 0.7·2^(−730/180)) ≈ 0.068, one use: ×1.069 ≈ 0.073
		with(mem("decision-minor", memory.KindContext, memory.CategoryDecision, 0.2, ago(730*Day)),
			func(m *memory.Memory) { m.AccessCount = 1 }),
		// Kept: faded but used twice.
		with(mem("event-used", memory.KindFact, memory.CategoryEvent, 0.5, ago(200*Day)),
			func(m *memory.Memory) { m.AccessCount = 2 }),
		// Kept: old but recalled last week.
		with(mem("event-recalled", memory.KindFact, memory.CategoryEvent, 0.5, ago(200*Day)),
			func(m *memory.Memory) { m.LastAccessed = ago(7 * Day) }),
		// Kept: the decision floor keeps 0.5 · 0.3 = 0.15 forever.
		mem("decision-floor", memory.KindContext, memory.CategoryDecision, 0.5, ago(3650*Day)),
		// Kept: permanent categories never archive, whatever the score.
		mem("identity-low", memory.KindIdentity, memory.CategoryIdentity, 0.05, ago(3650*Day)),
		mem("config-zero", memory.KindPreference, memory.CategoryConfig, 0, ago(3650*Day)),
		// Not considered: not active.
		with(mem("pending-temp", memory.KindContext, memory.CategoryTemp, 0.9, ago(30*Day)),
			func(m *memory.Memory) { m.Status = memory.StatusPending }),
		with(mem("archived-event", memory.KindFact, memory.CategoryEvent, 0.1, ago(900*Day)),
			func(m *memory.Memory) { m.Status = memory.StatusArchived }),
		with(mem("superseded-temp", memory.KindFact, memory.CategoryTemp, 0.1, ago(900*Day)),
			func(m *memory.Memory) { m.Status = memory.StatusSuperseded }),
		// Repeated id: decided once.
		mem("temp-old", memory.KindContext, memory.CategoryTemp, 0.9, ago(25*time.Hour)),
	}
	before := slices.Clone(mems)

	p := Daily(mems, now)

	if got, want := p.Expire, []string{"debug-old", "temp-old"}; !slices.Equal(got, want) {
		t.Errorf("Expire = %q, want %q", got, want)
	}
	if got, want := p.Archive, []string{"decision-minor", "event-faded"}; !slices.Equal(got, want) {
		t.Errorf("Archive = %q, want %q", got, want)
	}
	if got, want := len(p.Reasons), len(p.Expire)+len(p.Archive); got != want {
		t.Errorf("len(Reasons) = %d, want %d: %q", got, want, p.Reasons)
	}
	for id, want := range map[string]string{
		"temp-old":       "expired: temp is transient, kept 24.0h after creation; created 25.0h ago",
		"debug-old":      "expired: debug is short_term, kept 3.0d after creation; created 4.0d ago",
		"event-faded":    "archived: score 0.054 < 0.1 and access count 0 < 2 (event, unused for 200.0d)",
		"decision-minor": "archived: score 0.073 < 0.1 and access count 1 < 2 (decision, unused for 730.0d)",
	} {
		if got := p.Reasons[id]; got != want {
			t.Errorf("Reasons[%s] = %q, want %q", id, got, want)
		}
	}
	if !reflect.DeepEqual(mems, before) {
		t.Error("Daily modified its input")
	}

	t.Run("order of input does not matter", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for range 20 {
			shuffled := slices.Clone(mems)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if got := Daily(shuffled, now); !reflect.DeepEqual(got, p) {
				t.Fatalf("Daily(shuffled) = %+v, want %+v", got, p)
			}
		}
	})
	t.Run("a day later", func(t *testing.T) {
		// debug-new (2 days) is not yet 3 days old; temp-new is past 24 h.
		got := Daily(mems, now.Add(Day))
		if want := []string{"debug-new", "debug-old", "temp-new", "temp-old"}; !slices.Equal(got.Expire, want) {
			t.Errorf("Expire = %q, want %q", got.Expire, want)
		}
	})
	t.Run("empty", func(t *testing.T) {
		got := Daily(nil, now)
		if len(got.Expire)+len(got.Archive) != 0 || got.Reasons == nil {
			t.Fatalf("Daily(nil) = %+v, want empty lists and a non-nil map", got)
		}
	})
}

func TestCap(t *testing.T) {
	t.Parallel()
	old, mid, recent := t0.Add(-300*Day), t0.Add(-100*Day), t0.Add(-Day)
	mems := []memory.Memory{
		mem("a-hi", memory.KindFact, memory.CategoryEvent, 0.9, old),
		mem("b-lo-recent", memory.KindFact, memory.CategoryEvent, 0.2, recent),
		mem("c-lo-old", memory.KindFact, memory.CategoryEvent, 0.2, old),
		mem("d-mid", memory.KindFact, memory.CategorySolution, 0.5, mid),
		mem("e-lo-old", memory.KindFact, memory.CategoryTemp, 0.2, old), // same as c: id decides
		mem("f-id-low", memory.KindIdentity, memory.CategoryIdentity, 0.1, old),
		mem("g-rule", memory.KindRule, memory.CategoryConfig, 0.3, old),
		{ID: "x-pending", Status: memory.StatusPending, Importance: 0, Category: memory.CategoryTemp},
		{ID: "y-archived", Status: memory.StatusArchived, Importance: 0, Category: memory.CategoryTemp},
	}
	// Used recently: counts as newer than its creation.
	used := mem("h-lo-used", memory.KindFact, memory.CategoryEvent, 0.2, old)
	used.LastAccessed = recent.Add(time.Hour)
	mems = append(mems, used)

	// Eviction order of the 8 active memories.
	order := []string{"c-lo-old", "e-lo-old", "b-lo-recent", "h-lo-used", "d-mid", "a-hi", "f-id-low", "g-rule"}
	for limit := 0; limit <= 10; limit++ {
		got := Cap(mems, limit, t0)
		var want []string
		if limit > 0 && limit < len(order) {
			want = order[:len(order)-limit]
		}
		if !slices.Equal(got, want) {
			t.Errorf("Cap(limit %d) = %q, want %q", limit, got, want)
		}
	}
	t.Run("negative limit is no cap", func(t *testing.T) {
		if got := Cap(mems, -1, t0); got != nil {
			t.Fatalf("Cap(-1) = %q, want nil", got)
		}
	})
	t.Run("large", func(t *testing.T) {
		var many []memory.Memory
		for i := range MaintenanceCap + 25 {
			m := mem(fmt.Sprintf("%06d", i), memory.KindFact, memory.CategoryEvent, float64(i%100)/100, old.Add(time.Duration(i)*time.Minute))
			many = append(many, m)
		}
		got := Cap(many, MaintenanceCap, t0)
		if len(got) != 25 {
			t.Fatalf("len(Cap) = %d, want 25", len(got))
		}
		// Importance 0 comes every 100th memory; the 25 oldest of those go first.
		for i, id := range got {
			if want := fmt.Sprintf("%06d", i*100); id != want {
				t.Fatalf("Cap[%d] = %s, want %s", i, id, want)
			}
		}
	})
}

func TestCoreProfile(t *testing.T) {
	t.Parallel()
	day := func(n int) time.Time { return t0.Add(-time.Duration(n) * Day) }
	mems := []memory.Memory{
		mem("fact-1.0", memory.KindFact, memory.CategoryConfig, 1.0, day(1)),
		mem("name", memory.KindIdentity, memory.CategoryIdentity, 0.8, day(300)),
		mem("loc", memory.KindFact, memory.CategoryIdentity, 0.8, day(10)), // identity by category; newer than name
		mem("rule", memory.KindRule, memory.CategoryConfig, 0.9, day(50)),
		mem("pref", memory.KindPreference, memory.CategoryConfig, 0.9, day(50)), // tie with rule: id decides
		mem("pref-low", memory.KindPreference, memory.CategoryConfig, 0.7, day(1)),
		mem("decision", memory.KindContext, memory.CategoryDecision, 0.8, day(5)),
		mem("event", memory.KindFact, memory.CategoryEvent, 0.8, day(5)),
		// Not candidates.
		mem("below", memory.KindIdentity, memory.CategoryIdentity, 0.69, day(1)),
		mem("temp", memory.KindIdentity, memory.CategoryTemp, 1.0, t0),
		mem("debug", memory.KindFact, memory.CategoryDebug, 1.0, t0),
		{ID: "pending", Kind: memory.KindIdentity, Category: memory.CategoryIdentity, Importance: 1, Status: memory.StatusPending},
	}
	all := []string{"loc", "name", "pref", "rule", "pref-low", "fact-1.0", "decision", "event"}
	for n := -1; n <= 10; n++ {
		got := CoreProfile(mems, n, t0)
		want := all[:max(0, min(n, len(all)))]
		if n <= 0 {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("CoreProfile(n=%d) = %q, want %q", n, got, want)
		}
	}
	t.Run("recall makes a memory more recent", func(t *testing.T) {
		m := slices.Clone(mems)
		m[1].LastAccessed = t0 // name
		if got := CoreProfile(m, 2, t0); !slices.Equal(got, []string{"name", "loc"}) {
			t.Fatalf("CoreProfile = %q, want [name loc]", got)
		}
	})
}
