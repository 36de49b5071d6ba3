package retrieval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"sync"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/memory"
	"go.uber.org/zap"
)

// AccessLog batches access reinforcement: retrievals record the memories
// they used, and every Interval the counts are published as one
// memories.accessed event per scope, which the projector applies — so the
// counts are in the stream and a rebuild agrees with the live read model.
type AccessLog struct {
	Emit     memory.Emitter
	Interval time.Duration
	Log      *zap.Logger

	mu      sync.Mutex
	pending map[memory.Scope]map[string]*events.Access
}

// Accessed records that ids were used at at.
func (l *AccessLog) Accessed(scope memory.Scope, ids []string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[memory.Scope]map[string]*events.Access{}
	}
	byID := l.pending[scope]
	if byID == nil {
		byID = map[string]*events.Access{}
		l.pending[scope] = byID
	}
	for _, id := range ids {
		a := byID[id]
		if a == nil {
			a = &events.Access{MemoryID: id}
			byID[id] = a
		}
		a.Count++
		if at.After(a.Last) {
			a.Last = at.UTC()
		}
	}
}

// Run flushes every Interval until ctx is done, then once more.
func (l *AccessLog) Run(ctx context.Context) error {
	t := time.NewTicker(l.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			return l.Flush(fctx)
		case <-t.C:
			// A panic fails this flush, not the loop.
			if err := memory.Recovered(func() error { return l.Flush(ctx) }); err != nil {
				l.Log.Warn("publish accesses; kept for the next try", zap.Error(err))
			}
		}
	}
}

// Flush publishes what has been recorded. On failure the counts are kept.
func (l *AccessLog) Flush(ctx context.Context) error {
	l.mu.Lock()
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	var outs []memory.Outgoing
	for scope, byID := range pending {
		acc := make([]events.Access, 0, len(byID))
		for _, a := range byID {
			acc = append(acc, *a)
		}
		sort.Slice(acc, func(i, j int) bool { return acc[i].MemoryID < acc[j].MemoryID })
		for start := 0; start < len(acc); start += 1000 {
			chunk := acc[start:min(start+1000, len(acc))]
			at := chunk[0].Last
			for _, a := range chunk {
				if a.Last.After(at) {
					at = a.Last
				}
			}
			outs = append(outs, memory.Outgoing{Type: events.TypeMemoriesAccessed, ID: accessID(scope, chunk),
				Scope: scope, Time: at, Data: &events.MemoriesAccessed{Accesses: chunk}})
		}
	}
	if len(outs) == 0 {
		return nil
	}
	if err := l.Emit(ctx, outs...); err != nil {
		l.restore(pending)
		return err
	}
	return nil
}

// restore puts unpublished counts back, merged with any recorded since.
func (l *AccessLog) restore(pending map[memory.Scope]map[string]*events.Access) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = map[memory.Scope]map[string]*events.Access{}
	}
	for scope, byID := range pending {
		cur := l.pending[scope]
		if cur == nil {
			l.pending[scope] = byID
			continue
		}
		for id, a := range byID {
			if c := cur[id]; c != nil {
				c.Count += a.Count
				if a.Last.After(c.Last) {
					c.Last = a.Last
				}
			} else {
				cur[id] = a
			}
		}
	}
}

func accessID(scope memory.Scope, acc []events.Access) string {
	h := sha256.New()
	h.Write([]byte(scope.Namespace + "\x00" + scope.User))
	for _, a := range acc {
		h.Write([]byte("\x00" + a.MemoryID + "\x00" + a.Last.Format(time.RFC3339Nano)))
	}
	return "accessed-" + hex.EncodeToString(h.Sum(nil)[:12])
}
