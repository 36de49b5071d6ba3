package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
)

const replayUsage = `Usage:
  engram replay --consumer C --from SEQ|TIME

Makes one worker (batcher, extractor, consolidator, embedder) see MEMORY
again from a stream sequence or a time (RFC 3339, a date, or a duration
back from now such as 24h): its durable consumer is recreated starting
there, and the worker picks up from there when engram next starts. Workers
publish their conclusions under deterministic ids, so what they concluded
before is not stored twice. Read models are not replayed: engram rebuild.

engram must be stopped (on this data dir; with --nats-url, stop the
worker): a consumer a worker is consuming is refused and left as it was.
A replayed extractor does not ask the model again about a request whose
extraction is already in the stream (engram reextract does, on purpose).
`

func replay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, replayUsage); fs.PrintDefaults() }
	var f app.Flags
	f.Register(fs)
	consumer := fs.String("consumer", "", "the worker's durable consumer (required)")
	from := fs.String("from", "", "a stream sequence or a time (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *consumer == "" || *from == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if strings.HasPrefix(*consumer, "projector-") {
		fmt.Fprintf(stderr, "engram replay: %s keeps a read model: rebuild it (engram rebuild --replace) instead\n", *consumer)
		return 2
	}
	var seq uint64
	var at time.Time
	if n, err := strconv.ParseUint(*from, 10, 64); err == nil && n > 0 {
		seq = n
	} else if at, err = parseWhen(*from, time.Now().UTC()); err != nil {
		fmt.Fprintf(stderr, "engram replay: --from: %v, nor a stream sequence\n", err)
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram replay: %v\n", err)
		return 2
	}
	if cfg.NATS.URL == "" {
		// The worker must not be running: its consumer is recreated.
		unlock, err := app.LockDataDir(cfg.DataDir)
		if err != nil {
			fmt.Fprintf(stderr, "engram replay: %v\n", err)
			return 1
		}
		unlock()
	}
	ctx, stop := signalContext()
	defer stop()
	js, closeFn, err := openStream(ctx, cfg, stderr, app.OpenOperator)
	if err != nil {
		fmt.Fprintf(stderr, "engram replay: %v\n", err)
		return 1
	}
	defer closeFn()
	if err := app.Replay(ctx, js, *consumer, seq, at); err != nil {
		fmt.Fprintf(stderr, "engram replay: %v\n", err)
		return 1
	}
	if seq > 0 {
		fmt.Fprintf(stdout, "%s will see MEMORY again from seq %d when engram starts\n", *consumer, seq)
	} else {
		fmt.Fprintf(stdout, "%s will see MEMORY again from %s when engram starts\n", *consumer, at.Format(time.RFC3339))
	}
	return 0
}
