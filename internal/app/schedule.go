package app

import (
	"context"
	"time"

	"github.com/engramhq/engram/internal/rules"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// firings claims the consolidator's scheduled firings across its
// instances (stream.Firings).
type firings struct{ *stream.Firings }

func (a *App) openFirings(ctx context.Context, log *zap.Logger) (firings, error) {
	f, err := stream.OpenFirings(ctx, a.bus(stream.RoleConsolidator).js, log)
	return firings{f}, err
}

// since is when the schedule last ran anywhere (stream.Firings.Since).
func (f firings) since(ctx context.Context) time.Time { return f.Since(ctx) }

// claim reports whether this instance runs firing fr (stream.Firings.Claim).
func (f firings) claim(ctx context.Context, fr rules.Firing) bool {
	return f.Claim(ctx, fr.Rule.Name, fr.At)
}
