package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/consolidation"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// ForgetReport is what Forget erased.
type ForgetReport struct {
	Namespace   string `json:"namespace"`
	User        string `json:"user"`
	ReceiptSeq  uint64 `json:"receipt_seq"`
	Events      int    `json:"events_erased"`
	DeadLetters int    `json:"dead_letters_erased"`
	// Unlinked is true when the stream could only purge, not overwrite,
	// the events (a MEMORY stream created with deny_delete).
	Unlinked  bool `json:"unlinked_only,omitempty"`
	ReadModel bool `json:"read_model_scrubbed"`
	// Settled is false when workers were still busy after forgetSettle:
	// a conclusion they publish later for the user's old events is not
	// applied, but its bytes stay on the stream.
	Settled bool `json:"workers_settled"`
}

// forgetSettle bounds how long Forget waits for work in flight.
const forgetSettle = 30 * time.Second

// settleWorkers waits, up to max, until no durable consumer of MEMORY
// other than the read models, with a worker pulling from it, has a message
// waiting or in flight, twice in a row (a worker's conclusion is a new
// message for the next).
func (a *App) settleWorkers(ctx context.Context, max time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	calm := 0
	for {
		busy, err := stream.WorkersBusy(ctx, a.op.js)
		if err != nil {
			return false
		}
		if busy {
			calm = 0
		} else if calm++; calm >= 2 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Forget erases a user. In order: a first user.forgotten receipt makes
// every read model drop the user at once and the batcher drop their
// waiting turns; work in flight for them (an extraction, an episode) is
// let finish, up to forgetSettle; a second receipt follows, and every
// message of the user before it — their events, the first receipt, what
// the work in flight concluded — is erased from MEMORY, and every dead
// letter of theirs from DEADLETTER (stream.Erase). The second receipt (no
// content) stays, so a rebuild agrees: it drops what the first one's
// conclusions had put back. Then this process's read model applies it and
// its write-ahead log is truncated, and the user's cards are removed.
// Running it again is safe. It runs as the operator, who alone may
// delete messages: a process without that credential (an ingest apart)
// refuses.
func (a *App) Forget(ctx context.Context, scope memory.Scope, reason string) (ForgetReport, error) {
	rep := ForgetReport{Namespace: scope.Namespace, User: scope.User}
	if err := scope.Validate(); err != nil {
		return rep, err
	}
	if a.op == nil {
		return rep, memory.Errorf(memory.EUNAVAILABLE, "forget deletes messages from %s, which only the bus operator may, "+
			"and this process holds no operator credential: run `engram forget` as the operator, or give this "+
			"process nats.operator_nkey (never an ingest facing the internet)", stream.MemoryStream)
	}
	receipt := func() (uint64, error) {
		var nonce [8]byte
		_, _ = rand.Read(nonce[:])
		now := time.Now().UTC()
		e, err := events.NewDerived("engram/operator", events.TypeUserForgotten,
			"forget-"+now.Format("20060102T150405Z")+"-"+hex.EncodeToString(nonce[:]),
			scope.Namespace, scope.User, now, &events.UserForgotten{Reason: reason})
		if err != nil {
			return 0, fmt.Errorf("forget: %w", err)
		}
		ack, err := stream.NewPublisher(a.op.js).Publish(ctx, e)
		if err != nil {
			return 0, memory.Errorf(memory.EUNAVAILABLE, "forget: publish the receipt: %v", err)
		}
		return ack.Seq, nil
	}
	if _, err := receipt(); err != nil {
		return rep, err
	}
	rep.Settled = a.settleWorkers(ctx, forgetSettle)
	seq, err := receipt()
	if err != nil {
		return rep, err
	}
	rep.ReceiptSeq = seq
	er, err := stream.Erase(ctx, a.op.js, scope.Namespace, scope.User, seq)
	rep.Events, rep.DeadLetters, rep.Unlinked = er.Events, er.DeadLetters, er.Unlinked
	if err != nil {
		return rep, fmt.Errorf("forget: %w", err)
	}
	if a.store != nil {
		if err := a.WaitProjected(ctx, seq); err != nil {
			return rep, fmt.Errorf("forget: wait for the read model: %w", err)
		}
		if err := a.store.Scrub(ctx); err != nil {
			return rep, fmt.Errorf("forget: %w", err)
		}
		rep.ReadModel = true
	}
	if err := os.RemoveAll(consolidation.CardsPath(a.Config.CardsPath(), scope)); err != nil {
		return rep, fmt.Errorf("forget: remove cards: %w", err)
	}
	a.Log.Info("user forgotten", zap.String("namespace", scope.Namespace), zap.Uint64("receipt_seq", seq),
		zap.Int("events", rep.Events), zap.Int("dead_letters", rep.DeadLetters), zap.Bool("unlinked_only", rep.Unlinked))
	return rep, nil
}
