package gencache

import (
	"fmt"
	"testing"
)

// A generation holds at most the budget, an entry two generations old is
// gone, one read from the older generation is kept on, and an entry of
// more than a 64th of the budget is not kept.
func TestBounded(t *testing.T) {
	const budget = 1 << 12
	c := New(budget, func(k string, _ int) int { return len(k) })
	first, kept := "the first entry", "the entry read again"
	c.Put(first, 1)
	c.Put(kept, 2)
	for i := 0; c.old == nil || c.old[first] != 0 || i < 100; i++ {
		c.Put(fmt.Sprintf("entry %d of a steady stream", i), i)
		if c.spent > budget {
			t.Fatalf("a generation holds %d, want at most %d", c.spent, budget)
		}
		if _, ok := c.Get(kept); !ok {
			t.Fatalf("an entry read all along was dropped after %d puts", i)
		}
		if i > 1_000_000 {
			t.Fatal("the first entry was never dropped")
		}
	}
	if _, ok := c.Get(first); ok {
		t.Fatal("the first entry is still kept two generations later")
	}
	long := string(make([]byte, budget/32))
	c.Put(long, 3)
	if _, ok := c.Get(long); ok {
		t.Fatal("an entry of a 32nd of the budget was kept; it would crowd out the many")
	}
}

// With no cost function the budget counts entries.
func TestBudgetCountsEntries(t *testing.T) {
	c := New[int, int](100, nil)
	for i := range 1000 {
		c.Put(i, i)
		c.Put(i, i) // put again: counted once
		if len(c.cur) > 100 {
			t.Fatalf("a generation holds %d entries, want at most 100", len(c.cur))
		}
	}
	if v, ok := c.Get(999); !ok || v != 999 {
		t.Fatalf("Get(999) = %d, %v; want the newest entry kept", v, ok)
	}
	if _, ok := c.Get(0); ok {
		t.Fatal("the oldest entry is still kept")
	}
	if len(c.cur) != 100 {
		t.Errorf("the newer generation holds %d entries after 1,000 different puts, want 100", len(c.cur))
	}
}
