// Package maintain decides what engram's scheduled maintenance does to
// memories: how they fade (category decay, seed 001 §8), which of them
// expire (priorities, seed 003), which are archived by the daily job (seed
// 000 §7.4) or by the maintenance cap (seed 002 §10.1), and which form the
// core profile (tier 1, seed 001 §7.3).
//
// It only decides. The consolidator turns a Plan into events (memory
// archived, profile refreshed) and the projector applies them, so a rebuild
// replays the decisions instead of remaking them.
//
// What it must never do: read a clock, draw a random number, or depend on
// map order — the time is a parameter and every list it returns has a fixed
// order, so the same memories at the same time always give the same answer;
// delete anything (every verdict is "archive", which keeps the memory and
// its history); import anything but the standard library and
// internal/memory; mutate the slices it is given.
//
// Concurrency: every function is pure and safe to call from many
// goroutines.
//
// Testing: the decay table at each half-life and floor, properties of Score
// (monotone in importance, age and access count), a mixed daily plan, the
// cap's order and ties, the core profile's order and limits, and a test that
// forbids imports beyond the standard library and internal/memory.
package maintain
