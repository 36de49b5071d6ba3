package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/natsapi"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

// freePorts finds n ports free on loopback now (the cluster's routes must
// name each other's ports before any node starts).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	out := make([]int, n)
	for i := range out {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out[i] = l.Addr().(*net.TCPAddr).Port
		defer quiet.Close(l)
	}
	return out
}

// deploy/cluster/n*.conf form a working three-node cluster with engram's
// users (as deploy/cluster.sh runs them, on other ports): workers apart
// store every event on three replicas, and an agent sends events and
// searches over NATS with only its rights.
func TestDeployCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	dir := t.TempDir()
	auth, err := stream.EnsureAuth(filepath.Join(dir, "nats-auth"), []string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("auth.conf", auth.ServerConfig())
	ports := freePorts(t, 6)
	routes := ""
	for _, p := range ports[3:] {
		routes += fmt.Sprintf("  \"nats-route://route:secret@127.0.0.1:%d\"\n", p)
	}
	write("routes.conf", "authorization { user: route, password: \"secret\" }\nroutes: [\n"+routes+"]\n")
	var urls []string
	for n := range 3 {
		conf, err := os.ReadFile(fmt.Sprintf("../../deploy/cluster/n%d.conf", n+1))
		if err != nil {
			t.Fatal(err)
		}
		write(fmt.Sprintf("n%d.conf", n+1), string(conf))
		opts, err := server.ProcessConfigFile(filepath.Join(dir, fmt.Sprintf("n%d.conf", n+1)))
		if err != nil {
			t.Fatalf("deploy/cluster/n%d.conf: %v", n+1, err)
		}
		if !opts.JetStream || !opts.SyncAlways || opts.Cluster.Name != "engram" || len(opts.Routes) != 3 ||
			opts.Cluster.Username != "route" || len(opts.Nkeys) != 6 {
			t.Fatalf("n%d.conf: jetstream %v, sync always %v, cluster %q with %d routes, route user %q, %d users",
				n+1, opts.JetStream, opts.SyncAlways, opts.Cluster.Name, len(opts.Routes), opts.Cluster.Username, len(opts.Nkeys))
		}
		opts.Port, opts.Cluster.Port, opts.HTTPPort = ports[n], ports[3+n], 0
		opts.StoreDir = filepath.Join(dir, fmt.Sprintf("n%d", n+1))
		opts.NoSigs, opts.NoLog = true, true
		srv, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		srv.Start()
		t.Cleanup(srv.Shutdown)
		if !srv.ReadyForConnections(10 * time.Second) {
			t.Fatalf("node %d not ready", n+1)
		}
		urls = append(urls, srv.ClientURL())
	}

	base := WorkerDefaults(testConfig(t, t.TempDir()), "127.0.0.1:0")
	base.NATS.URL, base.NATS.NKeyDir, base.NATS.Replicas = strings.Join(urls, ","), auth.Dir, 3
	// Workers may not create streams: the operator sets them up first, as
	// deploy/cluster.sh does.
	if _, err := ApplyStreams(t.Context(), base, zaptest.NewLogger(t)); err != nil {
		t.Fatal(err)
	}
	worker := func(roles Roles) *App {
		cfg := base
		cfg.DataDir = t.TempDir()
		return startApp(t, cfg, roles)
	}
	ingest := worker(RoleIngest)
	retriever := worker(RoleRetriever)

	r := postEvent(t, ingest, turnEvent("c-1", "ivy", "s1", 0, "user", "集群里的第一条"))
	mustAccept(t, r)
	waitProjected(t, retriever, lastSeqOf(r))
	s, err := jsOf(ingest).Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("MEMORY cluster info %+v, want a leader and two replicas", info.Cluster)
	}
	// No worker kind's user may change MEMORY on the cluster either.
	for _, role := range stream.WorkerRoles {
		tryRefused(t, urls[1], auth.SeedFile(role, ""), role)
	}
	if after, err := s.Info(t.Context()); err != nil || after.State.Msgs != info.State.Msgs || after.Config.MaxMsgs != -1 {
		t.Fatalf("MEMORY after the workers' tries: %+v (%v), want %d messages and no limit", after, err, info.State.Msgs)
	}

	agent, err := stream.Connect(stream.ConnConfig{URL: urls[2], Name: "agent", NKey: auth.SeedFile(stream.RoleAgent, "default")},
		nats.CustomInboxPrefix(stream.AgentInboxPrefix("default")))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	reply, err := agent.Request(stream.InputSubject("default"),
		[]byte(`{"specversion":"1.0","id":"c-2","source":"agent","type":"turn.recorded","user":"ivy","data":{"session_id":"s1","turn_index":1,"role":"user","content":"agent 的第二条"}}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := reply.Header.Get(natsapi.StatusHeader); got != "202" {
		t.Fatalf("agent input: %s %s", got, reply.Data)
	}
	wait.Until(t, "the agent's event found over NATS", func() bool {
		m, err := agent.Request(natsapi.SearchSubject("default"), []byte(`{"user":"ivy","q":"第二条"}`), 5*time.Second)
		return err == nil && strings.Contains(string(m.Data), "agent 的第二条")
	})
}

// tryRefused has the bus user of role, connected to url with seed, try
// what only the operator may: update MEMORY to keep one message, delete a
// message, purge MEMORY, delete it. The server must refuse each.
func tryRefused(t *testing.T, url, seed, role string) {
	t.Helper()
	denied := make(chan error, 8)
	nc, err := stream.Connect(stream.ConnConfig{URL: url, Name: role, NKey: seed}, nats.CustomInboxPrefix(stream.InboxPrefix(role)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { denied <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(t.Context(), stream.MemoryStream)
	if err != nil {
		t.Fatalf("%s reads MEMORY's state: %v", role, err)
	}
	truncate := s.CachedInfo().Config
	truncate.MaxMsgs = 1
	for api, call := range map[string]func(context.Context) error{
		"STREAM.UPDATE":     func(ctx context.Context) error { _, err := js.UpdateStream(ctx, truncate); return err },
		"STREAM.MSG.DELETE": func(ctx context.Context) error { return s.DeleteMsg(ctx, 1) },
		"STREAM.PURGE":      func(ctx context.Context) error { return s.Purge(ctx) },
		"STREAM.DELETE":     func(ctx context.Context) error { return js.DeleteStream(ctx, stream.MemoryStream) },
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		err := call(ctx)
		cancel()
		if err == nil {
			t.Fatalf("%s could %s MEMORY", role, api)
		}
		select {
		case err := <-denied:
			if want := `"$JS.API.` + api + `.MEMORY"`; !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s's %s: %v, want a permissions violation on %s", role, api, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s's %s: no permissions violation", role, api)
		}
	}
}
