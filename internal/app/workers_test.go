package app

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// testBus is a nats-server started as deploy/nats.conf has it, with
// engram's users (the auth.conf `engram creds --nats-conf` writes, which
// the file includes) and the streams and buckets the operator sets up.
type testBus struct {
	URL     string
	authDir string
	op      jetstream.JetStream // the operator's
}

// use points cfg at the bus as a worker apart: each of its bus users
// takes its own kind's seed (nats.nkey_dir).
func (b *testBus) use(cfg *config.Config) {
	cfg.NATS.URL, cfg.NATS.NKeyDir = b.URL, b.authDir
}

// externalNATS starts a nats-server with JetStream and authentication, as
// deploy/nats.conf does, for workers run apart.
func externalNATS(t *testing.T) *testBus {
	t.Helper()
	return startBus(t, stream.DefaultLeaseTTL)
}

// busWithFastLeases is externalNATS with partition leases that live 1 s,
// so that a dead instance's partitions move fast.
func busWithFastLeases(t *testing.T) *testBus {
	t.Helper()
	return startBus(t, time.Second)
}

func startBus(t *testing.T, leaseTTL time.Duration) *testBus {
	t.Helper()
	opts, auth := deployNATS(t)
	if !opts.JetStream || !opts.SyncAlways {
		t.Fatalf("deploy/nats.conf: jetstream=%v sync always=%v, want both", opts.JetStream, opts.SyncAlways)
	}
	// The operator, the four worker kinds and the agent of default: the
	// file takes engram's users by default.
	if got, want := len(opts.Nkeys), 6; got != want {
		t.Fatalf("deploy/nats.conf: %d nkey users, want %d (does it include auth.conf?)", got, want)
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
	nc, err := stream.Connect(stream.ConnConfig{URL: ns.ClientURL(), Name: "operator", NKey: auth.SeedFile(stream.RoleOperator, "")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.SetupStreams(t.Context(), js, stream.StreamsConfig{LeaseTTL: leaseTTL}, stream.Restore); err != nil {
		t.Fatal(err)
	}
	return &testBus{URL: ns.ClientURL(), authDir: auth.Dir, op: js}
}

// deployNATS reads deploy/nats.conf as a server would, beside the
// auth.conf `engram creds --nats-conf` writes for it.
func deployNATS(t *testing.T) (*server.Options, *stream.Auth) {
	t.Helper()
	dir := t.TempDir()
	auth, err := stream.EnsureAuth(filepath.Join(dir, "nats-auth"), []string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile("../../deploy/nats.conf")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"nats.conf": string(conf), "auth.conf": auth.ServerConfig()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
	if err != nil {
		t.Fatalf("deploy/nats.conf: %v", err)
	}
	return opts, auth
}

// deploy/nats.conf is a working config, and the separate workers started
// against it (ingest, retriever, extractor, consolidator, as the cmd/
// binaries do) together do the job of the single binary.
func TestSeparateWorkersAgainstDeployConfig(t *testing.T) {
	t.Parallel()
	bus := externalNATS(t)

	worker := func(roles Roles) *App {
		cfg := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
		bus.use(&cfg)
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
	// Nor may it delete messages: forgetting a user is the operator's.
	r = do(t, "DELETE", "http://"+ingest.HTTPAddr()+"/v1/users/ivy", "", nil, nil)
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Raw, "engram forget") {
		t.Fatalf("forget on the ingest apart: %d %s, want 503 naming engram forget", r.Status, r.Raw)
	}
	if hits := searchHTTP(t, retriever, "default", "ivy", "上海"); len(hits) != 1 {
		t.Fatalf("after the refused forget the retriever finds %d, want 1", len(hits))
	}
}
