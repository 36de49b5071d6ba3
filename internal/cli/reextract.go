package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
)

const reextractUsage = `Usage:
  engram reextract --since T [--until T] [--namespace N [--user U]] [--generation G]

Asks for the turns of a period to be extracted again with the model
configured now (ENGRAM_LLM_*): one extraction request per session, under new
ids. The extractor answers them; the new memories merge with or supersede
the old ones, which stay in the history. A rebuild reads the recorded
results and never calls the model. T is an RFC 3339 time, a date
(2026-11-01) or a duration back from now (72h). --generation names the run
(default: now); running again with the same name publishes nothing twice.

With engram running, the requests are answered at once; stopped, when it
next starts.
`

func reextract(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram reextract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, reextractUsage); fs.PrintDefaults() }
	var f app.Flags
	f.Register(fs)
	since := fs.String("since", "", "start of the period (required)")
	until := fs.String("until", "", "end of the period (default: now)")
	ns := fs.String("namespace", "", "only this namespace")
	user := fs.String("user", "", "only this user (of --namespace, default \"default\")")
	gen := fs.String("generation", "", "the run's name in the requests' ids")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	now := time.Now().UTC()
	opt := app.ReextractOptions{Namespace: *ns, User: *user, Generation: *gen}
	var err error
	if opt.Since, err = parseWhen(*since, now); err != nil || *since == "" {
		fmt.Fprintf(stderr, "engram reextract: --since: %v\n", orRequired(err))
		return 2
	}
	if *until != "" {
		if opt.Until, err = parseWhen(*until, now); err != nil {
			fmt.Fprintf(stderr, "engram reextract: --until: %v\n", err)
			return 2
		}
	}
	if opt.User != "" && opt.Namespace == "" {
		opt.Namespace = "default"
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram reextract: %v\n", err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	js, closeFn, err := openStream(ctx, cfg, stderr, app.OpenOperator)
	if err != nil {
		fmt.Fprintf(stderr, "engram reextract: %v\n", err)
		return 1
	}
	defer closeFn()
	rep, err := app.Reextract(ctx, js, cfg.ReadModelPath(), opt)
	if err != nil {
		fmt.Fprintf(stderr, "engram reextract: %v\n", err)
		return 1
	}
	b, _ := json.Marshal(rep)
	fmt.Fprintln(stdout, string(b))
	return 0
}

// parseWhen reads an RFC 3339 time, a date, or a duration back from now.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time, a date (2026-11-01) or a duration (72h)", s)
}

func orRequired(err error) error {
	if err == nil {
		return fmt.Errorf("required")
	}
	return err
}
