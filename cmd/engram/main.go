// Command engram is the single binary: `engram serve` runs an embedded NATS
// server with JetStream and every worker in one process; the other
// subcommands are for operators. See README.md and docs/cli.md.
package main

import (
	"os"

	"github.com/engramhq/engram/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
