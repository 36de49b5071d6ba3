package consolidation

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/cards"
	"github.com/engramhq/engram/internal/maintain"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/rules"
	"go.uber.org/zap"
)

// Card file names. MEMORY.md and USER.md are read back when a person
// edits them; the L1 cards of seed 004 beside them (the agent's identity
// card, the projects' log, the hot insights) are only written.
const (
	MemoryCard   = "MEMORY.md"
	UserCard     = "USER.md"
	AgentCard    = "AGENT.md"
	ProjectCard  = "PROJECT.md"
	InsightsCard = "INSIGHTS.md"
)

// projectDays is how far back PROJECT.md reads episodes.
const projectDays = 365

// L1 renders a user's seed 004 L1 cards beside MEMORY.md and USER.md:
// the agent's identity card (from the identity the user confirmed, nil
// when none, and the persona traits), the projects' rolling log and the
// hot insights. The consolidator writes them to files and the HTTP API
// serves them; both render with this.
func L1(id *memory.Identity, mems []memory.Memory, pad *memory.Scratchpad, eps []memory.Episode, now time.Time) (agentMD, projectMD, insightsMD string) {
	return cards.AgentMD(id, mems, now), cards.ProjectMD(mems, pad, eps, now), cards.InsightsMD(mems, now)
}

// l1 reads what the L1 cards are rendered from and renders them.
func (c *Consolidator) l1(ctx context.Context, scope memory.Scope, mems []memory.Memory, pad *memory.Scratchpad, now time.Time) (agentMD, projectMD, insightsMD string, err error) {
	id, ok, err := c.Store.Identity(ctx, scope)
	if err != nil {
		return "", "", "", memory.Errorf(memory.EUNAVAILABLE, "read the identity: %v", err)
	}
	eps, err := c.Store.EpisodesEnded(ctx, scope, now.AddDate(0, 0, -projectDays), now.Add(time.Minute))
	if err != nil {
		return "", "", "", memory.Errorf(memory.EUNAVAILABLE, "read the episodes: %v", err)
	}
	var idp *memory.Identity
	if ok {
		idp = &id
	}
	a, p, i := L1(idp, mems, pad, eps, now)
	return a, p, i, nil
}

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
	c.cardsMu.Lock()
	defer c.cardsMu.Unlock()
	if c.CardsLease && !c.cardsHeld {
		return nil // another instance writes the cards
	}
	dir := CardsPath(c.CardsDir, scope)
	mems, err := c.Store.ActiveMemories(ctx, scope)
	if err != nil {
		return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
	}
	imported, err := c.importCardEdits(ctx, scope, dir, mems, now)
	if err != nil {
		// Writing the card now would throw the person's edit away.
		return fmt.Errorf("a card edited by hand was not imported (the cards are left as they are): %w", err)
	}
	if imported {
		if c.Head == nil {
			// The events just published re-render the card once applied.
			return nil
		}
		head, err := c.Head(ctx)
		if err != nil {
			return err
		}
		if err := c.waitSeq(ctx, head); err != nil {
			return err
		}
		if mems, err = c.Store.ActiveMemories(ctx, scope); err != nil {
			return memory.Errorf(memory.EUNAVAILABLE, "read memories: %v", err)
		}
	}
	pad, err := c.scratchpad(ctx, scope)
	if err != nil {
		return err
	}
	agentMD, projectMD, insightsMD, err := c.l1(ctx, scope, mems, &pad, now)
	if err != nil {
		return err
	}
	if perKind > 0 && perKind < cards.MemoryMDPerKind {
		mems = topPerKind(mems, perKind, now)
	}
	memMD, userMD := cards.MemoryMDFile(mems, now, maxChars), cards.UserMDFile(mems, &pad, now)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("cards dir: %w", err)
	}
	for _, w := range []struct{ name, body string }{{AgentCard, agentMD}, {ProjectCard, projectMD}, {InsightsCard, insightsMD}} {
		path := filepath.Join(dir, w.name)
		if w.body == "" {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			continue
		}
		if err := cards.WriteAtomic(path, []byte(w.body)); err != nil {
			return err
		}
	}
	// What engram wrote is kept beside the card, so that a person's edit
	// can be told from it (importCardEdits). It is written before the
	// card, and what it held before is kept too (.prev): after a crash
	// between the two writes the card equals .prev, which is no edit.
	for _, w := range []struct{ last, card, body string }{
		{lastMemoryCard, MemoryCard, memMD}, {lastUserCard, UserCard, userMD},
	} {
		// A person who saves the card while this render runs keeps their
		// edit: the card is not replaced, what engram last wrote is put
		// back, and the next look imports the edit.
		cardPath, lastPath := filepath.Join(dir, w.card), filepath.Join(dir, w.last)
		cur, err1 := os.ReadFile(cardPath)
		last, err2 := os.ReadFile(lastPath)
		if err1 == nil && err2 == nil && len(bytes.TrimSpace(cur)) > 0 && !bytes.Equal(cur, last) {
			return nil
		}
		if err2 == nil && !bytes.Equal(last, []byte(w.body)) {
			if err := cards.WriteAtomic(lastPath+prevSuffix, last); err != nil {
				return err
			}
		}
		if err := cards.WriteAtomic(lastPath, []byte(w.body)); err != nil {
			return err
		}
		written, err := cards.WriteAtomicIf(cardPath, []byte(w.body), func() bool {
			now, err := os.ReadFile(cardPath)
			return errors.Is(err, fs.ErrNotExist) || err == nil && bytes.Equal(now, cur)
		})
		if err != nil {
			return err
		}
		if !written {
			if err2 == nil {
				return cards.WriteAtomic(lastPath, last)
			}
			return os.Remove(lastPath)
		}
		c.noteCardStat(cardPath, []byte(w.body))
	}
	return nil
}

// What engram last wrote in MEMORY.md and USER.md, kept beside them.
const (
	lastMemoryCard = ".MEMORY.md.engram"
	lastUserCard   = ".USER.md.engram"
	prevSuffix     = ".prev"
)

// cardFile is a card a person may edit: its file, where engram keeps what
// it last wrote there, and how to read a person's edits of it.
type cardFile struct {
	name, last string
	diff       func(last, edited string) cards.Edits
}

var editableCards = []cardFile{
	{MemoryCard, lastMemoryCard, cards.DiffMemoryMD},
	{UserCard, lastUserCard, cards.DiffUserMD},
}

// importCardEdits publishes what a person changed in the user's MEMORY.md
// and USER.md since engram last wrote them, as the HTTP API publishes a
// person's memory edits: a line added is a memory.added (a core memory of
// the section's kind), a line whose text changed (or, in MEMORY.md, that
// moved to another section) a memory.updated, a line removed a
// memory.deleted. It reports whether it published anything. Event ids
// come from the edited file, so a retry publishes nothing new. Lines of
// memories no longer active are left alone; an emptied file is read as no
// edit (a card is rewritten, not erased).
func (c *Consolidator) importCardEdits(ctx context.Context, scope memory.Scope, dir string, mems []memory.Memory, now time.Time) (bool, error) {
	active := make(map[string]bool, len(mems))
	for _, m := range mems {
		active[m.ID] = true
	}
	var outs []memory.Outgoing
	var taken []func() error
	for _, cf := range editableCards {
		edited, err := os.ReadFile(filepath.Join(dir, cf.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, err
		}
		last, err := os.ReadFile(filepath.Join(dir, cf.last))
		if errors.Is(err, fs.ErrNotExist) {
			continue // written before cards kept their last rendering
		}
		if err != nil {
			return false, err
		}
		if bytes.Equal(edited, last) || len(bytes.TrimSpace(edited)) == 0 {
			continue
		}
		if prev, err := os.ReadFile(filepath.Join(dir, cf.last+prevSuffix)); err == nil && bytes.Equal(edited, prev) {
			continue // engram's own card from before a crash, not an edit
		}
		e := cf.diff(string(last), string(edited))
		key := hashOf(scope.Namespace, scope.User, cf.name, string(edited))
		out := func(typ string, i int, id string, data any) {
			outs = append(outs, memory.Outgoing{Type: typ, ID: "card-" + hashOf(key, typ, fmt.Sprint(i), id),
				Scope: scope, Time: now, Data: data})
		}
		for i, l := range e.Added {
			if len(l.Text) > events.MaxMemoryContentBytes {
				continue
			}
			class, ok := cardClasses[l.Section]
			if l.Section == "" {
				class, ok = cardClasses[string(l.Kind)]
			}
			if !ok {
				continue
			}
			eventID := "card-" + hashOf(key, events.TypeMemoryAdded, fmt.Sprint(i), "")
			out(events.TypeMemoryAdded, i, "", &events.MemoryAdded{MemoryID: memory.MemoryID(Source, eventID, 0),
				Tier: events.TierCore, Kind: string(l.Kind), Category: class.category, Subject: "user",
				Predicate: class.predicate, Content: l.Text, Importance: cardImportance, Confidence: 1})
		}
		for i, l := range e.Updated {
			if !active[l.ID] || len(l.Text) > events.MaxMemoryContentBytes {
				continue
			}
			u := &events.MemoryUpdated{MemoryID: l.ID}
			if l.Text != "" {
				u.Content = &l.Text
			}
			if l.Kind != "" {
				kind := string(l.Kind)
				u.Kind = &kind
			}
			out(events.TypeMemoryUpdated, i, l.ID, u)
		}
		for i, id := range e.Deleted {
			if active[id] {
				active[id] = false // not deleted twice, nor updated, by the other card
				out(events.TypeMemoryDeleted, i, id, &events.MemoryDeleted{MemoryID: id, Reason: "removed from " + cf.name + " by hand"})
			}
		}
		c.Log.Info("card edited by hand", zap.String("card", cf.name), zap.String(fieldUser, scopeKey(scope)),
			zap.Int("added", len(e.Added)), zap.Int("updated", len(e.Updated)), zap.Int("deleted", len(e.Deleted)))
		path := filepath.Join(dir, cf.last)
		taken = append(taken, func() error { return cards.WriteAtomic(path, edited) })
	}
	if len(outs) > 0 {
		if err := emitErr(c.emit(ctx, outs...)); err != nil {
			return false, err
		}
	}
	// The edits are taken: until the next render, compare with them.
	for _, f := range taken {
		if err := f(); err != nil {
			return false, err
		}
	}
	return len(outs) > 0, nil
}

// cardImportance is a line a person added to MEMORY.md: high enough to
// stay on the card.
const cardImportance = 0.8

// cardClasses are the category and predicate of a line a person added
// under each section of MEMORY.md (by kind) and USER.md (by section).
// None is single-valued, so an added line supersedes nothing.
var cardClasses = map[string]struct{ category, predicate string }{
	events.KindIdentity:   {events.CategoryIdentity, "note"},
	events.KindPreference: {events.CategoryConfig, "prefers"},
	events.KindRule:       {events.CategoryConfig, "rule"},
	events.KindFact:       {events.CategoryEvent, "note"},
	events.KindSkill:      {events.CategorySolution, "skill"},
	events.KindError:      {events.CategorySolution, "lesson"},
	events.KindContext:    {events.CategoryConversation, "note"},
	cards.UserBasic:       {events.CategoryIdentity, "note"},
	cards.UserTech:        {events.CategoryConfig, "tech"},
	cards.UserEnv:         {events.CategoryConfig, "config"},
	cards.UserPrefs:       {events.CategoryConfig, "prefers"},
}

// cardStat is what the poll last saw of a MEMORY.md.
type cardStat struct {
	size int64
	mod  time.Time
}

// noteCardStat records the stat of a card engram just wrote with body. It
// stats first and then reads: when a person saved the file in between, or
// before, the content differs and nothing is recorded, so the next poll
// compares the file with what engram wrote and finds the edit.
func (c *Consolidator) noteCardStat(path string, body []byte) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	cur, err := os.ReadFile(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cardStat == nil {
		c.cardStat = map[string]cardStat{}
	}
	if err != nil || !bytes.Equal(cur, body) {
		delete(c.cardStat, path)
		return
	}
	c.cardStat[path] = cardStat{fi.Size(), fi.ModTime()}
}

// pollCards finds the MEMORY.md and USER.md files a person changed since the last
// look and makes their users' cards due now: the render imports the edit.
// A file not seen before (after a restart) is compared with what engram
// last wrote.
func (c *Consolidator) pollCards() {
	if c.CardsDir == "" || c.Store == nil || !c.holdsCards() {
		return
	}
	nss, _ := os.ReadDir(c.CardsDir)
	for _, ns := range nss {
		if !ns.IsDir() {
			continue
		}
		users, _ := os.ReadDir(filepath.Join(c.CardsDir, ns.Name()))
		for _, u := range users {
			if !u.IsDir() {
				continue
			}
			dir := filepath.Join(c.CardsDir, ns.Name(), u.Name())
			changed := false
			for _, cf := range editableCards {
				changed = c.cardChanged(dir, cf) || changed
			}
			if !changed {
				continue
			}
			nsName, ok1 := unPathToken(ns.Name())
			user, ok2 := unPathToken(u.Name())
			if !ok1 || !ok2 {
				continue
			}
			scope := memory.Scope{Namespace: nsName, User: user}
			c.mu.Lock()
			if c.cards == nil {
				c.cards = map[memory.Scope]cardsDue{}
			}
			c.cards[scope] = cardsDue{at: time.Now(), seq: c.cards[scope].seq}
			c.mu.Unlock()
		}
	}
}

// cardChanged reports whether a card changed since the poll last looked
// (or, the first time, differs from what engram last wrote).
func (c *Consolidator) cardChanged(dir string, cf cardFile) bool {
	path := filepath.Join(dir, cf.name)
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	st := cardStat{fi.Size(), fi.ModTime()}
	c.mu.Lock()
	prev, seen := c.cardStat[path]
	if c.cardStat == nil {
		c.cardStat = map[string]cardStat{}
	}
	c.cardStat[path] = st
	c.mu.Unlock()
	if seen {
		return prev != st
	}
	card, err1 := os.ReadFile(path)
	last, err2 := os.ReadFile(filepath.Join(dir, cf.last))
	return err1 == nil && err2 == nil && !bytes.Equal(card, last)
}

// unPathToken undoes pathToken; ok is false for a name pathToken does not
// write.
func unPathToken(s string) (string, bool) {
	if s == "%" {
		return "", true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), pathToken(b.String()) == s
}

// renderCardsAction runs render_cards for one user, at the firing's (or
// the event's) time.
func (c *Consolidator) renderCardsAction(ctx context.Context, r *run, a rules.Action, scope memory.Scope) error {
	if !c.holdsCards() {
		return memory.Errorf(memory.EINVALID, "the cards are written by another consolidator instance")
	}
	return c.renderCards(ctx, scope, r.at, a.Int("max_chars"), a.Int("per_kind"))
}

// cardsOnly reports whether every action of a rule renders cards: with
// CardsLease, such a rule's firings are the cards' writer's to run.
func cardsOnly(r rules.Rule) bool {
	for _, a := range r.Do {
		if a.Type != rules.ActRenderCards {
			return false
		}
	}
	return len(r.Do) > 0
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

// holdsCards reports whether this instance writes the cards now.
func (c *Consolidator) holdsCards() bool {
	c.cardsMu.Lock()
	defer c.cardsMu.Unlock()
	return !c.CardsLease || c.cardsHeld
}

// HoldCards makes this instance the cards' writer until ctx ends (with
// CardsLease; the caller holds a lease that one instance at a time
// holds). Taking them, it renders every user's cards: what changed, and
// what a person edited, while another instance wrote them is caught up.
// Giving them up waits for a render under way, so two instances never
// write the cards at once.
func (c *Consolidator) HoldCards(ctx context.Context) {
	c.cardsMu.Lock()
	c.cardsHeld = true
	c.cardsMu.Unlock()
	c.cardStatReset()
	if c.CardsDir != "" && c.Store != nil {
		scopes, err := c.Store.Scopes(ctx)
		if err != nil && ctx.Err() == nil {
			c.Log.Warn("cards taken, but the users cannot be listed to render theirs", zap.Error(err))
		}
		c.mu.Lock()
		if c.cards == nil {
			c.cards = map[memory.Scope]cardsDue{}
		}
		for _, s := range scopes {
			c.cards[s] = cardsDue{at: time.Now(), seq: c.cards[s].seq}
		}
		c.mu.Unlock()
		c.poke()
	}
	<-ctx.Done()
	c.cardsMu.Lock()
	c.cardsHeld = false
	c.cardsMu.Unlock()
}

// cardStatReset forgets what the poll saw: files another instance wrote
// are compared with what engram last wrote when next looked at.
func (c *Consolidator) cardStatReset() {
	c.mu.Lock()
	c.cardStat = nil
	c.mu.Unlock()
}

// Observe is told of every event the read model applied (in a worker
// whose read model holds every user, unlike the partitions its consumer
// handles): an event that changes what a user's cards show makes them
// due, as Handle does for the events it is handed.
func (c *Consolidator) Observe(a memory.Applied) { c.noteCards(a) }

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
	var lastPoll time.Time
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
				// A panic is one user's cards failing, not the loop's end.
				err := memory.Recovered(func() error { return c.renderCards(ctx, s, time.Now(), 0, 0) })
				if err != nil && ctx.Err() == nil {
					c.Log.Warn("render cards", zap.String(fieldUser, scopeKey(s)), zap.Error(err))
				}
			}
			continue
		}
		if c.CardsPoll > 0 && (next < 0 || next > c.CardsPoll) {
			next = c.CardsPoll
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
		if c.CardsPoll > 0 && time.Since(lastPoll) >= c.CardsPoll {
			lastPoll = time.Now()
			c.pollCards()
		}
	}
}
