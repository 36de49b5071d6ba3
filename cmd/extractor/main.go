// Command extractor turns recorded turns into memories, on its own durable
// consumer, against an external NATS (ENGRAM_NATS_URL).
package main

import (
	"os"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
)

func main() {
	os.Exit(app.Serve("extractor", app.RoleExtractor, os.Args[1:], app.WorkerDefaults(config.Default(), "")))
}
