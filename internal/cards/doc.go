// Package cards renders engram's markdown cards — MEMORY.md, the short list
// of what matters most that is injected into every prompt (seed 000 §7.4,
// §8.1), and USER.md, the user profile filled from memories (seed 000 §6.3)
// — and writes them to disk atomically.
//
// Memory content is data, not markup: it was written by users, agents and
// models, and a card is read by a model as part of its instructions. Every
// entry is one list item on one line with markdown and HTML escaped, so a
// memory cannot open a heading, a code fence, a block quote or a tag, and
// no line of a card that starts with '#' comes from a memory. Headings
// follow the language of the content (mostly Chinese → Chinese headings).
//
// What it must never do: read a clock (now is a parameter, so a rebuild
// renders the same card), depend on map order, render credentials, write a
// card that is half old and half new, or import anything beyond the
// standard library, internal/memory and internal/maintain (whose Score
// ranks the entries).
//
// Concurrency: the renderers are pure and safe from many goroutines.
// WriteAtomic is safe to call concurrently for different paths; for one
// path the last rename wins and readers always see a whole file.
//
// Testing: golden files in testdata/ for each card in Chinese and English
// (go test -run Golden -update rewrites them), the size and per-kind limits
// with 500 memories, injection attempts rendered inert, WriteAtomic on a
// temp dir, and the fuzz target FuzzMemoryMD whose seed corpus lives in
// testdata/fuzz/FuzzMemoryMD.
package cards
