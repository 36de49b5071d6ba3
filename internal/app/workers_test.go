package app

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// externalNATS starts a nats-server with JetStream, as deploy/nats.conf
// does, for workers run apart.
func externalNATS(t *testing.T) string {
	t.Helper()
	opts, err := server.ProcessConfigFile("../../deploy/nats.conf")
	if err != nil {
		t.Fatalf("deploy/nats.conf: %v", err)
	}
	if !opts.JetStream || !opts.SyncAlways {
		t.Fatalf("deploy/nats.conf: jetstream=%v sync always=%v, want both", opts.JetStream, opts.SyncAlways)
	}
	opts.StoreDir = t.TempDir()
	opts.Port = server.RANDOM_PORT
	opts.HTTPPort = 0
	opts.NoSigs, opts.NoLog = true, true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10e9) {
		t.Fatal("nats not ready")
	}
	return ns.ClientURL()
}

// deploy/nats.conf is a working config, and the separate workers started
// against it (ingest, retriever, extractor, consolidator, as the cmd/
// binaries do) together do the job of the single binary.
func TestSeparateWorkersAgainstDeployConfig(t *testing.T) {
	t.Parallel()
	url := externalNATS(t)

	worker := func(roles Roles) *App {
		cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
		cfg.NATS.URL = url
		return startApp(t, cfg, roles)
	}
	ingest := worker(RoleIngest)
	retriever := worker(RoleRetriever)
	worker(RoleExtractor)
	worker(RoleConsolidator)

	r := postEvent(t, ingest, turnEvent("w-1", "ivy", "s1", 0, "user", "上海的天气怎么样"))
	mustAccept(t, r)
	waitProjected(t, retriever, lastSeqOf(r))
	if hits := searchHTTP(t, retriever, "default", "ivy", "上海"); len(hits) != 1 {
		t.Fatalf("retriever found %d, want 1", len(hits))
	}
	// The ingest worker keeps no read model and serves no search.
	if got := do(t, "GET", "http://"+ingest.HTTPAddr()+"/v1/search?user=ivy&q=x", "", nil, nil).Status; got != 404 {
		t.Fatalf("ingest /v1/search status %d, want 404", got)
	}
}
