package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/wait"
)

// Two consolidators apart, each with its own data dir and so its own
// cards dir, keep one set of cards (issue 24): one instance at a time
// writes every user's cards, whatever partitions of the events it holds;
// a line a person adds is read back once, however often the cards are
// rendered and by whichever instance; and when the writer dies the other
// takes the cards over with the edit in them.
func TestCardsApartOneSet(t *testing.T) {
	const partitions, users = 4, 4
	bus := busWithFastLeases(t)
	ingest := partitionWorker(t, bus, "ingest", RoleIngest, partitions, "", "")
	retriever := partitionWorker(t, bus, "retriever", RoleRetriever, partitions, "", "")
	c1 := partitionWorker(t, bus, "c1", RoleConsolidator, partitions, "", "")
	c2 := partitionWorker(t, bus, "c2", RoleConsolidator, partitions, "", "")
	wait.Until(t, "two consolidator partitions each", func() bool {
		held := partitionsHeld(t, bus, "consolidator")
		return held["c1"] == 2 && held["c2"] == 2
	})
	card := func(a *App, user string) string {
		b, _ := os.ReadFile(filepath.Join(consolidation.CardsPath(a.Config.CardsPath(), memory.Scope{Namespace: "default", User: user}),
			consolidation.MemoryCard))
		return string(b)
	}
	for u := range users {
		postMemory(t, retriever, fmt.Sprintf(`{"user":"u%d","kind":"preference","category":"config","subject":"user","predicate":"likes","content":"u%d likes green tea","importance":0.8}`, u, u))
	}
	// One writer: every user's card in its dir, none in the other's.
	var writer, other *App
	wait.Until(t, "every user's card written by one instance", func() bool {
		for _, pair := range [][2]*App{{c1, c2}, {c2, c1}} {
			all := true
			for u := range users {
				all = all && strings.Contains(card(pair[0], fmt.Sprintf("u%d", u)), "green tea")
			}
			if all {
				writer, other = pair[0], pair[1]
				return true
			}
		}
		return false
	})
	for _, a := range []*App{c1, c2} {
		if _, err := a.RunJob(t.Context(), "daily_cards", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	waitSettled(t, ingest)
	for u := range users {
		if s := card(other, fmt.Sprintf("u%d", u)); s != "" {
			t.Fatalf("the other instance wrote u%d's card too:\n%s", u, s)
		}
	}

	// A person adds a line; it is read back once.
	path := filepath.Join(consolidation.CardsPath(writer.Config.CardsPath(), memory.Scope{Namespace: "default", User: "u1"}), consolidation.MemoryCard)
	before := card(writer, "u1")
	edited := strings.Replace(before, "## Preferences\n", "## Preferences\n- u1 keeps bees\n", 1)
	if edited == before {
		t.Fatalf("setup: no preferences section in\n%s", before)
	}
	if err := os.WriteFile(path, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, "the added line to be a memory", func() bool { return hasContent(listMemories(t, retriever, "u1", ""), "keeps bees") })
	wait.Until(t, "the card re-rendered with the line once", func() bool {
		s := card(writer, "u1")
		return strings.Count(s, "keeps bees") == 1 && strings.Contains(s, "keeps bees <!-- ")
	})
	for _, a := range []*App{c1, c2} {
		if _, err := a.RunJob(t.Context(), "daily_cards", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	waitSettled(t, ingest)
	var added int
	for _, m := range readStream(t, bus.op, "mem.*.*."+events.TypeMemoryAdded) {
		if strings.HasPrefix(m.Envelope().ID, "card-") {
			added++
		}
	}
	if n := len(listMemories(t, retriever, "u1", "")); added != 1 || n != 2 {
		t.Fatalf("%d memory.added from the card, u1 has %d memories; want 1 and 2", added, n)
	}

	// The writer dies; the other takes the cards, with the line in them.
	crash(writer)
	wait.Until(t, "the other instance to write u1's card with the line", func() bool {
		s := card(other, "u1")
		return strings.Count(s, "keeps bees") == 1 && strings.Contains(s, "green tea")
	})
}
