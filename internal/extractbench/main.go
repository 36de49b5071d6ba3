package extractbench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llmextract"
)

// Splits are the files Main reads from its directory, in the order it
// reports them.
var Splits = []string{"dev", "test"}

// Main scores the rule extractor, and the LLM path when
// ENGRAM_LLM_BASE_URL (with ENGRAM_LLM_MODEL, optionally
// ENGRAM_LLM_API_KEY) is set, on each split, and prints the tables docs/benchmarks.md
// reports. -misses prints the dev split's disagreements, to tune on; the
// test split's are never printed.
func Main(args []string, out io.Writer) int {
	fs := flag.NewFlagSet("bench-extract", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("dir", "testdata/extract", "directory holding dev.jsonl and test.jsonl")
	misses := fs.Bool("misses", false, "print the dev split's misses and extra candidates")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx := context.Background()
	type run struct {
		name string
		x    Extractor
	}
	runs := []run{{"rules", Rules}}
	if base := os.Getenv("ENGRAM_LLM_BASE_URL"); base != "" {
		client, err := llm.New(llm.Config{BaseURL: base, Model: os.Getenv("ENGRAM_LLM_MODEL"),
			APIKey: os.Getenv("ENGRAM_LLM_API_KEY"), Timeout: 120 * time.Second, Temperature: llm.DefaultTemperature}, &http.Client{})
		if err != nil {
			fmt.Fprintf(out, "llm: %v\n", err)
			return 1
		}
		runs = append(runs, run{"llm " + client.Model(), LLM(&llmextract.Extractor{Client: client})})
	}
	for _, r := range runs {
		for _, split := range Splits {
			turns, err := Load(filepath.Join(*dir, split+".jsonl"))
			if err != nil {
				fmt.Fprintf(out, "load %s: %v\n", split, err)
				return 1
			}
			rep, err := Score(ctx, turns, r.x)
			if err != nil {
				fmt.Fprintf(out, "%s on %s: %v\n", r.name, split, err)
				return 1
			}
			rep.Write(out, fmt.Sprintf("extraction, %s, %s split (%d turns):", r.name, split, len(turns)))
			if *misses && split == "dev" {
				rep.WriteMisses(out)
			}
		}
	}
	return 0
}
