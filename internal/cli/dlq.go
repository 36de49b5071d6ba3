package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

const dlqUsage = `Usage:
  engram dlq ls      [--consumer C] [--subject S] [--limit N] [--json]
  engram dlq show    SEQ...
  engram dlq redrive SEQ... | --all [--consumer C] [--subject S]
  engram dlq rm      SEQ... | --all [--consumer C] [--subject S]

Dead letters are events a worker gave up on, kept in the DEADLETTER stream
with the reason. ls lists them oldest first (--json: one object a line);
show prints one with every header and its body; redrive puts the event back
on MEMORY at its original subject, for the worker that gave up on it only
(read models apply it again as a no-op), and removes the dead letter; rm
erases dead letters without redriving them (their bytes overwritten in the
store). --subject filters on the original subject and takes NATS wildcards
(mem.default.ann.>, mem.*.*.turn.recorded).

With engram stopped, dlq opens the data dir itself (--data-dir); redriven
events are processed when engram next starts. While engram runs on the
data dir, dlq talks to it through its NATS listener (--nats-listen); with
an external NATS, give --nats-url (ENGRAM_NATS_URL).
Every command also takes engram's common flags (--data-dir, --nats-url, --config).
`

func dlq(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, dlqUsage)
		return 2
	}
	switch args[0] {
	case "ls", "list":
		return dlqList(args[1:], stdout, stderr)
	case "show":
		return dlqShow(args[1:], stdout, stderr)
	case "redrive":
		return dlqRedrive(args[1:], stdout, stderr)
	case "rm", "remove":
		return dlqRemove(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, dlqUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "engram dlq: unknown command %q\n\n%s", args[0], dlqUsage)
		return 2
	}
}

// dlqCommand is what every dlq command shares: engram's flags, the config
// they build, a logger and a context that ends on SIGINT.
type dlqCommand struct {
	name   string
	fs     *flag.FlagSet
	flags  app.Flags
	stderr io.Writer
}

func newDLQCommand(name string, stderr io.Writer) *dlqCommand {
	c := &dlqCommand{name: "engram dlq " + name, stderr: stderr}
	c.fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.fs.SetOutput(stderr)
	c.fs.Usage = func() {
		fmt.Fprint(stderr, dlqUsage+"\nFlags:\n")
		c.fs.PrintDefaults()
	}
	c.flags.Register(c.fs)
	return c
}

// parse reads flags and positional arguments in any order, so that
// `engram dlq show 12 --data-dir d` works as well as the other way round.
func (c *dlqCommand) parse(args []string) (cfg config.Config, pos []string, log *zap.Logger, ok bool) {
	pos, err := parseAnyOrder(c.fs, args)
	if err != nil {
		return cfg, nil, nil, false
	}
	cfg, err = c.flags.Load(c.fs, config.Default())
	if err != nil {
		c.fail(err)
		return cfg, nil, nil, false
	}
	cfg.Log.Level = "warn"
	if log, err = app.NewLogger(cfg.Log, c.stderr); err != nil {
		c.fail(err)
		return cfg, nil, nil, false
	}
	return cfg, pos, log, true
}

func (c *dlqCommand) fail(err error) { fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err) }

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// dlqRow is a dead letter as ls shows it.
type dlqRow struct {
	Seq         uint64    `json:"seq"`
	Time        time.Time `json:"time"`
	Consumer    string    `json:"consumer"`
	Subject     string    `json:"subject"`
	EventType   string    `json:"event_type"`
	EventID     string    `json:"event_id"`
	Reason      string    `json:"reason"`
	OriginalSeq uint64    `json:"original_seq"`
	Deliveries  int       `json:"deliveries"`
	Size        int       `json:"size"`
}

func dlqList(args []string, stdout, stderr io.Writer) int {
	c := newDLQCommand("ls", stderr)
	consumer := c.fs.String("consumer", "", "only this consumer's dead letters")
	subject := c.fs.String("subject", "", "only these original subjects (NATS wildcards)")
	limit := c.fs.Int("limit", 0, "show at most N, oldest first (0 = all)")
	asJSON := c.fs.Bool("json", false, "one JSON object a line")
	cfg, pos, log, ok := c.parse(args)
	if !ok {
		return 2
	}
	if len(pos) > 0 {
		c.fail(fmt.Errorf("unexpected argument %q", pos[0]))
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	js, closeNATS, err := app.OpenOperator(ctx, cfg, log)
	if err != nil {
		c.fail(err)
		return 1
	}
	defer closeNATS()

	var rows []dlqRow
	enc := json.NewEncoder(stdout)
	err = stream.EachDeadLetter(ctx, js, stream.DLQFilter{Consumer: *consumer, Subject: *subject, Limit: *limit},
		func(d stream.DeadLetter) error {
			r := dlqRow{Seq: d.Seq, Time: d.Time.UTC(), Consumer: d.Consumer, Subject: d.Subject,
				EventType: d.EventType, EventID: d.EventID, Reason: d.Reason,
				OriginalSeq: d.OriginalSeq, Deliveries: d.Deliveries, Size: d.Size}
			if *asJSON {
				// Streamed: a long list is not held in memory.
				return enc.Encode(r)
			}
			rows = append(rows, r)
			return nil
		})
	if err != nil {
		c.fail(err)
		return 1
	}
	if !*asJSON {
		printDLQTable(stdout, rows, termWidth())
	}
	return 0
}

// printDLQTable lays rows out in columns that fit width, giving what is
// left to the reason, which is cut to fit.
func printDLQTable(w io.Writer, rows []dlqRow, width int) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no dead letters")
		return
	}
	head := []string{"SEQ", "TIME", "CONSUMER", "TYPE", "EVENT ID"}
	caps := []int{20, 20, 28, 28, 36}
	cells := make([][]string, len(rows))
	widths := make([]int, len(head))
	for i, h := range head {
		widths[i] = len(h)
	}
	for i, r := range rows {
		cells[i] = []string{strconv.FormatUint(r.Seq, 10), r.Time.Format(time.DateTime), r.Consumer, r.EventType, r.EventID}
		for j, s := range cells[i] {
			cells[i][j] = chars.ClipHead(chars.OneLine(s), caps[j])
			widths[j] = max(widths[j], utf8.RuneCountInString(cells[i][j]))
		}
	}
	used := 0
	for _, n := range widths {
		used += n + 2
	}
	reasonWidth := max(width-used, 20)
	line := func(cols []string, reason string) {
		var b strings.Builder
		for j, s := range cols {
			b.WriteString(s)
			b.WriteString(strings.Repeat(" ", widths[j]-utf8.RuneCountInString(s)+2))
		}
		b.WriteString(chars.ClipHead(chars.OneLine(reason), reasonWidth))
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(head, "REASON")
	for i, r := range rows {
		line(cells[i], r.Reason)
	}
}

// termWidth is the terminal's width as the shell exports it, or a width
// that suits most terminals and logs.
func termWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 40 {
		return n
	}
	return 120
}

func dlqShow(args []string, stdout, stderr io.Writer) int {
	c := newDLQCommand("show", stderr)
	cfg, pos, log, ok := c.parse(args)
	if !ok {
		return 2
	}
	seqs, err := parseSeqs(pos)
	if err != nil || len(seqs) == 0 {
		c.fail(errors.Join(err, errors.New("usage: engram dlq show SEQ [SEQ ...]")))
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	js, closeNATS, err := app.OpenOperator(ctx, cfg, log)
	if err != nil {
		c.fail(err)
		return 1
	}
	defer closeNATS()
	code := 0
	for i, seq := range seqs {
		d, err := stream.GetDeadLetter(ctx, js, seq)
		if err != nil {
			c.fail(err)
			code = 1
			continue
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printDeadLetter(stdout, d)
	}
	return code
}

func printDeadLetter(w io.Writer, d *stream.DeadLetter) {
	field := func(name, value string) { fmt.Fprintf(w, "%-12s %s\n", name, value) }
	field("seq", strconv.FormatUint(d.Seq, 10))
	field("time", d.Time.UTC().Format(time.RFC3339Nano))
	field("consumer", d.Consumer)
	field("subject", d.Subject)
	field("original", fmt.Sprintf("MEMORY seq %d, %d deliveries", d.OriginalSeq, d.Deliveries))
	field("event", strings.TrimSpace(d.EventType+" "+d.EventID))
	field("reason", d.Reason)
	field("size", fmt.Sprintf("%d bytes", d.Size))
	fmt.Fprintln(w, "\nheaders:")
	keys := make([]string, 0, len(d.Header))
	for k := range d.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range d.Header[k] {
			fmt.Fprintf(w, "  %s: %s\n", k, v)
		}
	}
	fmt.Fprintln(w, "\nbody:")
	var pretty bytes.Buffer
	switch {
	case len(d.Data) == 0:
		fmt.Fprintln(w, "  (empty)")
	case json.Indent(&pretty, d.Data, "", "  ") == nil:
		fmt.Fprintln(w, pretty.String())
	case utf8.Valid(d.Data):
		fmt.Fprintln(w, string(d.Data))
	default:
		fmt.Fprint(w, hex.Dump(d.Data))
	}
}

func dlqRedrive(args []string, stdout, stderr io.Writer) int {
	return dlqEach("redrive", args, stdout, stderr)
}

func dlqRemove(args []string, stdout, stderr io.Writer) int {
	return dlqEach("rm", args, stdout, stderr)
}

// dlqEach redrives ("redrive") or removes ("rm") each dead letter named
// by seq or selected by --all.
func dlqEach(name string, args []string, stdout, stderr io.Writer) int {
	c := newDLQCommand(name, stderr)
	all := c.fs.Bool("all", false, name+" every dead letter (that --consumer and --subject select)")
	consumer := c.fs.String("consumer", "", "with --all: only this consumer's dead letters")
	subject := c.fs.String("subject", "", "with --all: only these original subjects (NATS wildcards)")
	cfg, pos, log, ok := c.parse(args)
	if !ok {
		return 2
	}
	seqs, err := parseSeqs(pos)
	switch {
	case err != nil:
		c.fail(err)
		return 2
	case *all == (len(seqs) > 0):
		c.fail(errors.New("give either dead-letter seqs or --all"))
		return 2
	case !*all && (*consumer != "" || *subject != ""):
		c.fail(errors.New("--consumer and --subject go with --all"))
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	js, closeNATS, err := app.OpenOperator(ctx, cfg, log)
	if err != nil {
		c.fail(err)
		return 1
	}
	defer closeNATS()

	done, failed := 0, 0
	redrive := func(seq uint64) {
		var line string
		var err error
		if name == "rm" {
			line, err = fmt.Sprintf("%d removed", seq), stream.RemoveDeadLetter(ctx, js, seq)
		} else {
			var memSeq uint64
			memSeq, err = stream.Redrive(ctx, js, seq)
			line = fmt.Sprintf("%d → %d", seq, memSeq)
		}
		if err != nil {
			c.fail(err)
			failed++
			return
		}
		done++
		fmt.Fprintln(stdout, line)
	}
	if *all {
		// The walk stops where DEADLETTER ended when it began, so an event
		// that fails again at once is not redriven round and round.
		err = stream.EachDeadLetter(ctx, js, stream.DLQFilter{Consumer: *consumer, Subject: *subject},
			func(d stream.DeadLetter) error {
				redrive(d.Seq)
				return ctx.Err()
			})
		if err != nil {
			c.fail(err)
			return 1
		}
		if done+failed == 0 {
			fmt.Fprintln(stderr, "no dead letters to "+name)
		}
	} else {
		for _, seq := range seqs {
			if ctx.Err() != nil {
				break
			}
			redrive(seq)
		}
	}
	if failed > 0 || ctx.Err() != nil {
		fmt.Fprintf(stderr, "%s: %d done, %d failed\n", c.name, done, failed)
		return 1
	}
	return 0
}

func parseSeqs(args []string) ([]uint64, error) {
	seqs := make([]uint64, 0, len(args))
	for _, a := range args {
		n, err := strconv.ParseUint(a, 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%q is not a dead-letter seq", a)
		}
		seqs = append(seqs, n)
	}
	return seqs, nil
}
