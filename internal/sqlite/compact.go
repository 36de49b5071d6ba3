package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// An FTS5 index is a stack of segments: every write transaction adds one,
// and FTS5's automerge keeps up to three of a size before merging them,
// so a read model of a million turns holds 10–15. Every term a query
// looks up (a document frequency, a candidate's postings) is sought in
// each of them: counting 316 terms of one user took 9–10 ms with 15
// segments and 1.2–1.5 ms with one (sqlite3, a kept 100k-memory + 1M-turn
// read model), and a 2,000-character dialogue's CPU went from p95 20 ms
// to 8.8 ms. Merging the segments while the read model is idle gives the
// queries that back; while events keep arriving nothing is merged beyond
// what automerge does.

// ftsTables are the full-text indexes compaction merges.
var ftsTables = []string{"turns_fts", "memories_fts", "episodes_fts"}

// Segments is how many segments each full-text index has, by table.
type Segments map[string]int

// Over says whether an index has more than limit segments.
func (segs Segments) Over(limit int) bool {
	for _, n := range segs {
		if n > limit {
			return true
		}
	}
	return false
}

// TextSegments returns how many segments each full-text index has (its
// %_idx table holds a row for every segment's first leaf at least).
func (s *Store) TextSegments(ctx context.Context) (Segments, error) {
	out := make(Segments, len(ftsTables))
	for _, t := range ftsTables {
		var n int
		if err := s.r.QueryRowContext(ctx, `SELECT count(DISTINCT segid) FROM `+t+`_idx`).Scan(&n); err != nil {
			return nil, fmt.Errorf("segments of %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// CompactText does up to pages pages of merging on each full-text index
// that segs (TextSegments, read since the last write) says holds more
// than one segment, a transaction each, and returns the segments after.
// A step holds the writer for as long as it writes its pages; an apply
// waits for it.
func (s *Store) CompactText(ctx context.Context, pages int, segs Segments) (Segments, error) {
	for _, t := range ftsTables {
		if segs[t] <= 1 {
			continue
		}
		// A negative count merges even fewer segments than usermerge:
		// repeated, it leaves one.
		if _, err := s.w.ExecContext(ctx, `INSERT INTO `+t+`(`+t+`, rank) VALUES ('merge', ?)`, -pages); err != nil {
			return nil, fmt.Errorf("compact %s: %w", t, err)
		}
	}
	return s.TextSegments(ctx)
}

// Compaction says when Compact merges a read model's full-text indexes.
type Compaction struct {
	// Every is how often the read model is looked at.
	Every time.Duration
	// Segments: an index of more segments than this is merged.
	Segments int
	// Pages is the work of one step (CompactText).
	Pages int
	// Share bounds the time spent merging, as a share of the time since
	// the last compaction began: the whole index is rewritten each time,
	// so a read model that is idle only briefly between bursts is not
	// rewritten after every one.
	Share float64
}

// DefaultCompaction looks every 10 s, merges past 4 segments in steps of
// 256 pages (1 MB), and spends at most a twentieth of the time merging.
var DefaultCompaction = Compaction{Every: 10 * time.Second, Segments: 4, Pages: 256, Share: 0.05}

// Compact merges the read model's full-text indexes into one segment each
// whenever it has been idle (no event applied) for one look, an index
// holds more than c.Segments, and the time budget allows; it stops a
// merge as soon as events arrive again and takes it up at the next idle
// look. At any look after an apply that erased text (or an Open that
// could not scrub), idle or not, it scrubs the write-ahead log first. It
// runs until ctx ends. A look or merge that fails is handed to failed and
// tried again at the next look: a busy or rebuilt read model must not end
// it.
func (s *Store) Compact(ctx context.Context, c Compaction, failed func(error)) {
	t := time.NewTicker(c.Every)
	defer t.Stop()
	var last uint64
	var spent time.Duration
	var since time.Time // when the last compaction began
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.scrubIfDue(ctx); err != nil && ctx.Err() == nil {
			failed(err)
		}
		if err := s.compactOnce(ctx, c, &last, &spent, &since); err != nil && ctx.Err() == nil {
			failed(fmt.Errorf("compact the full-text indexes: %w", err))
		}
	}
}

// scrubIfDue scrubs the write-ahead log once (scrubOnce) when an apply
// has erased text since the last scrub, or Open could not scrub; a reader
// keeping the log in use leaves it due for the next look.
func (s *Store) scrubIfDue(ctx context.Context) error {
	if !s.scrubDue.Swap(false) {
		return nil
	}
	done, err := s.scrubOnce(ctx)
	if err == nil && !done {
		err = errors.New("a reader kept the log in use; tried again at the next look")
	}
	if err != nil {
		s.scrubDue.Store(true)
		return fmt.Errorf("scrub the write-ahead log after an erasure: %w", err)
	}
	return nil
}

// compactOnce is one look of Compact: last is the position it last saw,
// since and spent when the last compaction began and how long it took.
func (s *Store) compactOnce(ctx context.Context, c Compaction, last *uint64, spent *time.Duration, since *time.Time) error {
	seq, err := s.LastSeq(ctx)
	if err != nil {
		return err
	}
	idle := seq == *last
	*last = seq
	if !idle || (!since.IsZero() && float64(*spent) > c.Share*float64(time.Since(*since))) {
		return nil
	}
	segs, err := s.TextSegments(ctx)
	if err != nil || !segs.Over(c.Segments) {
		return err
	}
	*since, *spent = time.Now(), 0
	for segs.Over(1) && ctx.Err() == nil {
		start := time.Now()
		segs, err = s.CompactText(ctx, c.Pages, segs)
		*spent += time.Since(start)
		if err != nil {
			return err
		}
		if seq, err = s.LastSeq(ctx); err != nil || seq != *last {
			return err // events again: they go first
		}
	}
	return nil
}
