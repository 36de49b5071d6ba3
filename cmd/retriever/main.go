// Command retriever keeps its own read model (a projector on its own
// durable consumer, named by ENGRAM_INSTANCE) and serves queries over HTTP
// and NATS request-reply, against an external NATS (ENGRAM_NATS_URL). It
// serves the write API too (memories, pending decisions, the scratchpad,
// which read before they publish) and the consolidator's confirm queue,
// asked over NATS.
package main

import (
	"os"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
)

func main() {
	os.Exit(app.Serve("retriever", app.RoleRetriever, os.Args[1:], app.WorkerDefaults(config.Default(), "127.0.0.1:7421")))
}
