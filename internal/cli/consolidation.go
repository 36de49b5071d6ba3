package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/migrate"
	"github.com/engramhq/engram/internal/rules"
)

const rulesUsage = `Usage:
  engram rules validate PATH...            check rule files (a file or a directory of *.yaml)
  engram rules test PATH --event FILE      which rules an event (a CloudEvent, JSON) fires, and what they do
  engram rules test PATH                   the scheduled rules, their next times and what they do
  engram rules run JOB [--at TIME]         run a job now on a running engram: a scheduled rule's name,
                                           or a rule file's ("daily", "weekly")

validate prints every problem as file:line:col: message and exits 1 if
there is any. run reaches engram over NATS (--nats-url, or the embedded
server's --nats-listen address).
`

const migrateUsage = `Usage:
  engram migrate myclaw DIR    --user USER [--namespace NS] [--quiet]
  engram migrate openakita DIR --user USER [--namespace NS] [--quiet]

myclaw: DIR/MEMORY.md into the core profile, DIR/memory/YYYY-MM-DD.md into
daily summaries. openakita: memories.json into memories,
conversation_history/*.jsonl into turns. Everything is published as events,
so every worker sees it; a second run publishes nothing new. With engram
stopped it opens the data dir itself (--data-dir); while engram runs, point
--nats-url at its NATS.
`

// consolidationCommand runs `engram rules …` and `engram migrate …`; ok
// is false for any other command.
func consolidationCommand(cmd string, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	switch cmd {
	case "rules":
		return rulesCommand(args, stdout, stderr), true
	case "migrate":
		return migrateCommand(args, stdout, stderr), true
	}
	return 0, false
}

// parseAnyOrder reads flags and positional arguments in any order.
func parseAnyOrder(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if args = fs.Args(); len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

func rulesCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, rulesUsage)
		return 2
	}
	switch args[0] {
	case "validate":
		return rulesValidate(args[1:], stdout, stderr)
	case "test":
		return rulesTest(args[1:], stdout, stderr)
	case "run":
		return rulesRun(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, rulesUsage)
		return 0
	}
	fmt.Fprintf(stderr, "engram rules: unknown command %q\n\n%s", args[0], rulesUsage)
	return 2
}

func rulesValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram rules validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	paths, err := parseAnyOrder(fs, args)
	if err != nil {
		return 2
	}
	if len(paths) == 0 {
		fmt.Fprint(stderr, rulesUsage)
		return 2
	}
	failed := false
	for _, p := range paths {
		set, err := rules.Load(p, events.Types())
		if err != nil {
			failed = true
			printRuleErrors(stderr, err)
			continue
		}
		fmt.Fprintf(stdout, "%s: ok, %d rules in %d files\n", p, len(set.Rules), len(set.Files))
	}
	if failed {
		return 1
	}
	return 0
}

// printRuleErrors prints one problem a line, file:line:col first.
func printRuleErrors(w io.Writer, err error) {
	var es rules.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			fmt.Fprintln(w, e.Error())
		}
		fmt.Fprintf(w, "%d problem(s)\n", len(es))
		return
	}
	fmt.Fprintln(w, err)
}

func rulesTest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram rules test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	eventFile := fs.String("event", "", "a CloudEvent in JSON (structured mode) to run the rules against")
	pos, err := parseAnyOrder(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, rulesUsage)
		return 2
	}
	set, err := rules.Load(pos[0], events.Types())
	if err != nil {
		printRuleErrors(stderr, err)
		return 1
	}
	if *eventFile == "" {
		printSchedule(stdout, set, time.Now())
		return 0
	}
	raw, err := os.ReadFile(*eventFile)
	if err != nil {
		fmt.Fprintf(stderr, "engram rules test: %v\n", err)
		return 1
	}
	ev, err := rules.ParseEvent(raw)
	if err != nil {
		fmt.Fprintf(stderr, "engram rules test: %s: %v\n", *eventFile, err)
		return 1
	}
	if _, err := events.DecodeData(ev.Type(), dataOf(raw)); err != nil {
		// Rules still run on it, but engram's ingest would refuse it.
		fmt.Fprintf(stdout, "note: engram would refuse this event: %v\n\n", err)
	}
	fired := 0
	for _, x := range set.Explain(ev) {
		fmt.Fprint(stdout, x.String())
		if x.Fired {
			fired++
		}
	}
	fmt.Fprintf(stdout, "\n%d of %d rules fire on %s\n", fired, len(set.Rules), ev.Type())
	return 0
}

// dataOf is the raw data member of a structured-mode event.
func dataOf(raw []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	return m["data"]
}

// printSchedule lists each scheduled rule, its next three times and its
// actions.
func printSchedule(w io.Writer, set *rules.Set, now time.Time) {
	n := 0
	for _, r := range set.Rules {
		if r.Schedule == nil {
			continue
		}
		n++
		state := ""
		if !r.Enabled {
			state = " (disabled)"
		}
		fmt.Fprintf(w, "%s (%s): %s%s\n", r.Name, r.Pos(), r.Schedule, state)
		if r.Enabled {
			var next []string
			for at, i := now, 0; i < 3; i++ {
				if at = r.Schedule.Next(at); at.IsZero() {
					break
				}
				next = append(next, at.Format("Mon 2006-01-02 15:04 MST"))
			}
			fmt.Fprintf(w, "    next: %s\n", strings.Join(next, ", "))
		}
		for _, a := range r.Do {
			fmt.Fprintf(w, "    do %s\n", a)
		}
	}
	fmt.Fprintf(w, "\n%d scheduled of %d rules; give --event FILE to test the others\n", n, len(set.Rules))
}

func rulesRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram rules run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f app.Flags
	f.Register(fs)
	at := fs.String("at", "", "run as if the schedule fell due at this RFC 3339 time (default now)")
	pos, err := parseAnyOrder(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, rulesUsage)
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram rules run: %v\n", err)
		return 2
	}
	req := app.JobRequest{Job: pos[0]}
	if *at != "" {
		if req.At, err = time.Parse(time.RFC3339, *at); err != nil {
			fmt.Fprintf(stderr, "engram rules run: --at %q is not an RFC 3339 time\n", *at)
			return 2
		}
	}
	ctx, stop := signalContext()
	defer stop()
	reply, err := app.RequestJob(ctx, cfg, req)
	if err != nil {
		fmt.Fprintf(stderr, "engram rules run: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "ran %s\n", strings.Join(reply.Ran, ", "))
	if len(reply.Published) == 0 {
		fmt.Fprintln(stdout, "published nothing: nothing was due")
		return 0
	}
	types := slices.Sorted(maps.Keys(reply.Published))
	fmt.Fprintln(stdout, "published:")
	for _, t := range types {
		fmt.Fprintf(stdout, "  %6d %s\n", reply.Published[t], t)
	}
	return 0
}

func migrateCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, migrateUsage)
		return 2
	}
	system := args[0]
	if system != app.SystemMyclaw && system != app.SystemOpenAkita {
		fmt.Fprintf(stderr, "engram migrate: unknown system %q\n\n%s", system, migrateUsage)
		return 2
	}
	fs := flag.NewFlagSet("engram migrate "+system, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f app.Flags
	f.Register(fs)
	user := fs.String("user", "", "the engram user the memories belong to (required)")
	ns := fs.String("namespace", events.DefaultNamespace, "the engram namespace")
	quiet := fs.Bool("quiet", false, "no progress bar")
	pos, err := parseAnyOrder(fs, args[1:])
	if err != nil {
		return 2
	}
	if len(pos) != 1 || *user == "" {
		fmt.Fprint(stderr, migrateUsage)
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram migrate: %v\n", err)
		return 2
	}
	cfg.Log.Level = "warn"
	log, err := app.NewLogger(cfg.Log, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "engram migrate: %v\n", err)
		return 2
	}
	opts := app.MigrateOptions{System: system, Dir: pos[0], Options: migrate.Options{Namespace: *ns, User: *user}}
	if !*quiet {
		opts.Progress = stderr
	}
	ctx, stop := signalContext()
	defer stop()
	rep, err := app.Migrate(ctx, cfg, opts, log)
	if rep != nil {
		fmt.Fprintf(stdout, "migrated %s from %s: %d files, %d events (%d new, %d already there), %d records skipped, in %s\n",
			system, pos[0], rep.Files, rep.Events, rep.Published, rep.Duplicates, rep.Skipped, rep.Took.Round(time.Millisecond))
		for _, p := range rep.Problems {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "engram migrate: %v\n", err)
		return 1
	}
	return 0
}
