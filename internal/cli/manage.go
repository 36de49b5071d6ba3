package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
)

const manageUsage = `Usage:
  engram stats  [--namespace N [--user U]] [--window-days D] [--json]
  engram stats  --partitions [--json]
  engram delete MEMORY_ID --user U [--namespace N] [--reason R]

stats counts what the read model holds (users, turns, sessions, episodes,
memories by status and active ones by category) and what the streams hold,
and prints seed 004 §9's quality figures: the confirmation and wrong-write
(rejected / confirmed) rates from the read model, the namespace's or with
--user the user's, beside the memories superseded soon after they were
written (--window-days, default 7); the retrieval hit rate and
memory-token share from the running engram (GET /v1/stats of its HTTP
address; the namespace's, or "default"'s).
stats --partitions shows, from the bus, which retriever keeps a copy of
which partition of the users (ENGRAM_PARTITIONS), whether it serves or is
still being built (and how far), how far behind MEMORY it is, and what it
holds: users, rows and size on disk.
delete publishes memory.deleted for one memory (seed 002 §10.2); to erase a
user's every trace, use engram forget.

Both work with engram stopped or running on the data dir (the read model is
read beside it; events go through its NATS listener), or with --nats-url.
`

func stats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, manageUsage); fs.PrintDefaults() }
	var f app.Flags
	f.Register(fs)
	ns := fs.String("namespace", "", "only this namespace")
	user := fs.String("user", "", "only this user (of --namespace, default \"default\")")
	asJSON := fs.Bool("json", false, "one JSON object")
	window := fs.Float64("window-days", 7, "a memory superseded within this many days of being written counts as superseded soon")
	token := fs.String("token", os.Getenv("ENGRAM_TOKEN"), "bearer token for the running engram's context figures (env ENGRAM_TOKEN; default: a token of the config that covers the namespace)")
	parts := fs.Bool("partitions", false, "the retrievers' partitions of the users, read from the bus: who holds which, state, lag, rows")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *window <= 0 {
		fmt.Fprintln(stderr, "engram stats: --window-days must be more than 0")
		return 2
	}
	if *user != "" && *ns == "" {
		*ns = events.DefaultNamespace
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram stats: %v\n", err)
		return 2
	}
	if *parts {
		return partitionStats(cfg, *asJSON, stdout, stderr)
	}
	if _, err := os.Stat(cfg.ReadModelPath()); err != nil {
		fmt.Fprintf(stderr, "engram stats: no read model at %s (is ENGRAM_DATA_DIR right?)\n", cfg.ReadModelPath())
		return 1
	}
	ctx, stop := signalContext()
	defer stop()
	st, err := sqlite.ReadStats(ctx, cfg.ReadModelPath(), *ns, *user)
	if err != nil {
		fmt.Fprintf(stderr, "engram stats: %v\n", err)
		return 1
	}
	out := map[string]any{"read_model": st}
	q, err := sqlite.ReadQuality(ctx, cfg.ReadModelPath(), *ns, *user, time.Duration(*window*float64(24*time.Hour)))
	if err != nil {
		fmt.Fprintf(stderr, "engram stats: %v\n", err)
		return 1
	}
	out["quality"] = q
	ctxNS := *ns
	if ctxNS == "" {
		ctxNS = events.DefaultNamespace
	}
	figures, running := runningContextFigures(ctx, cfg, ctxNS, *token)
	if running {
		out["context"] = figures
	}
	if js, closeFn, err := openStream(ctx, cfg, stderr, app.OpenOperator); err != nil {
		fmt.Fprintf(stderr, "engram stats: streams: %v\n", err)
	} else {
		defer closeFn()
		for _, name := range []string{stream.MemoryStream, stream.DeadLetterStream} {
			s, err := js.Stream(ctx, name)
			if err != nil {
				continue
			}
			if info, err := s.Info(ctx); err == nil {
				out[name] = map[string]uint64{"messages": info.State.Msgs, "bytes": info.State.Bytes, "last_seq": info.State.LastSeq}
			}
		}
		ret := retentionFigures{RawTurns: cfg.Retention.RawTurns.String()}
		if at, ok, err := stream.OldestRawTurn(ctx, js); err == nil && ok {
			ret.OldestRawTurn = &at
		}
		out["retention"] = ret
	}
	if _, ok := out["retention"]; !ok {
		out["retention"] = retentionFigures{RawTurns: cfg.Retention.RawTurns.String()}
	}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	scope := "every namespace"
	switch {
	case *user != "":
		scope = fmt.Sprintf("user %q of namespace %q", *user, *ns)
	case *ns != "":
		scope = fmt.Sprintf("namespace %q", *ns)
	}
	fmt.Fprintf(stdout, "read model (%s), at stream seq %d:\n", scope, st.LastSeq)
	fmt.Fprintf(stdout, "  users %d, sessions %d, turns %d, episodes %d\n", st.Users, st.Sessions, st.Turns, st.Episodes)
	fmt.Fprintf(stdout, "  memories: %d active%s\n", st.Memories, counts(st.ByStatus, "active"))
	if len(st.ByCat) > 0 {
		fmt.Fprintf(stdout, "  active by category: %s\n", strings.TrimPrefix(counts(st.ByCat, ""), ", "))
	}
	for _, name := range []string{stream.MemoryStream, stream.DeadLetterStream} {
		if m, ok := out[name].(map[string]uint64); ok {
			fmt.Fprintf(stdout, "stream %s: %d messages, %d bytes\n", name, m["messages"], m["bytes"])
		}
	}
	printRetention(stdout, cfg.Retention.RawTurns, out["retention"].(retentionFigures))
	printQuality(stdout, q, figures, running, cfg.HTTP.Addr)
	return 0
}

// retentionFigures is how long raw turns are kept, and the oldest the
// stream holds.
type retentionFigures struct {
	RawTurns      string     `json:"raw_turns"` // "0s": kept forever
	OldestRawTurn *time.Time `json:"oldest_raw_turn_stored,omitempty"`
}

func printRetention(w io.Writer, age time.Duration, r retentionFigures) {
	if age == 0 {
		fmt.Fprint(w, "retention: off, raw turns are kept forever (retention.raw_turns, ENGRAM_RETENTION_RAW_TURNS)")
	} else {
		fmt.Fprintf(w, "retention: raw turns age out %s after the stream stored them, once extracted", age)
	}
	if r.OldestRawTurn != nil {
		fmt.Fprintf(w, "; the oldest was stored %s", r.OldestRawTurn.UTC().Format(time.RFC3339))
	}
	fmt.Fprintln(w)
}

// counts renders a map as ", k n" pairs, sorted, leaving out skip.
func counts(m map[string]int, skip string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != skip {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	s := ""
	for _, k := range keys {
		s += fmt.Sprintf(", %s %d", k, m[k])
	}
	return s
}

func deleteMemory(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram delete", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, manageUsage); fs.PrintDefaults() }
	var f app.Flags
	f.Register(fs)
	ns := fs.String("namespace", events.DefaultNamespace, "the memory's namespace")
	user := fs.String("user", "", "the memory's user (required)")
	reason := fs.String("reason", "", "why, kept in the memory's history")
	// The usage line puts the id first (MEMORY_ID --user U); Go's flag
	// package stops at the first argument that is not a flag.
	pos, err := parseAnyOrder(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) > 1 {
		fmt.Fprintf(stderr, "engram delete: one memory id at a time, got %d: %s\n", len(pos), strings.Join(pos, " "))
		return 2
	}
	if len(pos) == 0 || *user == "" {
		fs.Usage()
		return 2
	}
	id := pos[0]
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram delete: %v\n", err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	scope := memory.Scope{Namespace: *ns, User: *user}
	if _, err := sqlite.ReadMemory(ctx, cfg.ReadModelPath(), scope, id); err != nil {
		fmt.Fprintf(stderr, "engram delete: %v\n", err)
		return 1
	}
	e, err := events.NewDerived("engram/operator", events.TypeMemoryDeleted,
		fmt.Sprintf("delete-%s-%d", id, time.Now().UnixNano()), scope.Namespace, scope.User, time.Now().UTC(),
		&events.MemoryDeleted{MemoryID: id, Reason: *reason})
	if err != nil {
		fmt.Fprintf(stderr, "engram delete: %v\n", err)
		return 2
	}
	js, closeFn, err := openStream(ctx, cfg, stderr, app.OpenOperator)
	if err != nil {
		fmt.Fprintf(stderr, "engram delete: %v\n", err)
		return 1
	}
	defer closeFn()
	ack, err := stream.NewPublisher(js).Publish(ctx, e)
	if err != nil {
		fmt.Fprintf(stderr, "engram delete: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "deleted memory %s (memory.deleted at stream seq %d)\n", id, ack.Seq)
	return 0
}

// partitionStats prints the retrievers' copies of the partitions, as they
// publish them beside their leases.
func partitionStats(cfg config.Config, asJSON bool, stdout, stderr io.Writer) int {
	ctx, stop := signalContext()
	defer stop()
	js, closeFn, err := openStream(ctx, cfg, stderr, app.OpenOperator)
	if err != nil {
		fmt.Fprintf(stderr, "engram stats: %v\n", err)
		return 1
	}
	defer closeFn()
	states, err := stream.PartitionStates(ctx, js, app.ReadGroup)
	if err != nil {
		fmt.Fprintf(stderr, "engram stats: %v\n", err)
		return 1
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"partitions": cfg.Partitions, "copies": states})
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	if len(states) == 0 {
		fmt.Fprintf(stdout, "no retriever keeps a partition of the users (retrievers are partitioned when run apart with ENGRAM_PARTITIONS > 1; this config has %d)\n", cfg.Partitions)
		return 0
	}
	served := map[int]bool{}
	fmt.Fprintf(stdout, "%-9s %-20s %-9s %-4s %7s %9s %9s %8s %9s  %s\n", "partition", "retriever", "state", "held", "users",
		"turns", "memories", "lag", "size", "build")
	for _, st := range states {
		held := "no"
		if st.Held {
			held = "yes"
		}
		build := ""
		if st.State == stream.StateBuilding && st.Target > 0 {
			build = fmt.Sprintf("%d of %d events (%d%%)", min(st.Position, st.Target), st.Target, min(st.Position, st.Target)*100/st.Target)
		}
		served[st.Partition] = served[st.Partition] || st.State == stream.StateServing
		fmt.Fprintf(stdout, "%-9d %-20s %-9s %-4s %7d %9d %9d %8d %9s  %s\n", st.Partition, st.Instance, st.State, held, st.Users,
			st.Rows["turns"], st.Rows["memories"], st.Lag(), mib(st.Bytes), build)
	}
	var unserved []string
	for p := range cfg.Partitions {
		if !served[p] {
			unserved = append(unserved, strconv.Itoa(p))
		}
	}
	if len(unserved) > 0 {
		fmt.Fprintf(stdout, "not served by a copy that has caught up: partition %s (of %d)\n", strings.Join(unserved, ", "), cfg.Partitions)
	}
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
