package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/textseg"
)

// An event of a forgotten user dated before their erasure — a worker's
// conclusion that was in flight when the user was forgotten, say — is not
// applied; one dated after is (the user came back).
func TestForgottenUserStaysForgotten(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	scope := memory.Scope{Namespace: "ns", User: "u"}
	receipt := memory.Applied{Envelope: memory.Envelope{Seq: 10, Source: "engram/operator", ID: "forget-1",
		Type: events.TypeUserForgotten, Scope: scope, Time: time.Unix(10, 0).UTC()}, Data: &events.UserForgotten{}}
	mustApply(t, s, turn(1, "u", "s", 0, "before"), receipt, turn(11, "u", "s", 0, "late but dated before"))
	late := turn(12, "u", "s", 1, "in flight")
	late.Time = time.Unix(5, 0).UTC()
	mustApply(t, s, late)
	if n, _ := s.CountTurns(t.Context(), scope); n != 1 {
		t.Fatalf("turns = %d, want 1 (the one dated after the erasure)", n)
	}
	after := turn(13, "u", "s", 2, "back again")
	after.Time = time.Unix(20, 0).UTC()
	mustApply(t, s, after)
	if n, _ := s.CountTurns(t.Context(), scope); n != 2 {
		t.Fatalf("turns = %d, want 2", n)
	}

	// In one transaction, the erasure time looked up once holds for each
	// event of the user, and a second forget in the batch moves it.
	again := memory.Applied{Envelope: memory.Envelope{Seq: 16, Source: "engram/operator", ID: "forget-2",
		Type: events.TypeUserForgotten, Scope: scope, Time: time.Unix(30, 0).UTC()}, Data: &events.UserForgotten{}}
	stale, fresh, staleAgain, fresh2 := turn(14, "u", "s", 3, "stale"), turn(15, "u", "s", 4, "fresh"),
		turn(17, "u", "s", 5, "stale after the second forget"), turn(18, "u", "s", 6, "fresh after it")
	stale.Time, fresh.Time, staleAgain.Time, fresh2.Time = time.Unix(6, 0).UTC(), time.Unix(21, 0).UTC(),
		time.Unix(25, 0).UTC(), time.Unix(31, 0).UTC()
	mustApply(t, s, stale, fresh, again, staleAgain, fresh2)
	if n, _ := s.CountTurns(t.Context(), scope); n != 1 {
		t.Fatalf("turns = %d, want 1 (the one dated after the second erasure)", n)
	}
}

// canaries are words of one user planted in every kind of record: lower
// case, mixed case (the index folds it), and Chinese (the index stores
// its bigrams).
var canaries = []string{"zebracanary", "QuokkaCanary", "鸭嘴兽金丝雀"}

// canaryForms is every spelling of c the read model could store: as
// given, folded, stemmed (porter rewrites the end of a word, so the word
// less its last letter is searched for), JSON-escaped, and for CJK each
// bigram the index holds.
func canaryForms(c string) []string {
	lower := strings.ToLower(c)
	forms := []string{c, lower, strings.ToUpper(c), strings.TrimSuffix(lower, string([]rune(lower)[len([]rune(lower))-1:]))}
	r := []rune(c)
	if r[0] >= 0x2E80 {
		var esc strings.Builder
		for i := range r {
			if i+1 < len(r) {
				forms = append(forms, string(r[i:i+2]))
			}
			fmt.Fprintf(&esc, `\u%04x`, r[i])
		}
		forms = append(forms, esc.String())
	}
	return forms
}

// canariesIn counts, per file under dir and per form, each canary's
// occurrences.
func canariesIn(t *testing.T, dir string) map[string]int {
	t.Helper()
	found := map[string]int{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, c := range canaries {
			for _, f := range canaryForms(c) {
				if n := bytes.Count(b, []byte(f)); n > 0 {
					found[fmt.Sprintf("%s %q", filepath.Base(path), f)] += n
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// plantCanaries applies, for user, every kind of record the read model
// keeps, each holding word, some of them in several versions (a turn
// recorded again, a memory updated, an episode rebuilt), so old versions
// are in the index too. It returns the next free seq.
func plantCanaries(t *testing.T, s *Store, seq uint64, user, word string) uint64 {
	t.Helper()
	var batch []memory.Applied
	session := fmt.Sprintf("s%d", seq)
	next := func(a memory.Applied) {
		a.Seq, a.ID, a.Time = seq, fmt.Sprintf("%s-%d", user, seq), time.Unix(int64(seq), 0).UTC()
		batch = append(batch, a)
		seq++
	}
	for i := range 3 {
		tr := turn(0, user, session, i, fmt.Sprintf("turn %d: the %s project ships on friday", i, word))
		d := tr.Data.(*events.TurnRecorded)
		d.ToolCalls = []events.ToolCall{{ID: "c1", Name: "search", Input: json.RawMessage(`{"q":"` + word + ` docs"}`)}}
		d.ToolResults = []events.ToolResult{{ToolCallID: "c1", Content: "found " + word + " in the wiki"}}
		d.Attachments = []events.Attachment{{Name: "plan.pdf", Description: "the " + word + " plan", Transcription: "read " + word}}
		next(tr)
	}
	next(turn(0, user, session, 1, "turn 1 again: "+word+" recorded once more"))
	scope := memory.Scope{Namespace: "ns", User: user}
	id := fmt.Sprintf("%s-%d", user, seq)
	for _, a := range []memory.Applied{
		derived(0, user, events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: "m-" + id, Kind: "fact", Category: "decision",
			Subject: "project", Predicate: "codename", Content: "the codename is " + word, Importance: 0.9, Confidence: 1}),
		derived(0, user, events.TypeMemoryUpdated, &events.MemoryUpdated{MemoryID: "m-" + id, Content: ptr("the codename is still " + word)}),
		derived(0, user, events.TypeMemoryAdded, &events.MemoryAdded{MemoryID: "p-" + id, Kind: "preference", Category: "identity",
			Subject: "user", Predicate: "maybe likes", Content: "maybe likes " + word, Importance: 0.3, Confidence: memory.ConfidencePending}),
		derived(0, user, events.TypeEpisodeBuilt, &events.Episode{ID: "ep-" + id, SessionID: session, Summary: "talked about " + word,
			Outcome: "ongoing", Started: time.Unix(1, 0), Ended: time.Unix(2, 0), Source: "compression", Turns: []int{0}}),
		derived(0, user, events.TypeEpisodeBuilt, &events.Episode{ID: "ep-" + id, SessionID: session, Summary: "shipped " + word,
			Goal: "ship " + word, Outcome: "completed", Started: time.Unix(1, 0), Ended: time.Unix(3, 0), Source: "session_end",
			Turns: []int{0, 1, 2}, Entities: []string{word}, Actions: []events.ActionNode{{Tool: "deploy", Params: word, Result: word + " up", Success: true}}}),
		derived(0, user, events.TypeScratchpadUpdated, &events.Scratchpad{Content: "- ship " + word, CurrentFocus: word, Source: "person"}),
		derived(0, user, events.TypeDailySummarized, &events.DailySummary{Date: "2025-06-01", Channel: "chat", Summary: "a day of " + word,
			RawTokens: 10, Source: "migration"}),
		derived(0, user, events.TypeExtractionRequested, &events.ExtractionRequested{RequestID: "r-" + id, SessionID: session,
			Reason: events.ReasonSessionEnded, Turns: []events.ExtractionTurn{{TurnIndex: 0, Role: "user", Content: word}}}),
	} {
		next(a)
	}
	mustApply(t, s, batch...)
	if mems, err := s.Memories(t.Context(), memory.MemoryQuery{Scope: scope, Status: string(memory.StatusPending)}); err != nil || len(mems) == 0 {
		t.Fatalf("pending memories of %s: %v %v", user, mems, err)
	}
	return seq
}

func ptr[T any](v T) *T { return &v }

// Forgetting a user leaves no byte of their text in any file of the read
// model: not in the full-text index's pages (a delete must name the
// row's words, or they stay), not in free pages, not in the write-ahead
// log; another user's text stays.
func TestForgetLeavesNoByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openIn(t, dir)
	seq := uint64(1)
	for i, c := range canaries {
		seq = plantCanaries(t, s, seq, "zed", c)
		seq = plantCanaries(t, s, seq, "kim", fmt.Sprintf("keepsake%d", i))
	}
	if err := s.Scrub(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := canariesIn(t, dir); len(got) < len(canaries) {
		t.Fatalf("the canaries were planted in too few places: %v", got)
	}
	mustApply(t, s, memory.Applied{Envelope: memory.Envelope{Seq: seq, Source: "engram/operator", ID: "forget-1",
		Type: events.TypeUserForgotten, Scope: memory.Scope{Namespace: "ns", User: "zed"}, Time: time.Unix(int64(seq), 0).UTC()},
		Data: &events.UserForgotten{}})
	if err := s.Scrub(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := canariesIn(t, dir); len(got) != 0 {
		t.Errorf("after forget: %v", got)
	}
	kim := memory.Scope{Namespace: "ns", User: "kim"}
	if hits, err := s.RecallTurns(t.Context(), kim, textseg.Understand("keepsake0"), 10); err != nil || len(hits) == 0 {
		t.Errorf("kim's turns are no longer found: %v %v", hits, err)
	}
}

// Turns that age out of retention leave no byte in the read model
// either: their full-text rows go by their words like a forgotten user's.
func TestExpiredTurnsLeaveNoByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openIn(t, dir)
	var batch []memory.Applied
	seq := uint64(1)
	for i, c := range canaries {
		batch = append(batch, turn(seq, "zed", "s1", i, "the "+c+" project"), turn(seq+1, "kim", "s1", i, "the keepsake project"))
		seq += 2
	}
	mustApply(t, s, batch...)
	if got := canariesIn(t, dir); len(got) == 0 {
		t.Fatal("the canaries were not planted")
	}
	r := derived(seq, "zed", events.TypeTurnsExpired, &events.TurnsExpired{BeforeSeq: seq, StoredBefore: time.Unix(1, 0)})
	mustApply(t, s, r)
	if err := s.Scrub(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := canariesIn(t, dir); len(got) != 0 {
		t.Errorf("after the turns expired: %v", got)
	}
	kim := memory.Scope{Namespace: "ns", User: "kim"}
	if hits, err := s.RecallTurns(t.Context(), kim, textseg.Understand("keepsake"), 10); err != nil || len(hits) != len(canaries) {
		t.Errorf("kim's turns found: %d %v, want %d", len(hits), err, len(canaries))
	}
}

// BenchmarkForget forgets one user at a time from a read model of 100,000
// turns of 1,000 users: each of the user's words is looked up in the
// index's segments and taken off its pages, so the cost follows what is
// erased, not the size of the index (which a merge of the whole index,
// before schema 13, read and wrote on every forget).
func BenchmarkForget(b *testing.B) {
	ctx := b.Context()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	}()
	const users, perUser = 1000, 100
	words := strings.Fields("deploy the billing service to production with new config check logs tea coffee " +
		"meeting friday kubernetes alerts dashboard invoice travel berlin hotel flight budget report review")
	seq := uint64(0)
	batch := make([]memory.Applied, 0, 1000)
	for i := range users * perUser {
		seq++
		u := fmt.Sprint("u", i%users)
		text := fmt.Sprintf("%s %s %s %s note%d", words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)],
			words[(i/11)%len(words)], i%997)
		batch = append(batch, turn(seq, u, "s", i/users, text))
		if len(batch) == cap(batch) {
			if err := firstError(s.Apply(ctx, batch)); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	var pages int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM turns_fts_data`).Scan(&pages); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		seq++
		u := fmt.Sprint("u", n%users)
		n++
		if err := firstError(s.Apply(ctx, []memory.Applied{{Envelope: memory.Envelope{Seq: seq, Source: "engram/operator",
			ID: fmt.Sprint("forget-", seq), Type: events.TypeUserForgotten, Scope: memory.Scope{Namespace: "ns", User: u},
			Time: time.Unix(int64(seq), 0).UTC()}, Data: &events.UserForgotten{}}})); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(pages), "index-rows")
}

// Every read model's log is scrubbed after an erasure, not only the one
// of the process that ran Forget: a partition's copy or a retriever apart
// applies the receipt (or the turns' expiry) and scrubs at its next
// compaction look, idle or not.
func TestErasureScrubbedAtTheNextCompactionLook(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{events.TypeUserForgotten, events.TypeTurnsExpired} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := openIn(t, dir)
			seq := uint64(1)
			for i, c := range canaries {
				if typ == events.TypeUserForgotten {
					seq = plantCanaries(t, s, seq, "zed", c)
				} else { // an expiry takes turns only
					mustApply(t, s, turn(seq, "zed", "s1", i, "the "+c+" project"))
					seq++
				}
			}
			if err := s.Scrub(t.Context()); err != nil { // the canaries are in the database file
				t.Fatal(err)
			}
			var erase memory.Applied
			if typ == events.TypeUserForgotten {
				erase = memory.Applied{Envelope: memory.Envelope{Seq: seq, Source: "engram/operator", ID: "forget-1",
					Type: typ, Scope: memory.Scope{Namespace: "ns", User: "zed"}, Time: time.Unix(int64(seq), 0).UTC()},
					Data: &events.UserForgotten{}}
			} else {
				erase = derived(seq, "zed", typ, &events.TurnsExpired{BeforeSeq: seq, StoredBefore: time.Unix(int64(seq), 0)})
			}
			mustApply(t, s, erase, turn(seq+1, "kim", "s1", 0, "busy, not idle"))
			ctx, cancel := context.WithCancel(t.Context())
			looked := make(chan error, 100)
			var compacting sync.WaitGroup
			compacting.Go(func() {
				s.Compact(ctx, Compaction{Every: 10 * time.Millisecond, Segments: 4, Pages: 256, Share: 0.05},
					func(err error) { looked <- err })
			})
			defer compacting.Wait()
			defer cancel()
			deadline := time.After(10 * time.Second)
			for len(canariesIn(t, dir)) > 0 {
				select {
				case err := <-looked:
					t.Fatalf("a compaction look: %v", err)
				case <-deadline:
					t.Fatalf("after the erasure and compaction looks: %v", canariesIn(t, dir))
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
	}
}

// A reader that keeps the log in use holds a scrub back, and the scrub
// does not hold the writer as long as it: it gives up after scrubWait
// (it waited the writer's 10 s before, and every apply with it), says so,
// and the next look scrubs once the reader is gone.
func TestScrubGivesWayToAReader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openIn(t, dir)
	seq := plantCanaries(t, s, 1, "zed", canaries[0])
	reader, err := s.r.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Rollback(reader)
	var n int
	if err := reader.QueryRowContext(t.Context(), `SELECT count(*) FROM turns`).Scan(&n); err != nil {
		t.Fatal(err) // the reader's snapshot holds the log's frames
	}
	mustApply(t, s, memory.Applied{Envelope: memory.Envelope{Seq: seq, Source: "engram/operator", ID: "forget-1",
		Type: events.TypeUserForgotten, Scope: memory.Scope{Namespace: "ns", User: "zed"}, Time: time.Unix(int64(seq), 0).UTC()},
		Data: &events.UserForgotten{}})
	start := time.Now()
	err = s.scrubIfDue(t.Context())
	if took := time.Since(start); err == nil || took > busyTimeout/2 {
		t.Fatalf("scrub with a reader in the log: %v after %s, want a busy error well before %s", err, took, busyTimeout)
	}
	if !s.scrubDue.Load() {
		t.Fatal("a scrub held back is no longer due")
	}
	mustApply(t, s, turn(seq+1, "kim", "s1", 0, "the writer is free"))
	if err := reader.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := s.scrubIfDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := canariesIn(t, dir); len(got) != 0 {
		t.Errorf("after the reader left and the next look: %v", got)
	}
	var timeout int
	if err := s.w.QueryRowContext(t.Context(), `PRAGMA busy_timeout`).Scan(&timeout); err != nil || timeout != int(busyTimeout.Milliseconds()) {
		t.Errorf("the writer's busy_timeout after a scrub: %d %v, want %d", timeout, err, busyTimeout.Milliseconds())
	}
}
