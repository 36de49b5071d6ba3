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
}

// Forget erases a user. In order: a user.forgotten receipt (no content)
// is published, which makes every read model drop the user and stays on
// the stream so a rebuild agrees; every earlier event of the user is
// erased from MEMORY and every dead letter of theirs from DEADLETTER
// (stream.Erase); this process's read model applies the receipt and its
// write-ahead log is truncated; the user's cards are removed. Running it
// again is safe: a second receipt finds nothing more to erase.
func (a *App) Forget(ctx context.Context, scope memory.Scope, reason string) (ForgetReport, error) {
	rep := ForgetReport{Namespace: scope.Namespace, User: scope.User}
	if err := scope.Validate(); err != nil {
		return rep, err
	}
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	now := time.Now().UTC()
	e, err := events.NewDerived("engram/operator", events.TypeUserForgotten,
		"forget-"+now.Format("20060102T150405Z")+"-"+hex.EncodeToString(nonce[:]),
		scope.Namespace, scope.User, now, &events.UserForgotten{Reason: reason})
	if err != nil {
		return rep, fmt.Errorf("forget: %w", err)
	}
	ack, err := stream.NewPublisher(a.js).Publish(ctx, e)
	if err != nil {
		return rep, memory.Errorf(memory.EUNAVAILABLE, "forget: publish the receipt: %v", err)
	}
	rep.ReceiptSeq = ack.Seq
	er, err := stream.Erase(ctx, a.js, scope.Namespace, scope.User, ack.Seq)
	rep.Events, rep.DeadLetters, rep.Unlinked = er.Events, er.DeadLetters, er.Unlinked
	if err != nil {
		return rep, fmt.Errorf("forget: %w", err)
	}
	if a.store != nil {
		if err := a.WaitProjected(ctx, ack.Seq); err != nil {
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
	a.Log.Info("user forgotten", zap.String("namespace", scope.Namespace), zap.Uint64("receipt_seq", ack.Seq),
		zap.Int("events", rep.Events), zap.Int("dead_letters", rep.DeadLetters), zap.Bool("unlinked_only", rep.Unlinked))
	return rep, nil
}
