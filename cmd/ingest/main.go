// Command ingest is engram's edge as a separate worker: it accepts
// CloudEvents over HTTP, validates them and publishes them to an external
// NATS JetStream (ENGRAM_NATS_URL). Scale it horizontally behind a load
// balancer; it keeps no state.
package main

import (
	"os"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
)

func main() {
	os.Exit(app.Serve("ingest", app.RoleIngest, os.Args[1:], app.WorkerDefaults(config.Default(), "127.0.0.1:7420")))
}
