package migrate

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/events"
)

// FuzzParseMemoryMD: whatever a MEMORY.md holds, parsing never fails or
// panics, every memory is one trimmed line of text found on the line it
// names, within the limit, and makes a valid memory.added; lines are in
// order.
func FuzzParseMemoryMD(f *testing.F) {
	f.Add([]byte("## 偏好\n- 喜欢喝茶\n"))
	f.Add([]byte("---\ntitle: x\n---\n# About\n| a | b |\n|---|---|\n| c | d |\n```\ncode\n```\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, problems, err := parseMemoryMD(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		lines := strings.Split(string(b), "\n")
		prev := 0
		for _, e := range entries {
			if e.line <= prev || e.line > len(lines) {
				t.Fatalf("entry at line %d after line %d, in a file of %d lines", e.line, prev, len(lines))
			}
			prev = e.line
			switch {
			case e.content == "" || e.content != strings.TrimSpace(e.content):
				t.Fatalf("line %d: content %q is empty or untrimmed", e.line, e.content)
			case strings.ContainsAny(e.content, "\n"):
				t.Fatalf("line %d: content spans lines: %q", e.line, e.content)
			case !utf8.ValidString(e.content):
				t.Fatalf("line %d: content is not UTF-8: %q", e.line, e.content)
			case len(e.content) > events.MaxMemoryContentBytes:
				t.Fatalf("line %d: content is %d bytes", e.line, len(e.content))
			case !e.tableRow && !strings.Contains(lines[e.line-1], e.content):
				t.Fatalf("line %d: content %q is not on line %q", e.line, e.content, lines[e.line-1])
			}
			data := events.MemoryAdded{Tier: events.TierCore, Kind: e.class.kind, Category: e.class.category, Subject: "user",
				Predicate: e.class.predicate, Content: e.content, Topic: e.topic, Importance: myclawImportance, Confidence: 1}
			if _, err := events.NewDerived(DefaultSource, events.TypeMemoryAdded, "id", "", "u", time.Unix(1, 0), data); err != nil {
				t.Fatalf("line %d: %v", e.line, err)
			}
		}
		for _, p := range problems {
			if p.line < 1 || p.line > len(lines) || p.what == "" {
				t.Fatalf("problem %+v outside the file's %d lines", p, len(lines))
			}
		}
	})
}
