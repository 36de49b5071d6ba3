package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
)

const streamsUsage = `Usage:
  engram streams status    how MEMORY and DEADLETTER differ from engram's configuration, MEMORY's first sequence
  engram streams apply     create the streams and buckets, and set back what engram sets (as the operator)
  engram streams accept    take MEMORY as it is now: what read models follow, and the loss below its first sequence

No worker may create or change a stream; these are the operator's. On an
external NATS run "apply" once before the workers start, and again after
changing replicas or the duplicate window (ENGRAM_NATS_REPLICAS, …).

When the stream changed under engram (a limit, a purge, a stream deleted
and made again), engram reports it (log, /healthz, engram_stream_drift)
and keeps its read model. Then: "apply" puts engram's configuration back,
which stops further loss; "accept" records the stream as it is, so read
models built from another MEMORY start over from this one, and events a
read model holds that are gone from the stream stop being reported.

With the embedded server, stop engram first (or give it --nats-listen and
run these beside it).
`

func streamsCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram streams", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, streamsUsage); fs.PrintDefaults() }
	var f app.Flags
	f.Register(fs)
	pos, err := parseAnyOrder(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 || pos[0] != "status" && pos[0] != "apply" && pos[0] != "accept" {
		fs.Usage()
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram streams: %v\n", err)
		return 2
	}
	cfg.Log.Level = "warn"
	log, err := app.NewLogger(cfg.Log, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "engram streams: %v\n", err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	switch pos[0] {
	case "apply":
		reps, err := app.ApplyStreams(ctx, cfg, log)
		if err != nil {
			fmt.Fprintf(stderr, "engram streams apply: %v\n", err)
			return 1
		}
		for _, r := range reps {
			switch {
			case r.Created:
				fmt.Fprintf(stdout, "%s: created\n", r.Name)
			case len(r.Changed) > 0:
				fmt.Fprintf(stdout, "%s: set back %v\n", r.Name, r.Changed)
			default:
				fmt.Fprintf(stdout, "%s: as engram sets it\n", r.Name)
			}
		}
		fmt.Fprintln(stdout, "buckets: engram-partitions, engram-confirm, engram-schedule set up")
	case "accept":
		acc, err := app.AcceptStreams(ctx, cfg, log)
		if err != nil {
			fmt.Fprintf(stderr, "engram streams accept: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "MEMORY created %s, first sequence %d, accepted: read models built from another MEMORY "+
			"start over from this one; events below sequence %d are no longer reported missing\n", acc.Origin, acc.FirstSeq, acc.FirstSeq)
	case "status":
		st, err := app.StreamsStatusOf(ctx, cfg, log)
		if err != nil {
			fmt.Fprintf(stderr, "engram streams status: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "MEMORY created %s, sequences %d–%d\n", st.Origin, st.FirstSeq, st.LastSeq)
		if st.Accepted.Origin != "" {
			fmt.Fprintf(stdout, "accepted: MEMORY created %s, from sequence %d\n", st.Accepted.Origin, st.Accepted.FirstSeq)
		}
		drift := false
		for _, d := range st.Differences {
			kind := "setting"
			if d.Loses {
				kind, drift = "DRIFT", true
			}
			fmt.Fprintf(stdout, "%-7s %s\n", kind, d)
		}
		if len(st.Differences) == 0 {
			fmt.Fprintln(stdout, "the streams are as engram sets them up")
		}
		if drift {
			return 1
		}
	}
	return 0
}
