package consolidation

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/cards"
	"github.com/engramhq/engram/internal/maintain"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"go.uber.org/zap"
)

// Card file names.
const (
	MemoryCard = "MEMORY.md"
	UserCard   = "USER.md"
)

// Cards renders a user's two cards from their active memories and
// scratchpad at now: MEMORY.md within maxChars (≤ 0: cards.MemoryMDChars)
// with at most perKind entries of each kind (≤ 0 or above
// cards.MemoryMDPerKind: cards.MemoryMDPerKind), and USER.md. The
// consolidator writes them to files and the HTTP API serves them; both
// render with this.
func Cards(mems []memory.Memory, pad *memory.Scratchpad, now time.Time, maxChars, perKind int) (memoryMD, userMD string) {
	if perKind > 0 && perKind < cards.MemoryMDPerKind {
		mems = topPerKind(mems, perKind, now)
	}
	return cards.MemoryMD(mems, now, maxChars), cards.UserMD(mems, pad, now)
}

// topPerKind keeps the perKind best-scoring memories of each kind.
func topPerKind(mems []memory.Memory, perKind int, now time.Time) []memory.Memory {
	sorted := slices.Clone(mems)
	slices.SortStableFunc(sorted, func(a, b memory.Memory) int {
		if c := cmp.Compare(maintain.Score(b, now), maintain.Score(a, now)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	count := map[memory.Kind]int{}
	out := sorted[:0]
	for _, m := range sorted {
		if count[m.Kind] < perKind {
			count[m.Kind]++
			out = append(out, m)
		}
	}
	return out
}

// CardsPath is the directory of a user's cards under dir: one directory
// per namespace and user, each name escaped so that no id can climb out
// of dir or name a hidden file.
func CardsPath(dir string, scope memory.Scope) string {
	return filepath.Join(dir, pathToken(scope.Namespace), pathToken(scope.User))
}

// pathToken keeps letters, digits, '-' and '_' and writes every other byte
// as %XX, so "a/../b" and "张三" are one safe path element each.
func pathToken(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() == 0 {
		return "%"
	}
	return b.String()
}

// renderCards writes a user's cards atomically (cards.WriteAtomic): an
// agent reading MEMORY.md never sees half of an old card and half of a
// new one.
func (c *Consolidator) renderCards(ctx context.Context, scope memory.Scope, now time.Time, maxChars, perKind int) error {
	if c.CardsDir == "" || c.Store == nil {
		return nil
	}
	mems, err := c.Store.ActiveMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
	}
	pad, err := c.scratchpad(ctx, scope)
	if err != nil {
		return err
	}
	memMD, userMD := Cards(mems, &pad, now, maxChars, perKind)
	dir := CardsPath(c.CardsDir, scope)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("cards dir: %w", err)
	}
	if err := cards.WriteAtomic(filepath.Join(dir, MemoryCard), []byte(memMD)); err != nil {
		return err
	}
	return cards.WriteAtomic(filepath.Join(dir, UserCard), []byte(userMD))
}

// renderCardsAction runs render_cards for one user, at the firing's (or
// the event's) time.
func (c *Consolidator) renderCardsAction(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	return c.renderCards(ctx, scope, r.at, a.Int("max_chars"), a.Int("per_kind"))
}

// cardsDue is a user's pending card render: when, and the stream position
// the read model must reach first.
type cardsDue struct {
	at  time.Time
	seq uint64
}

// cardTriggers change what a user's cards show.
var cardTriggers = []string{events.TypeEpisodeBuilt, events.TypeScratchpadUpdated, events.TypeProfileRefreshed,
	events.TypeMemoriesMerged, events.TypeMemoriesArchived, events.TypeMemoryExtracted, events.TypeMemoryAdded,
	events.TypeMemoryUpdated, events.TypeMemoryDeleted, events.TypePendingConfirmed}

// noteCards schedules a render of the event's user's cards CardsDelay
// after the last change (debounced: a burst of changes renders once).
func (c *Consolidator) noteCards(a memory.Applied) {
	if a.Type == events.TypeUserForgotten {
		// The user is gone: a render still due would write their cards
		// again, after forget removed them.
		c.mu.Lock()
		delete(c.cards, a.Scope)
		c.mu.Unlock()
		return
	}
	if c.CardsDir == "" || c.Store == nil || !slices.Contains(cardTriggers, a.Type) || a.Scope.User == "" {
		return
	}
	c.mu.Lock()
	if c.cards == nil {
		c.cards = map[memory.Scope]cardsDue{}
	}
	c.cards[a.Scope] = cardsDue{at: time.Now().Add(c.CardsDelay), seq: max(c.cards[a.Scope].seq, a.Seq)}
	c.mu.Unlock()
	c.poke()
}

func (c *Consolidator) poke() {
	c.mu.Lock()
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
	}
	ch := c.wake
	c.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
}

// runCards renders cards as they fall due until ctx ends.
func (c *Consolidator) runCards(ctx context.Context) {
	c.poke() // makes the channel
	c.mu.Lock()
	wake := c.wake
	c.mu.Unlock()
	for {
		now := time.Now()
		var due []memory.Scope
		var seq uint64
		next := time.Duration(-1)
		c.mu.Lock()
		for s, d := range c.cards {
			if !d.at.After(now) {
				due = append(due, s)
				seq = max(seq, d.seq)
				delete(c.cards, s)
			} else if wait := d.at.Sub(now); next < 0 || wait < next {
				next = wait
			}
		}
		c.mu.Unlock()
		if len(due) > 0 {
			slices.SortFunc(due, func(a, b memory.Scope) int {
				return strings.Compare(a.Namespace+"\x00"+a.User, b.Namespace+"\x00"+b.User)
			})
			if err := c.waitSeq(ctx, seq); err != nil && ctx.Err() == nil {
				c.Log.Warn("cards rendered before the read model caught up", zap.Error(err))
			}
			for _, s := range due {
				if err := c.renderCards(ctx, s, time.Now(), 0, 0); err != nil && ctx.Err() == nil {
					c.Log.Warn("render cards", zap.String(fieldUser, scopeKey(s)), zap.Error(err))
				}
			}
			continue
		}
		var timer *time.Timer
		var fired <-chan time.Time
		if next >= 0 {
			timer = time.NewTimer(next)
			fired = timer.C
		}
		select {
		case <-ctx.Done():
		case <-wake:
		case <-fired:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}
