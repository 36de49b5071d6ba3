package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/dedupe"
	"github.com/engramhq/engram/internal/extractbench"
	"github.com/engramhq/engram/internal/locomo"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/textseg"
)

// Main runs the benchmarks named by -only (default all) and prints the
// figures docs/benchmarks.md reports.
func Main(args []string, out io.Writer) int {
	if len(args) >= 2 && args[0] == "-only" && args[1] == "extract" {
		return extractbench.Main(args[2:], out) // no engram to start: it measures extraction alone
	}
	fs := flag.NewFlagSet("engram-bench", flag.ContinueOnError)
	only := fs.String("only", "secrets,ingest,ack,search,locomo,recall,llm,context,dedupe,extractors", "comma-separated: secrets, ingest, ack, search, locomo, recall, llm, context, dedupe, extractors")
	recallDir := fs.String("recall", "testdata/recall", "the recall sets: dev/ (tuned on) and test/ (held out)")
	recallSplits := fs.String("recall-splits", "dev,test", "which recall splits to run")
	recallMisses := fs.Bool("recall-misses", false, "print each recall case engram misses at 5, with both rankings (tune on dev only)")
	lexicons := fs.String("lexicons", "cedict,wordnet,hand", "the sources query expansion reads, comma-separated (cedict, wordnet, hand; none): what each adds")
	recallStyles := fs.String("recall-styles", "agent,whole,long,cross,budget,vectors", "how the recall cases are asked, comma-separated: agent (query + recent messages), whole (the whole window as the query), long (the windows of the 4 cases before it too), cross (translated, xlang/), budget (agent and whole at 1,500 and 4,000 tokens: the gold kept in the block), vectors (agent-style with the test embeddings endpoint, beside full text and vectors alone)")
	ctxMemories := fs.String("context-memories", "100000,1000000", "memories for the /v1/context latency runs, comma-separated")
	ctxIngest := fs.Int("context-ingest", 1000, "turns a second applied to the read model while the /v1/context queries run (0: none)")
	ctxUsers := fs.String("context-users", "1000", "users sharing the namespace in the /v1/context runs, comma-separated (1 = one user holds everything)")
	events := fs.Int("events", 50000, "events for the ingest throughput run")
	rounds := fs.Int("rounds", 5, "rounds the ingest run interleaves engram, JetStream alone and SQLite alone in")
	clusterNodes := fs.Int("cluster", 3, "nodes of the loopback cluster the ingest run is repeated on (0: none)")
	acks := fs.Int("acks", 2000, "single events for the ack latency run")
	xSessions := fs.Int("extract-sessions", 150, "sessions in the backlog the extractors clear (extractors run)")
	xLatency := fs.Duration("extract-latency", 200*time.Millisecond, "the test model's fixed latency in the extractors run")
	scale := fs.Int("scale", 1000000, "largest search scale (turns in one namespace); steps are 100k and this")
	queries := fs.Int("queries", 1000, "queries per search scale step")
	locomoPath := fs.String("locomo", "testdata/locomo/locomo10.json", "LoCoMo data file (not shipped: see docs/benchmarks.md)")
	locomoConvs := fs.String("locomo-convs", "", "only these LoCoMo conversations, through /v1/context (\"0-4\": the half tuned on); default all ten, with /v1/search and each half")
	locomoEnded := fs.Bool("locomo-ended", false, "end every LoCoMo session, as an agent would, and wait for rule extraction (no LLM) before asking: engram as shipped, with the memories it writes down")
	sync := fs.String("sync", "", "JetStream sync policy for the run (default: engram's default; the ingest run: both always and 1s)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	ctxDir := fs.String("context-dir", "", "keep the /v1/context runs' read models here and reuse them in later runs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(out, err)
			return 1
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			quiet.Close(f) // on a path that fails with its own error
			fmt.Fprintln(out, err)
			return 1
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintln(out, "cpu profile:", err)
			}
		}()
	}
	var lex textseg.Lexicons
	for _, l := range strings.Split(*lexicons, ",") {
		switch strings.TrimSpace(l) {
		case "cedict":
			lex.CEDICT = true
		case "wordnet":
			lex.WordNet = true
		case "hand":
			lex.Hand = true
		case "none", "":
		default:
			fmt.Fprintf(out, "-lexicons: %q is not cedict, wordnet, hand or none\n", l)
			return 2
		}
	}
	textseg.SetLexicons(lex)
	run := map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		run[strings.TrimSpace(s)] = true
	}
	ctx := context.Background()
	logf := func(format string, a ...any) { fmt.Fprintf(out, format+"\n", a...) }
	if missing := locomoMissing(*locomoPath, run); missing != "" {
		// Said first, not after the hour the other benchmarks take.
		logf("%s", missing)
		delete(run, "locomo")
		delete(run, "llm")
		if len(run) == 0 {
			return 1
		}
		defer logf("%s", missing)
	}
	logf("engram bench — %s, %d CPUs, %s/%s, %s", cpuModel(), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format("2006-01-02"))

	if run["ingest"] {
		syncs := []string{"always", "1s"}
		if *sync != "" {
			syncs = []string{*sync}
		}
		nodes := []int{1, 3}
		if *clusterNodes == 0 {
			nodes = nodes[:1]
		} else {
			nodes[1] = *clusterNodes
		}
		logf("ingest: %d events of one user in HTTP batches of 1,000 (4 requests at a time), to searchable; in %d rounds, "+
			"each round's events also published straight to a JetStream of the same durability (a server or cluster of its own, async acks) "+
			"and applied straight to a SQLite + FTS read model of their own, so that the machine's other load weighs on the three alike",
			*events, *rounds)
		for _, s := range syncs {
			for _, n := range nodes {
				setup := IngestSetup{Sync: s, Nodes: n}
				r, err := IngestIn(ctx, setup, *events, *rounds)
				if err != nil {
					logf("ingest, %s: %v", setup, err)
					return 1
				}
				logf("ingest, %s: engram %.0f events/s to searchable (acknowledged at %.0f/s); JetStream alone %.0f/s; direct SQLite + FTS %.0f/s",
					setup, r.PipelineRate, r.AckRate, r.JetStreamRate, r.DirectRate)
				logf("  engram / JetStream %.2f (goal ≥ 0.9 under sync always); engram / direct SQLite %.2f (goal ≥ 0.7 with a 1 s interval)",
					r.JetStreamRatio, r.Ratio)
				if r.AloneAckRate > 0 {
					logf("  the ingest worker apart (no read model in its process) acknowledged at %.0f/s: %.2f of JetStream alone",
						r.AloneAckRate, r.AloneAckRate/r.JetStreamRate)
				}
			}
		}
	}
	if run["ack"] {
		l, policy, err := AckLatencyOf(ctx, app.RoleAll, *sync, *acks)
		if err != nil {
			logf("ack: %v", err)
			return 1
		}
		logf("ingest ack latency, single events, sync %s (n=%d): p50 %.2f ms, p99 %.2f ms, max %.2f ms",
			policy, l.N, l.P50, l.P99, l.Max)
		j, err := JetStreamAckLatency(ctx, stream.Sync(policy), *acks)
		if err != nil {
			logf("ack, JetStream alone: %v", err)
			return 1
		}
		logf("  the same events published straight to JetStream, one at a time: p50 %.2f ms, p99 %.2f ms, max %.2f ms",
			j.P50, j.P99, j.Max)
		a, _, err := AckLatencyOf(ctx, app.RoleIngest, *sync, *acks)
		if err != nil {
			logf("ack, ingest alone: %v", err)
			return 1
		}
		logf("  the ingest worker apart (no read model in its process): p50 %.2f ms, p99 %.2f ms, max %.2f ms",
			a.P50, a.P99, a.Max)
	}
	if run["locomo"] {
		// Its own engram: FTS5 takes BM25's IDF from the whole index, so
		// another benchmark's data in the same read model would shift the
		// ranking (see docs/benchmarks.md).
		e, err := StartQuality(ctx, *sync)
		if err != nil {
			logf("start: %v", err)
			return 1
		}
		defer e.Close()
		ds, err := locomo.Load(*locomoPath)
		if err != nil {
			logf("locomo: %v (set -locomo or LOCOMO=)", err)
			return 1
		}
		if *locomoConvs != "" {
			from, to, ok := strings.Cut(*locomoConvs, "-")
			a, err1 := strconv.Atoi(from)
			b, err2 := strconv.Atoi(to)
			if !ok || err1 != nil || err2 != nil || a < 0 || b < a || b >= len(ds.Conversations) {
				logf("-locomo-convs: %q is not a range of conversations like 0-4", *locomoConvs)
				return 2
			}
			ds.Conversations = ds.Conversations[a : b+1]
		}
		t0 := time.Now()
		if err := LoadLoCoMo(ctx, e, ds, *locomoEnded); err != nil {
			logf("locomo load: %v", err)
			return 1
		}
		if *locomoEnded {
			n, err := waitExtracted(ctx, e, ds)
			if err != nil {
				logf("locomo extraction: %v", err)
				return 1
			}
			logf("locomo: sessions ended; rule extraction wrote %d memories", n)
		}
		if *locomoConvs == "" {
			srep, err := locomo.Evaluate(ctx, ds, LoCoMoSearch(e), locomo.DefaultKs)
			if err != nil {
				logf("locomo: %v", err)
				return 1
			}
			r := srep.Overall.Recall
			logf("locomo through /v1/search (memories and days by per-user BM25, turns as /v1/context ranks them), all ten conversations: recall@5=%.3f recall@10=%.3f recall@25=%.3f recall@50=%.3f",
				r[5], r[10], r[25], r[50])
		}
		rep, err := locomo.Evaluate(ctx, ds, LoCoMoContext(e), locomo.DefaultKs)
		if err != nil {
			logf("locomo: %v", err)
			return 1
		}
		logf("locomo: %d turns loaded and %d questions asked through /v1/context (no LLM, no embeddings) in %s", ds.Stats.Turns, ds.Stats.Questions, time.Since(t0).Round(time.Millisecond))
		logf("locomo, conversations %s:", map[bool]string{true: *locomoConvs, false: "0-9, all ten"}[*locomoConvs != ""])
		if err := rep.Write(out); err != nil {
			return 1
		}
		// Conversations 0–4 are what retrieval is tuned on; 5–9 are only
		// reported (docs/benchmarks.md).
		for _, half := range []struct {
			name     string
			from, to int
		}{{"conversations 0-4 (tuned on)", 0, 5}, {"conversations 5-9 (held out)", 5, 10}} {
			if *locomoConvs != "" {
				break
			}
			sub := *ds
			sub.Conversations = ds.Conversations[half.from:min(half.to, len(ds.Conversations))]
			hrep, err := locomo.Evaluate(ctx, &sub, LoCoMoContext(e), locomo.DefaultKs)
			if err != nil {
				logf("locomo: %v", err)
				return 1
			}
			logf("locomo, %s:", half.name)
			if err := hrep.Write(out); err != nil {
				return 1
			}
		}
	}
	if run["recall"] {
		var misses io.Writer
		if *recallMisses {
			misses = out
		}
		for _, split := range strings.Split(*recallSplits, ",") {
			if err := runRecall(ctx, out, filepath.Join(*recallDir, split), split, strings.Split(*recallStyles, ","), *sync, misses); err != nil {
				logf("recall %s: %v", split, err)
				return 1
			}
		}
	}
	if run["llm"] {
		ds, err := locomo.Load(*locomoPath)
		if err != nil {
			logf("llm: %v (set -locomo or LOCOMO=)", err)
			return 1
		}
		c, err := ExtractionCost(ctx, ds)
		if err != nil {
			logf("llm: %v", err)
			return 1
		}
		const mem0Prompt = 9000 // Mem0 OSS 3.3.1: one call of about 9,000 prompt tokens per turn
		logf("llm extraction, %d LoCoMo turns (sessions ended as an agent would): %d calls, %d prompt + %d completion tokens",
			c.Turns, c.Calls, c.Prompt, c.Completion)
		logf("llm extraction per 1,000 turns: %.1f calls, %.0f prompt + %.0f completion tokens (Mem0: 1,000 calls, ~9,000,000 prompt tokens) → %.0f× fewer tokens",
			c.CallsPerK, c.PromptPerK, c.CompPer, mem0Prompt*1000/(c.PromptPerK+c.CompPer))
	}
	if run["extractors"] {
		r, err := Extractors(ctx, *xSessions, *xLatency, func(s string) { logf("extractors: %s", s) })
		if err != nil {
			logf("extractors: %v", err)
			return 1
		}
		logf("extractors apart, a backlog of %d sessions, a model of %s latency: one instance %.1f s, two %.1f s → %.2f× (goal ≥ 1.8)",
			r.Sessions, r.Latency, r.Took[1].Seconds(), r.Took[2].Seconds(), r.Speedup(2))
	}
	if run["context"] {
		for _, m := range strings.Split(*ctxMemories, ",") {
			mems, err := strconv.Atoi(strings.TrimSpace(m))
			if err != nil || mems < 1 {
				logf("context-memories: %q is not a positive number", m)
				return 2
			}
			for _, u := range strings.Split(*ctxUsers, ",") {
				users, err := strconv.Atoi(strings.TrimSpace(u))
				if err != nil || users < 1 {
					logf("context-users: %q is not a positive number", u)
					return 2
				}
				p, err := ContextScale(ctx, mems, *scale, users, *queries, *ctxIngest, *ctxDir, func(s string) { logf("context scale: %s", s) })
				if err != nil {
					logf("context: %v", err)
					return 1
				}
				goal := "goal p95 ≤ 2.5 ms"
				if mems >= 1000000 {
					goal = "goal p95 ≤ 5 ms"
				}
				logf("/v1/context latency, %d memories and %d turns in one namespace shared by %d users (the queried user holds %d turns), ingest %.0f events/s beside it, n=%d: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms (%s; CPU %.2f ms a request; load average %s)",
					p.Memories, p.Turns, p.Users, p.Turns/p.Users, p.Ingested, p.Latency.N, p.Latency.P50, p.Latency.P95, p.Latency.P99, goal, p.CPU, loadAverage())
				logf("/v1/context latency, same read model, a 2,000-character dialogue (query + recent_messages), n=%d: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms (goal p95 ≤ 10 ms; CPU %.2f ms a request; load average %s)",
					p.Dialogue.N, p.Dialogue.P50, p.Dialogue.P95, p.Dialogue.P99, p.DialogueCPU, loadAverage())
			}
		}
	}
	if run["secrets"] {
		s := Secrets()
		logf("secret masking on the corpus (%d secrets, %d look-alikes): precision %.3f, recall %.3f (goal ≥ 0.95 each)",
			s.TP+s.FN, s.FP+s.TN, s.Precision(), s.Recall())
		for _, l := range append(s.Misses, s.FalseAlarms...) {
			logf("  %s", l)
		}
	}
	if run["dedupe"] {
		rep, err := dedupe.Measure(10000)
		if err != nil {
			logf("dedupe: %v", err)
			return 1
		}
		logf("dedupe of 10,000 near-duplicate memories:\n%s", rep.String())
	}
	if run["search"] {
		steps := []int{100000}
		if *scale > 100000 {
			steps = append(steps, *scale)
		}
		for _, users := range []int{1000, 1} {
			st := steps
			if users == 1 {
				st = steps[:1] // one user holding 1M turns is past any sane per-user size
			}
			points, err := SearchScale(ctx, st, 100000, users, *queries, func(s string) { logf("search scale: %s", s) })
			if err != nil {
				logf("search: %v", err)
				return 1
			}
			for _, p := range points {
				goal := ""
				if p.Users == 1 && p.Turns == 100000 {
					goal = "goal p95 ≤ 10 ms; "
				}
				logf("search latency, %d turns in one namespace shared by %d users (+%d in another namespace), n=%d: p50 %.2f ms, p95 %.2f ms, p99 %.2f ms (%sCPU %.2f ms a request; load average %s)",
					p.Turns, p.Users, p.Other, p.Latency.N, p.Latency.P50, p.Latency.P95, p.Latency.P99, goal, p.CPU, loadAverage())
			}
		}
	}
	return 0
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, to read
// a latency beside: the machine may be shared.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "unknown CPU"
}

// locomoMissing says why the LoCoMo benchmarks cannot run and how to get
// their data, or "" when they can (or are not asked for).
func locomoMissing(path string, run map[string]bool) string {
	if !run["locomo"] && !run["llm"] {
		return ""
	}
	if _, err := os.Stat(path); err == nil {
		return ""
	}
	return fmt.Sprintf("locomo, llm: skipped: no LoCoMo data at %s. It is not shipped (CC BY-NC 4.0); get it with\n"+
		"  mkdir -p testdata/locomo && curl -fLo testdata/locomo/locomo10.json %s\n"+
		"or name a copy with LOCOMO=PATH (make) or -locomo PATH.", path, locomoURL)
}

// locomoURL is where the LoCoMo authors publish the data set.
const locomoURL = "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json"
