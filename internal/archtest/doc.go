// Package archtest holds no code: its test keeps engram's layering true as
// the code grows (see STYLE.md, "Layout").
package archtest
