package consolidation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
)

// importCardEdits publishes a person's edit once, and reads neither engram's
// own card from before a crash (.prev) nor an emptied card as an edit.
func TestImportCardEdits(t *testing.T) {
	t.Parallel()
	var got []memory.Outgoing
	c := New(func(_ context.Context, evs ...memory.Outgoing) error { got = append(got, evs...); return nil }, nil, nil, nil)
	dir := t.TempDir()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	mems := []memory.Memory{{ID: "m_tea", Kind: memory.KindPreference, Content: "User likes tea", Status: memory.StatusActive}}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := "# Core memory\n\n## Preferences\n- User likes tea <!-- m_tea -->\n"
	newer := "# Core memory\n\n## Preferences\n- User likes tea <!-- m_tea -->\n- User likes jazz <!-- m_jazz -->\n"
	write(lastMemoryCard+prevSuffix, old)
	write(lastMemoryCard, newer)
	write(MemoryCard, old) // a crash after the sidecar, before the card
	if ok, err := c.importCardEdits(t.Context(), memory.Scope{Namespace: "n", User: "u"}, dir, mems, now); ok || err != nil || len(got) != 0 {
		t.Fatalf("crash leftover read as an edit: %v %v %+v", ok, err, got)
	}
	write(MemoryCard, "  \n")
	if ok, err := c.importCardEdits(t.Context(), memory.Scope{Namespace: "n", User: "u"}, dir, mems, now); ok || err != nil || len(got) != 0 {
		t.Fatalf("emptied card read as an edit: %v %v %+v", ok, err, got)
	}
	write(MemoryCard, strings.Replace(newer, "likes tea", "likes green tea", 1))
	ok, err := c.importCardEdits(t.Context(), memory.Scope{Namespace: "n", User: "u"}, dir, mems, now)
	if !ok || err != nil || len(got) != 1 || got[0].Type != events.TypeMemoryUpdated {
		t.Fatalf("edit: %v %v %+v", ok, err, got)
	}
	if u := got[0].Data.(*events.MemoryUpdated); u.MemoryID != "m_tea" || *u.Content != "User likes green tea" {
		t.Fatalf("update = %+v", u)
	}
	// Taken: asking again publishes nothing.
	if ok, err := c.importCardEdits(t.Context(), memory.Scope{Namespace: "n", User: "u"}, dir, mems, now); ok || err != nil || len(got) != 1 {
		t.Fatalf("imported twice: %v %v %+v", ok, err, got)
	}
}
