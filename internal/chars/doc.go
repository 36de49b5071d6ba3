// Package chars is the one home of the rune classes and string cuts that
// engram's packages must agree on: which runes are CJK (written without
// spaces between words), and how a string is cut to a limit in bytes or
// in characters without splitting a character.
//
// It imports only the standard library, so every package may use it, the
// domain (internal/memory) included. It must never grow language rules
// (segmentation, stemming, stop words): those belong to internal/textseg.
//
// A helper here replaces copies that had drifted apart; where the copies
// behaved differently, the choice made is pinned by a test in
// chars_test.go, one case per difference.
package chars
