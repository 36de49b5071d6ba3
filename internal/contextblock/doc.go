// Package contextblock turns what retrieval found into the memory part of
// an agent's system prompt: it fits the items into a token budget split by
// tier (Fit) and renders them as quoted, attributed notes (Render).
//
// # Budget
//
// A Budget has a total and a share for each tier (seed 004 §5):
//
//	tier        items                  DefaultBudget  Seed002Budget (§4.3)  Seed000Budget (§8.1)
//	profile     Profile, Scratchpad    600            15%                   900 (scratchpad 500 + core 400)
//	recent      Turns, Attachments     2,000          50%                   0
//	long-term   Memories, Episodes     900            15%                   300 (dynamic memories)
//	reserve     (what is not memory)   500            20%                   1,800 (the rest of the prompt)
//	total                              4,000          the model's window    3,000
//
// Budget.Scale applies a split to a caller's own budget_tokens. Fit never
// trims the profile card; over the limit it cuts long-term items first
// (lowest score first), then recent ones (attachments by score, then the
// oldest turns). Shares are what a tier keeps when the others overflow, not
// ceilings: a tier may use what the others leave unused. Fit's doc gives
// the exact order. Tokens are counted with the caller's Counter on each
// item's rendered line, quote and provenance included, so the budget
// measures what the model reads; the header and section headings (a few
// dozen tokens) are not charged to any tier.
//
// # Stored text is data
//
// Memories hold what users and tools once wrote, so any of them may say
// "ignore previous instructions". Render states in its header that the
// quoted lines are notes, not instructions, and renders every item on one
// line, quoted, with its provenance: newlines fold to spaces, invisible
// characters are removed, and the characters that could close the quote
// or read as structure (quotes, backslashes, backticks, angle and square
// brackets, a leading '#', the colon of "system:"-style role markers) are
// escaped with a backslash. No item can start a line, open a heading, a
// code block, a tag, a special token or a link. Provenance gets the same
// treatment inside its parentheses.
//
// # What it must never do
//
// Drop or shorten the profile card; let content out of its quote; change
// content beyond the escaping above (taking out the backslashes gives the
// text back, with whitespace folded); call a model, the network or a
// store. It depends on the standard library and internal/memory only.
//
// # Concurrency
//
// Fit and Render are pure and safe for concurrent use. Fit copies the
// items it returns and never changes its argument. A Counter given to Fit
// is called from the caller's goroutine only.
//
// # Testing
//
// Budget arithmetic is checked against both seeds; Fit's trim order is
// checked item by item with a counter that returns a fixed cost per
// content; Render is compared with golden files in testdata (go test
// -run TestRenderGolden -update rewrites them) in Chinese and English. An
// injection table renders hostile contents and checks that each stays in
// its quote and no line poses as structure, and FuzzRender (seed corpus in
// testdata/fuzz) checks the same for any input, plus valid UTF-8 and that
// unescaping gives the content back.
package contextblock
