// Command consolidator builds episodes, the scratchpad and the core
// profile, and runs rule-driven and scheduled jobs, on its own durable
// consumer, against an external NATS (ENGRAM_NATS_URL).
package main

import (
	"os"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
)

func main() {
	os.Exit(app.Serve("consolidator", app.RoleConsolidator, os.Args[1:], app.WorkerDefaults(config.Default(), "")))
}
