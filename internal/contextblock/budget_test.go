package contextblock

import (
	"testing"

	"github.com/engramhq/engram/internal/memory"
)

func TestDefaultBudget(t *testing.T) {
	t.Parallel()
	b := DefaultBudget()
	if got, want := b, (Budget{Total: 4000, Profile: 600, Recent: 2000, LongTerm: 900, Reserve: 500}); got != want {
		t.Fatalf("DefaultBudget() = %+v, want %+v", got, want)
	}
	if got, want := b.Profile+b.Recent+b.LongTerm+b.Reserve, b.Total; got != want {
		t.Fatalf("shares add up to %d, want %d", got, want)
	}
	if got, want := b.Limit(), 3500; got != want {
		t.Fatalf("Limit() = %d, want %d", got, want)
	}
	if err := b.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
}

// Seed 000 §8.1: scratchpad 500 + core memory 400 + dynamic 300 of a
// 3,000-token prompt; a scratchpad that leaves the card room, and the
// card's own 400 when the scratchpad fills its 500.
func TestSeed000Budget(t *testing.T) {
	b := Seed000Budget()
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.Limit(), 500+400+300; got != want {
		t.Fatalf("Limit() = %d, want %d", got, want)
	}
	per := CounterFunc(func(string) int { return 100 })
	var card []Item
	for i := range 9 {
		card = append(card, Item{ID: string(rune('a' + i)), Kind: KindProfile, Content: "x", Score: float64(i)})
	}
	long := []Item{{ID: "m1", Kind: KindMemory, Content: "x", Score: 3}, {ID: "m2", Kind: KindMemory, Content: "x", Score: 2},
		{ID: "m3", Kind: KindMemory, Content: "x", Score: 1}, {ID: "m4", Kind: KindMemory, Content: "x", Score: 0}}
	got, rep := Fit(Blocks{Profile: card, Scratchpad: []Item{{ID: "pad", Kind: KindScratchpad, Content: "x", Score: 1}},
		Memories: long}, b, per)
	if rep.Profile != 900 || rep.LongTerm != 300 || rep.Total != 1200 {
		t.Errorf("profile %d, long-term %d, total %d; want 900, 300, 1200", rep.Profile, rep.LongTerm, rep.Total)
	}
	if len(got.Memories) != 3 || got.Memories[0].ID != "m1" {
		t.Errorf("dynamic memories %v, want the best 3", got.Memories)
	}
}

func TestSeed002Budget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		total int
		want  Budget
	}{
		{4000, Budget{Total: 4000, Profile: 600, LongTerm: 600, Recent: 2000, Reserve: 800}},
		{8192, Budget{Total: 8192, Profile: 1228, LongTerm: 1228, Recent: 4096, Reserve: 1638}},
		{0, Budget{Total: 8192, Profile: 1228, LongTerm: 1228, Recent: 4096, Reserve: 1638}},
		{-5, Budget{Total: 8192, Profile: 1228, LongTerm: 1228, Recent: 4096, Reserve: 1638}},
		{128000, Budget{Total: 128000, Profile: 19200, LongTerm: 19200, Recent: 64000, Reserve: 25600}},
		{7, Budget{Total: 7, Profile: 1, LongTerm: 1, Recent: 3, Reserve: 1}},
	}
	for _, tt := range tests {
		if got := Seed002Budget(tt.total); got != tt.want {
			t.Errorf("Seed002Budget(%d) = %+v, want %+v", tt.total, got, tt.want)
		}
	}
}

// The seed computes int(total * ratio) in floating point; the integer
// version must agree with it wherever float64 is exact enough to compare.
func TestSeed002BudgetMatchesSeedFormula(t *testing.T) {
	t.Parallel()
	for total := 1; total <= 200_000; total++ {
		got := Seed002Budget(total)
		want := Budget{
			Total:    total,
			Profile:  int(float64(total) * 0.15),
			LongTerm: int(float64(total) * 0.15),
			Recent:   int(float64(total) * 0.50),
			Reserve:  int(float64(total) * 0.20),
		}
		if got != want {
			t.Fatalf("Seed002Budget(%d) = %+v, seed formula gives %+v", total, got, want)
		}
		if unused := total - got.used(); unused < 0 || unused > 3 {
			t.Fatalf("Seed002Budget(%d) leaves %d tokens unassigned", total, unused)
		}
	}
}

func TestScale(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		from  Budget
		total int
		want  Budget
	}{
		{"double", DefaultBudget(), 8000, Budget{Total: 8000, Profile: 1200, Recent: 4000, LongTerm: 1800, Reserve: 1000}},
		{"quarter", DefaultBudget(), 1000, Budget{Total: 1000, Profile: 150, Recent: 500, LongTerm: 225, Reserve: 125}},
		// 1234 * 600/4000 = 185.1, *2000 = 617, *900 = 277.65, *500 = 154.25:
		// truncation leaves 1, which goes to the reserve.
		{"uneven", DefaultBudget(), 1234, Budget{Total: 1234, Profile: 185, Recent: 617, LongTerm: 277, Reserve: 155}},
		{"same", DefaultBudget(), 4000, DefaultBudget()},
		{"zero keeps", DefaultBudget(), 0, DefaultBudget()},
		{"empty budget scales the default", Budget{}, 2000, Budget{Total: 2000, Profile: 300, Recent: 1000, LongTerm: 450, Reserve: 250}},
		// A split that leaves tokens unassigned keeps them unassigned.
		{"seed 002", Seed002Budget(8191), 16382, Budget{Total: 16382, Profile: 2456, Recent: 8190, LongTerm: 2456, Reserve: 3276}},
		{"huge", DefaultBudget(), 2_000_000_000, Budget{Total: 2_000_000_000, Profile: 300_000_000, Recent: 1_000_000_000, LongTerm: 450_000_000, Reserve: 250_000_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.from.Scale(tt.total); got != tt.want {
				t.Fatalf("%+v.Scale(%d) = %+v, want %+v", tt.from, tt.total, got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		b     Budget
		field string // "" when valid
	}{
		{DefaultBudget(), ""},
		{Seed002Budget(8191), ""},
		{Budget{Total: 100, Profile: -1}, "budget profile is negative (-1)"},
		{Budget{Total: 100, Reserve: -3}, "budget reserve is negative (-3)"},
		{Budget{Total: 100, Profile: 50, Recent: 50, LongTerm: 1}, "budget shares add up to 101, more than total 100"},
	}
	for _, tt := range tests {
		err := tt.b.Validate()
		if tt.field == "" {
			if err != nil {
				t.Errorf("%+v.Validate() = %v, want nil", tt.b, err)
			}
			continue
		}
		if err == nil || memory.ErrorCode(err) != memory.EINVALID || memory.ErrorMessage(err) != tt.field {
			t.Errorf("%+v.Validate() = %v, want %s: %s", tt.b, err, memory.EINVALID, tt.field)
		}
	}
}

func TestBudgetString(t *testing.T) {
	t.Parallel()
	if got, want := DefaultBudget().String(), "4000 = profile 600 + recent 2000 + long-term 900 + reserve 500"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}
