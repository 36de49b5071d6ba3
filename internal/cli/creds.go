package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
)

// creds prints where the bus credentials are and how the nats CLI and an
// agent use them; `creds agent NS` adds an agent of namespace NS.
func creds(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram creds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f app.Flags
	f.Register(fs)
	natsConf := fs.String("nats-conf", "", "also write the users as a nats-server config block to this file (include it from an external server's config)")
	pos, err := parseAnyOrder(fs, args)
	if err != nil {
		return 2
	}
	agent := ""
	switch len(pos) {
	case 0:
	case 2:
		if pos[0] != "agent" {
			fmt.Fprintln(stderr, "usage: engram creds [agent NAMESPACE] [flags]")
			return 2
		}
		agent = pos[1]
	default:
		fmt.Fprintln(stderr, "usage: engram creds [agent NAMESPACE] [flags]")
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram creds: %v\n", err)
		return 2
	}
	auth, err := app.BusCredentials(cfg, agent)
	if err != nil {
		fmt.Fprintf(stderr, "engram creds: %v\n", err)
		return 1
	}
	if *natsConf != "" {
		if err := os.WriteFile(*natsConf, []byte(auth.ServerConfig()), 0o644); err != nil {
			fmt.Fprintf(stderr, "engram creds: %v\n", err)
			return 1
		}
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	server := "nats://" + cfg.NATS.Listen
	if cfg.NATS.URL != "" {
		server = cfg.NATS.URL
	}
	fmt.Fprintf(stdout, "NATS users of the embedded server: nkey seeds in %s (0600; keep them secret)\n\n", abs(auth.Dir))
	fmt.Fprintf(stdout, "  %-22s %s\n", "operator (everything)", abs(auth.SeedFile(stream.RoleOperator, "")))
	for _, role := range stream.WorkerRoles {
		fmt.Fprintf(stdout, "  %-22s %s\n", role+" (worker)", abs(auth.SeedFile(role, "")))
	}
	for _, ns := range auth.Namespaces() {
		fmt.Fprintf(stdout, "  %-22s %s\n", "agent of "+ns, abs(auth.SeedFile(stream.RoleAgent, ns)))
	}
	if _, err := os.Stat(filepath.Join(auth.Dir, stream.RetiredWorkerSeed)); err == nil {
		fmt.Fprintf(stdout, "\n%s is retired: each worker kind has its own seed above, with only what that kind does "+
			"(docs/nats.md). Give each worker apart ENGRAM_NATS_NKEY_DIR=%s (or ENGRAM_NATS_NKEY=<its kind's seed>), "+
			"write an external server's users again with --nats-conf and reload it, then delete %s.\n",
			stream.RetiredWorkerSeed, abs(auth.Dir), abs(filepath.Join(auth.Dir, stream.RetiredWorkerSeed)))
	}
	fmt.Fprintf(stdout, "\nWorkers apart (cmd/ingest, …) against an external server:\n"+
		"  engram streams apply --nats-url %s    (once, as the operator: workers may not create streams)\n"+
		"  ENGRAM_NATS_URL=%s ENGRAM_NATS_NKEY_DIR=%s ingest    (each kind takes its own seed)\n",
		server, server, abs(auth.Dir))
	fmt.Fprintf(stdout, "\nThe nats CLI as the operator:\n  nats context save engram --server %s --nkey %s --select\n  nats stream ls\n",
		server, abs(auth.SeedFile(stream.RoleOperator, "")))
	ns := "default"
	if agent != "" {
		ns = agent
	}
	fmt.Fprintf(stdout, "\nAn agent of namespace %q (events in, search and context out; nothing else):\n"+
		"  nats --server %s --nkey %s --inbox-prefix %s \\\n    req %s '{\"specversion\":\"1.0\",\"id\":\"nats-0001\",\"source\":\"my/agent\",\"type\":\"turn.recorded\",\"user\":\"ana\",\"data\":{\"session_id\":\"s-nats\",\"turn_index\":0,\"role\":\"user\",\"content\":\"Hello over NATS.\"}}'\n"+
		"  (in Go: nats.Nkey option from the seed, nats.CustomInboxPrefix(%q))\n",
		ns, server, abs(auth.SeedFile(stream.RoleAgent, ns)), stream.AgentInboxPrefix(ns), stream.InputSubject(ns), stream.AgentInboxPrefix(ns))
	if agent != "" {
		fmt.Fprintln(stdout, "\nA running engram serve lets the new agent in at its next start.")
	}
	return 0
}
