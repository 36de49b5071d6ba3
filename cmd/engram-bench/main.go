// Command engram-bench prints the figures docs/benchmarks.md reports; `make bench`
// runs it.
package main

import (
	"os"

	"github.com/engramhq/engram/internal/bench"
)

func main() { os.Exit(bench.Main(os.Args[1:], os.Stdout)) }
