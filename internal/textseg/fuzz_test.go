package textseg

import (
	"testing"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/chars"
)

// FuzzMatch: whatever the user types, Match gives "" or an expression real
// FTS5 accepts, and a row holding the very same text is found by it.
func FuzzMatch(f *testing.F) {
	db := openFTS(f).db
	f.Fuzz(func(t *testing.T, query string) {
		tbl := &ftsTable{tb: t, db: db}
		expr := Match(query)
		if got, want := expr == "", len(Terms(query)) == 0; got != want {
			t.Fatalf("Match(%q)=%q but Terms=%q", query, expr, Terms(query))
		}
		if expr == "" {
			return
		}
		if !utf8.ValidString(expr) {
			t.Fatalf("Match(%q)=%q is not valid UTF-8", query, expr)
		}
		tbl.clear()
		tbl.insert(1, query)
		tbl.insert(2, "unrelated")
		ids, err := tbl.run(expr)
		if err != nil {
			t.Fatalf("Match(%q)=%s: FTS5 rejects it: %v", query, expr, err)
		}
		if !contains(ids, 1) {
			t.Fatalf("MATCH %s (from %q) found %v, not the row holding the same text (indexed as %q)", expr, query, ids, Index(query))
		}
	})
}

// FuzzIndex: Index never panics, writes valid UTF-8 in which FTS5 can only
// split where Go does, and every two adjacent CJK characters of the input are
// found by searching for them.
func FuzzIndex(f *testing.F) {
	db := openFTS(f).db
	f.Fuzz(func(t *testing.T, text string) {
		tbl := &ftsTable{tb: t, db: db}
		out := Index(text)
		if !utf8.ValidString(out) {
			t.Fatalf("Index(%q)=%q is not valid UTF-8", text, out)
		}
		for _, r := range out {
			if r >= utf8.RuneSelf && !isWordRune(r) {
				t.Fatalf("Index(%q)=%q keeps %U, which SQLite may read as a letter", text, out, r)
			}
		}
		var pairs []string
		seen := make(map[string]bool)
		prev, prevAt := rune(-1), 0
		for i := 0; i < len(text) && len(pairs) < 16; {
			r, size := utf8.DecodeRuneInString(text[i:])
			if chars.IsCJK(r) && chars.IsCJK(prev) && !seen[text[prevAt:i+size]] {
				seen[text[prevAt:i+size]] = true
				pairs = append(pairs, text[prevAt:i+size])
			}
			prev, prevAt = r, i
			i += size
		}
		if len(pairs) == 0 {
			return
		}
		tbl.clear()
		tbl.insert(1, text)
		for _, p := range pairs {
			if ids := tbl.search(p); !contains(ids, 1) {
				t.Fatalf("search %q (MATCH %s) in Index(%q)=%q found %v", p, Match(p), text, out, ids)
			}
		}
	})
}

// FuzzUnderstand: whatever an agent sends, Understand never panics, its
// MATCH is one FTS5 accepts, it finds the row holding the same text when
// it has terms, and Go's score of that row is positive.
func FuzzUnderstand(f *testing.F) {
	for _, s := range []string{"上次我发给你的那张猫的照片给我一下", "Which theme do I like?", "c++ -foo AND content:x *", `"unbalanced`, "what about that?"} {
		f.Add(s)
	}
	db := openFTS(f).db
	f.Fuzz(func(t *testing.T, query string) {
		tbl := &ftsTable{tb: t, db: db}
		q := Understand(query, query)
		if q.Empty() {
			return
		}
		expr := MatchTerms("", q.Terms)
		if !utf8.ValidString(expr) {
			t.Fatalf("MatchTerms(%q)=%q is not valid UTF-8", query, expr)
		}
		tbl.clear()
		tbl.insert(1, query)
		tbl.insert(2, "unrelated")
		ids, err := tbl.run(expr)
		if err != nil {
			t.Fatalf("MatchTerms(%q)=%s: FTS5 rejects it: %v", query, expr, err)
		}
		if !contains(ids, 1) {
			t.Fatalf("MATCH %s (from %q) found %v, not the row holding the same text", expr, query, ids)
		}
	})
}
