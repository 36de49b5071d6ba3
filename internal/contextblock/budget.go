package contextblock

import (
	"fmt"

	"github.com/engramhq/engram/internal/memory"
)

// Budget splits a prompt's token budget between the tiers of a context
// block. Reserve is left for what is not memory (the model's answer, the
// rest of the prompt); Fit fills at most Total-Reserve.
type Budget struct {
	Total    int `json:"total"`
	Profile  int `json:"profile"`   // the profile card: Profile and Scratchpad items
	Recent   int `json:"recent"`    // Turns and Attachments
	LongTerm int `json:"long_term"` // Memories and Episodes
	Reserve  int `json:"reserve"`
}

// DefaultBudget is seed 004 §5's split of max_context_tokens=4000:
// system memory 600, recent context 2,000, long-term evidence 900, and
// 500 reserved for generation.
func DefaultBudget() Budget {
	return Budget{Total: 4000, Profile: 600, Recent: 2000, LongTerm: 900, Reserve: 500}
}

// Seed000Budget is seed 000 §8.1's memory layers of its ~3,000-token
// system prompt: the working scratchpad (~500) and the core memory (~400)
// as the profile card's 900, the dynamic memories (~300) as long-term
// evidence. Seed 000's prompt keeps no recalled conversation, so recent
// has no share of its own (recalled turns use what the others leave);
// the other 1,800 are the prompt's identity, persona, runtime, rules,
// user profile and catalogs, reserved. The scratchpad is one item and
// cannot be cut at 500: it and the core card share their 900, so a short
// scratchpad leaves the card more room.
func Seed000Budget() Budget {
	return Budget{Total: 3000, Profile: 900, Recent: 0, LongTerm: 300, Reserve: 1800}
}

// seed002Window is the context window seed 002 assumes for a model it
// does not know (MODEL_CONTEXT_WINDOWS.get(model, 8192)).
const seed002Window = 8192

// Seed002Budget is seed 002 §4.3's CONTEXT_BUDGET applied to total:
// system_prompt 15% (the profile card here), long_term_memory 15%,
// short_term_memory 50% (recent), response_reserve 20%, each
// int(total*ratio). The seed truncates floating-point products; this
// truncates exact integer ones, which gives the same numbers for every
// total up to 200,000 (checked against the seed's Python) and cannot be
// thrown off by binary rounding beyond. Truncation can leave up to three
// tokens in Total that no tier is given, as in the seed. A total of zero
// or less means the seed's default window, 8,192 tokens.
func Seed002Budget(total int) Budget {
	if total <= 0 {
		total = seed002Window
	}
	part := func(percent int) int { return int(int64(total) * int64(percent) / 100) }
	return Budget{
		Total:    total,
		Profile:  part(15),
		LongTerm: part(15),
		Recent:   part(50),
		Reserve:  part(20),
	}
}

// Scale returns b's split applied to total, for a caller that asks for a
// budget of its own (budget_tokens). Each share keeps its proportion of
// b.Total, truncated; what truncation leaves over goes to Reserve, so the
// shares still add up to total. A total of zero or less returns b; a b
// with no Total scales DefaultBudget.
func (b Budget) Scale(total int) Budget {
	if total <= 0 {
		return b
	}
	if b.Total <= 0 {
		b = DefaultBudget()
	}
	scale := func(n int) int { return int(int64(n) * int64(total) / int64(b.Total)) }
	out := Budget{
		Total:    total,
		Profile:  scale(b.Profile),
		Recent:   scale(b.Recent),
		LongTerm: scale(b.LongTerm),
		Reserve:  scale(b.Reserve),
	}
	if used := out.Profile + out.Recent + out.LongTerm + out.Reserve; used < total && b.used() == b.Total {
		out.Reserve += total - used
	}
	return out
}

func (b Budget) used() int { return b.Profile + b.Recent + b.LongTerm + b.Reserve }

// Limit is what Fit may fill: Total less Reserve, never negative.
func (b Budget) Limit() int { return max(0, b.Total-b.Reserve) }

// Validate reports the first field that makes b unusable.
func (b Budget) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"total", b.Total}, {"profile", b.Profile}, {"recent", b.Recent}, {"long_term", b.LongTerm}, {"reserve", b.Reserve}} {
		if f.v < 0 {
			return memory.Errorf(memory.EINVALID, "budget %s is negative (%d)", f.name, f.v)
		}
	}
	if b.used() > b.Total {
		return memory.Errorf(memory.EINVALID, "budget shares add up to %d, more than total %d", b.used(), b.Total)
	}
	return nil
}

// String is for logs: "4000 = profile 600 + recent 2000 + long-term 900 + reserve 500".
func (b Budget) String() string {
	return fmt.Sprintf("%d = profile %d + recent %d + long-term %d + reserve %d",
		b.Total, b.Profile, b.Recent, b.LongTerm, b.Reserve)
}
