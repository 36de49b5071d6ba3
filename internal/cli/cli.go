// Package cli is the engram command: `engram serve` and the operator
// commands. It parses arguments and prints; the work is done by app and
// the packages it composes. Main takes its output streams so tests can run
// commands in-process.
package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
)

const usage = `engram — long-term memory for LLM agents

Usage:
  engram serve   [flags]                  run engram: embedded NATS + JetStream, every worker, HTTP API
  engram rebuild [--replace] [--partition K]  rebuild the read model (or a retriever's copy of partition K) from the stream, verify it equals the live one
  engram search  [flags] QUERY            search a user's memory through a running engram
  engram memories --user U [--as-of T] [--history ID]  a user's memories, what was current then, a memory's history
  engram dlq     ls|show|redrive|rm       read, redrive and erase dead letters (events a worker gave up on)
  engram forget  --user U [--namespace N] erase a user: stream, dead letters, read model, cards
  engram stats   [--namespace N] [--user U] [--json]  what the read model and the streams hold
  engram delete  MEMORY_ID --user U [--namespace N]  delete one memory (memory.deleted)
  engram replay  --consumer C --from SEQ|TIME  make one worker see the stream again from a point
  engram reextract --since T [--until T] [--namespace N] [--user U]  extract a period again with the model configured now
  engram export  [--namespace N] [--user U] [--out FILE]  the stream's events as CloudEvents JSON Lines
  engram import  FILE                     publish an export to this engram's stream
  engram rules   validate|test|run        check rule files, try them on an event, run a scheduled job now
  engram mcp     [flags]                  MCP on stdin/stdout, for Claude Desktop, Cursor and other MCP hosts
  engram migrate myclaw|openakita DIR --user U  import another memory system's files
  engram creds   [agent NS]               the bus's users (operator, each worker kind, agents) and how to use them
  engram streams status|apply|accept      the streams themselves: set them up, put engram's configuration back, accept a change
  engram health  [--ready]                exit 0 when the running engram is live (ready): the image's healthcheck
  engram version                          the version and the commit it was built from

Run 'engram COMMAND -h' for a command's flags. Every flag has an ENGRAM_* variable.
`

// Main runs the engram command and returns its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return app.Serve("engram", app.RoleAll, args[1:], config.Default())
	case "rebuild":
		return rebuild(args[1:], stdout, stderr)
	case "search":
		return search(args[1:], stdout, stderr)
	case "memories":
		return memories(args[1:], stdout, stderr)
	case "dlq":
		return dlq(args[1:], stdout, stderr)
	case "forget":
		return forget(args[1:], stdout, stderr)
	case "stats":
		return stats(args[1:], stdout, stderr)
	case "delete":
		return deleteMemory(args[1:], stdout, stderr)
	case "replay":
		return replay(args[1:], stdout, stderr)
	case "reextract":
		return reextract(args[1:], stdout, stderr)
	case "export":
		return exportCmd(args[1:], stdout, stderr)
	case "import":
		return importCmd(args[1:], stdout, stderr)
	case "mcp":
		return mcpCommand(args[1:], stdout, stderr)
	case "creds":
		return creds(args[1:], stdout, stderr)
	case "streams":
		return streamsCmd(args[1:], stdout, stderr)
	case "health":
		return health(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "engram", app.CurrentBuild())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		if code, ok := consolidationCommand(args[0], args[1:], stdout, stderr); ok {
			return code
		}
		fmt.Fprintf(stderr, "engram: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

func rebuild(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram rebuild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f app.Flags
	f.Register(fs)
	out := fs.String("out", "", "where to write the rebuilt read model (default <data-dir>/engram.db.rebuild)")
	replace := fs.Bool("replace", false, "swap the rebuilt read model in when it equals the live one (server stopped)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	partition := fs.Int("partition", -1, "rebuild a partitioned retriever's copy of this partition of the users (0..ENGRAM_PARTITIONS-1) "+
		"from its events alone, and compare it with the copy in the data dir")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram rebuild: %v\n", err)
		return 2
	}
	cfg.Log.Level = "warn"
	log, err := app.NewLogger(cfg.Log, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "engram rebuild: %v\n", err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	opts := app.RebuildOptions{Out: *out, Replace: *replace}
	if *partition >= 0 {
		opts.Partition = partition
	}
	if !*quiet {
		opts.Progress = stderr
	}
	rep, err := app.Rebuild(ctx, cfg, opts, log)
	if err != nil {
		fmt.Fprintf(stderr, "engram rebuild: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "rebuilt %s to stream seq %d: %d events read, %d skipped (dead-lettered live), in %s\n",
		rep.Out, rep.Target, rep.Read, rep.Skipped, rep.Took.Round(time.Millisecond))
	tables := make([]string, 0, len(rep.Built))
	for t := range rep.Built {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		mark := ""
		if rep.HadLive && rep.Live[t] != rep.Built[t] {
			mark = "   DIFFERS from live " + rep.Live[t]
		}
		fmt.Fprintf(stdout, "  %-10s %s%s\n", t, rep.Built[t], mark)
	}
	switch {
	case rep.LiveErr != "" && rep.Out == cfg.ReadModelPath():
		fmt.Fprintf(stdout, "the live read model could not be read (%s); replaced by the rebuilt one\n", rep.LiveErr)
	case rep.LiveErr != "":
		fmt.Fprintf(stdout, "the live read model could not be read (%s); run with --replace to swap the rebuilt one in\n", rep.LiveErr)
		return 1
	case !rep.HadLive:
		fmt.Fprintln(stdout, "no live read model to compare with")
	case len(rep.Diff) > 0:
		fmt.Fprintf(stdout, "MISMATCH: %s differ from the live read model\n", strings.Join(rep.Diff, ", "))
		return 1
	default:
		fmt.Fprintln(stdout, "OK: rebuilt read model equals the live one")
	}
	return 0
}

func search(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("ENGRAM_HTTP_ADDR", "127.0.0.1:7420"), "engram HTTP address (env ENGRAM_HTTP_ADDR)")
	ns := fs.String("namespace", "default", "namespace")
	user := fs.String("user", "", "user (required)")
	limit := fs.Int("limit", 10, "results")
	token := fs.String("token", os.Getenv("ENGRAM_TOKEN"), "bearer token (env ENGRAM_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *user == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: engram search -user USER [-namespace NS] QUERY")
		return 2
	}
	q := url.Values{"namespace": {*ns}, "user": {*user}, "q": {strings.Join(fs.Args(), " ")}, "limit": {fmt.Sprint(*limit)}}
	req, _ := http.NewRequest(http.MethodGet, "http://"+*addr+"/v1/search?"+q.Encode(), nil)
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "engram search: %v (is engram serve running?)\n", err)
		return 1
	}
	defer quiet.Close(resp.Body)
	var body struct {
		Results []struct {
			ID, Kind, Content, SessionID string
			Score                        float64
			Time                         time.Time
		} `json:"results"`
		Error *struct{ Code, Message string } `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		fmt.Fprintf(stderr, "engram search: bad response: %v\n", err)
		return 1
	}
	if body.Error != nil {
		fmt.Fprintf(stderr, "engram search: %s: %s\n", body.Error.Code, body.Error.Message)
		return 1
	}
	if len(body.Results) == 0 {
		// Silence reads as a hang or a broken pipe; say what was searched.
		fmt.Fprintf(stderr, "no results for %q (namespace %s, user %s)\n", q.Get("q"), *ns, *user)
		return 0
	}
	for _, r := range body.Results {
		fmt.Fprintf(stdout, "%-10s %6.2f  %s  %s\n", r.ID, r.Score, r.Time.Format("2006-01-02 15:04"), chars.ClipHead(chars.OneLine(r.Content), 100))
	}
	return 0
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
