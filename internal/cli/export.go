package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"go.uber.org/zap"
)

const exportUsage = `Usage:
  engram export [--namespace N [--user U]] [--out FILE]
  engram import FILE

export writes the MEMORY stream's events, all of them or one namespace's or
one user's, as CloudEvents JSON Lines in stream order: what agents sent and
every conclusion engram drew (extractions, memories, episodes, vectors).
import publishes such a file to the stream of another (or the same)
engram; events keep their ids, so running it twice stores nothing twice,
and the read model it builds equals the exported one.

Both work with engram stopped (they open the data dir) or running (through
its NATS listener, or --nats-url).
`

func exportCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, exportUsage); fs.PrintDefaults() }
	var f app.Flags
	f.Register(fs)
	ns := fs.String("namespace", "", "only this namespace")
	user := fs.String("user", "", "only this user (of --namespace, default \"default\")")
	out := fs.String("out", "", "write to this file instead of standard output")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *user != "" && *ns == "" {
		*ns = "default"
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram export: %v\n", err)
		return 2
	}
	w := stdout
	var file *os.File
	if *out != "" {
		file, err = os.Create(*out)
		if err != nil {
			fmt.Fprintf(stderr, "engram export: %v\n", err)
			return 1
		}
		defer quiet.Close(file) // a second Close, or on a failing path; success closes it below
		w = file
	}
	ctx, stop := signalContext()
	defer stop()
	js, closeFn, err := openStream(ctx, cfg, stderr, app.OpenOperator)
	if err != nil {
		fmt.Fprintf(stderr, "engram export: %v\n", err)
		return 1
	}
	defer closeFn()
	rep, err := app.Export(ctx, js, w, app.ExportFilter{Namespace: *ns, User: *user}, cfg.HTTP.MaxEventBytes)
	if err == nil && file != nil {
		err = file.Close() // the export is on disk only if this says so
	}
	if err != nil {
		fmt.Fprintf(stderr, "engram export: %v\n", err)
		return 1
	}
	b, _ := json.Marshal(rep)
	fmt.Fprintf(stderr, "engram export: %s\n", b)
	return 0
}

func importCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, exportUsage); fs.PrintDefaults() }
	var f app.Flags
	f.Register(fs)
	pos, err := parseAnyOrder(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram import: %v\n", err)
		return 2
	}
	file, err := os.Open(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "engram import: %v\n", err)
		return 1
	}
	defer quiet.Close(file) // only read
	ctx, stop := signalContext()
	defer stop()
	js, closeFn, err := openStream(ctx, cfg, stderr, app.OpenOperatorCreate)
	if err != nil {
		fmt.Fprintf(stderr, "engram import: %v\n", err)
		return 1
	}
	defer closeFn()
	rep, err := app.Import(ctx, js, file, cfg.HTTP.MaxEventBytes)
	if err != nil {
		fmt.Fprintf(stderr, "engram import: %v\n", err)
		return 1
	}
	b, _ := json.Marshal(rep)
	fmt.Fprintln(stdout, string(b))
	return 0
}

// openStream opens JetStream for an operator command, logging warnings
// only.
func openStream[JS any](ctx context.Context, cfg config.Config, stderr io.Writer,
	open func(context.Context, config.Config, *zap.Logger) (JS, func(), error)) (js JS, closeFn func(), err error) {
	cfg.Log.Level = "warn"
	log, err := app.NewLogger(cfg.Log, stderr)
	if err != nil {
		return js, nil, err
	}
	return open(ctx, cfg, log)
}
