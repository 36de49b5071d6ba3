package stream

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/quiet"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// client is a connection that records the server's permission errors.
type client struct {
	nc   *nats.Conn
	errs chan error
}

func startAuthServer(t *testing.T) (*Embedded, *Auth) {
	t.Helper()
	auth, err := EnsureAuth(filepath.Join(t.TempDir(), "nats-auth"), []string{"acme", "beta"})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := StartEmbedded(EmbeddedConfig{StoreDir: t.TempDir(), Sync: "1s", Listen: "127.0.0.1:0", Auth: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Shutdown)
	return emb, auth
}

func connectAs(t *testing.T, emb *Embedded, seed string, opts ...nats.Option) *client {
	t.Helper()
	c := &client{errs: make(chan error, 16)}
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case c.errs <- err:
		default:
		}
	}))
	nc, err := Connect(ConnConfig{URL: emb.ClientURL(), Name: filepath.Base(seed), NKey: seed}, opts...)
	if err != nil {
		t.Fatalf("connect with %s: %v", filepath.Base(seed), err)
	}
	t.Cleanup(nc.Close)
	c.nc = nc
	return c
}

// denied waits for the server to refuse an operation on subject.
func (c *client) denied(t *testing.T, subject string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case err := <-c.errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
				return
			}
		case <-timeout:
			t.Fatalf("no permissions violation for %q", subject)
		}
	}
}

func (c *client) noErrors(t *testing.T) {
	t.Helper()
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.errs:
		t.Fatalf("unexpected error: %v", err)
	default:
	}
}

func memoryMsgs(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(t.Context(), MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// Seeds are written once, 0600 in a 0700 directory, and kept across starts.
func TestAuthFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nats-auth")
	a, err := EnsureAuth(dir, []string{"default", "张三.ns"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o700 {
		t.Fatalf("dir mode %v, want 0700", got)
	}
	before := map[string]string{}
	seeds := []string{a.SeedFile(RoleOperator, ""), a.SeedFile(RoleAgent, "default"), a.SeedFile(RoleAgent, "张三.ns")}
	for _, role := range WorkerRoles {
		seeds = append(seeds, a.SeedFile(role, ""))
	}
	for _, p := range seeds {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != 0o600 {
			t.Fatalf("%s mode %v, want 0600", p, got)
		}
		b, _ := os.ReadFile(p)
		before[p] = string(b)
	}
	if _, err := CreateAgent(dir, "later"); err != nil {
		t.Fatal(err)
	}
	b, err := EnsureAuth(dir, []string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	for p, seed := range before {
		if got, _ := os.ReadFile(p); string(got) != seed {
			t.Fatalf("%s changed on the second start", p)
		}
	}
	if got, want := strings.Join(b.Namespaces(), ","), "default,later,张三.ns"; got != want {
		t.Fatalf("namespaces %q, want %q", got, want)
	}
}

// Without credentials nothing gets in.
func TestAuthRequired(t *testing.T) {
	t.Parallel()
	emb, auth := startAuthServer(t)
	if nc, err := nats.Connect(emb.ClientURL(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("anonymous client was let in")
	}
	// In-process clients go through the same check (an anonymous one is
	// refused too, but nats.go notices only at the pipe's 10 s deadline).
	nc, err := Connect(ConnConfig{Name: "in-process", NKey: auth.SeedFile(RoleIngest, "")}, emb.ConnectOption())
	if err != nil {
		t.Fatalf("ingest in-process: %v", err)
	}
	nc.Close()
}

// Each role may do what it needs and nothing more; the server refuses
// the rest.
func TestAuthRoles(t *testing.T) {
	t.Parallel()
	emb, auth := startAuthServer(t)
	testRoles(t, emb, auth)
}

// An external nats-server given ServerConfig (as deploy/cluster.sh does)
// enforces the same roles.
func TestAuthServerConfig(t *testing.T) {
	t.Parallel()
	auth, err := EnsureAuth(filepath.Join(t.TempDir(), "nats-auth"), []string{"acme", "beta"})
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("listen: 127.0.0.1:-1\njetstream { store_dir: "+strconv.Quote(t.TempDir())+" }\n"+auth.ServerConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("ServerConfig does not parse: %v\n%s", err, auth.ServerConfig())
	}
	// The operator, the four worker kinds, the agents of acme and beta.
	if got, want := len(opts.Nkeys), 7; got != want {
		t.Fatalf("%d nkey users, want %d", got, want)
	}
	opts.NoSigs, opts.NoLog = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	emb := &Embedded{srv: srv}
	t.Cleanup(emb.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	testRoles(t, emb, auth)
}

func testRoles(t *testing.T, emb *Embedded, auth *Auth) {
	op := connectAs(t, emb, auth.SeedFile(RoleOperator, ""))
	ojs, err := jetstream.New(op.nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureStreams(t.Context(), ojs, StreamsConfig{}); err != nil {
		t.Fatalf("the operator sets the streams up: %v", err)
	}
	publishTurns(t, ojs, "ana", 2)
	// A service of namespace acme and of beta, answered by a retriever.
	retriever := connectAs(t, emb, auth.SeedFile(RoleRetriever, ""), nats.CustomInboxPrefix(InboxPrefix(RoleRetriever)))
	sub, err := retriever.nc.Subscribe(ServicePrefix+".*.search", func(m *nats.Msg) { _ = m.Respond([]byte("ok " + m.Subject)) })
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Do(sub.Unsubscribe)
	retriever.noErrors(t)

	t.Run("workers", func(t *testing.T) {
		for _, role := range WorkerRoles {
			t.Run(role, func(t *testing.T) {
				t.Parallel()
				testWorkerRole(t, emb, auth, role)
			})
		}
	})
	if got := memoryMsgs(t, ojs); got != 2 {
		t.Fatalf("MEMORY holds %d after the workers, want 2", got)
	}
	s, err := ojs.Stream(t.Context(), MemoryStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.MaxMsgs; got != -1 {
		t.Fatalf("MEMORY max_msgs %d after the workers, want -1", got)
	}

	t.Run("agent", func(t *testing.T) {
		agent := connectAs(t, emb, auth.SeedFile(RoleAgent, "acme"), nats.CustomInboxPrefix(AgentInboxPrefix("acme")))
		before := memoryMsgs(t, ojs)
		// Its own namespace's services answer.
		reply, err := agent.nc.Request(ServicePrefix+".acme.search", []byte(`{}`), 5*time.Second)
		if err != nil {
			t.Fatalf("agent asks its namespace: %v", err)
		}
		if got, want := string(reply.Data), "ok engram.v1.acme.search"; got != want {
			t.Fatalf("reply %q, want %q", got, want)
		}
		// Not another namespace's, not derived or input events straight
		// onto the stream, not the consolidator, not a partition's
		// forwarded HTTP API (the write API behind it takes a token).
		for _, subject := range []string{ServicePrefix + ".beta.search", "mem.acme.ana.memory.extracted",
			"mem.acme.ana.turn.recorded", "mem.beta.ana.user.forgotten", "dlq.x.mem.acme.ana.turn.recorded",
			ServicePrefix + ".consolidator.run", ServicePrefix + ".acme.p3.http", ServicePrefix + ".beta.p3.context"} {
			if err := agent.nc.Publish(subject, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			agent.denied(t, subject)
		}
		// Not the streams.
		ajs, err := jetstream.New(agent.nc)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := ajs.DeleteStream(ctx, MemoryStream); err == nil {
			t.Fatal("agent deleted MEMORY")
		}
		agent.denied(t, "$JS.API.STREAM.DELETE.MEMORY")
		ctx, cancel = context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := ajs.Stream(ctx, MemoryStream); err == nil {
			t.Fatal("agent read MEMORY's info")
		}
		// Nor read what others are sent or answered.
		for _, subject := range []string{"mem.>", "_INBOX.>", ServicePrefix + ".>", "_INBOX.agent.beta.>"} {
			if _, err := agent.nc.SubscribeSync(subject); err != nil {
				t.Fatal(err)
			}
			agent.denied(t, subject)
		}
		if got := memoryMsgs(t, ojs); got != before {
			t.Fatalf("MEMORY holds %d after the agent, want %d", got, before)
		}
	})

	t.Run("agent of another namespace", func(t *testing.T) {
		beta := connectAs(t, emb, auth.SeedFile(RoleAgent, "beta"), nats.CustomInboxPrefix(AgentInboxPrefix("beta")))
		if _, err := beta.nc.Request(ServicePrefix+".beta.search", []byte(`{}`), 5*time.Second); err != nil {
			t.Fatalf("beta asks beta: %v", err)
		}
		if err := beta.nc.Publish(ServicePrefix+".acme.search", nil); err != nil {
			t.Fatal(err)
		}
		beta.denied(t, ServicePrefix+".acme.search")
	})

	t.Run("operator", func(t *testing.T) {
		op := connectAs(t, emb, auth.SeedFile(RoleOperator, ""))
		ojs, err := jetstream.New(op.nc)
		if err != nil {
			t.Fatal(err)
		}
		if err := ojs.DeleteStream(t.Context(), DeadLetterStream); err != nil {
			t.Fatalf("operator deletes a stream: %v", err)
		}
		op.noErrors(t)
	})
}

// refusals are, per worker kind, what another kind does and this one may
// not: publish (p) or subscribe (s) on the subject.
var refusals = map[string][]struct{ op, subject string }{
	RoleIngest: {
		// Read nothing of MEMORY: no consumer, no message, no event.
		{"p", "$JS.API.CONSUMER.CREATE.MEMORY.x"}, {"p", "$JS.API.STREAM.MSG.GET.MEMORY"},
		{"p", "$JS.API.DIRECT.GET.MEMORY"}, {"s", "mem.>"},
		// Not the others' events, services, buckets or replies.
		{"p", "mem.acme.ana.memory.extracted"}, {"p", "mem.acme.ana.episode.built"},
		{"p", "mem.acme.ana.user.forgotten"}, {"s", ServicePrefix + ".*.search"},
		{"s", ServicePrefix + ".*.digest"}, {"p", ServicePrefix + ".*.search"},
		{"p", "$KV.engram-partitions.extractor.p.0"}, {"s", "_INBOX.retriever.>"},
	},
	RoleRetriever: {
		{"p", "mem.acme.ana.memory.extracted"}, {"p", "mem.acme.ana.user.forgotten"},
		{"s", ServicePrefix + ".*.events"}, {"s", ServicePrefix + ".consolidator.*"},
		{"p", ServicePrefix + ".consolidator.run"}, {"p", "$KV.engram-partitions.extractor.p.0"},
		{"p", "$KV.engram-confirm.x"}, {"s", "_INBOX.ingest.>"},
	},
	RoleExtractor: {
		{"p", "mem.acme.ana.turn.recorded"}, {"p", "mem.acme.ana.episode.built"},
		{"s", ServicePrefix + ".*.search"}, {"s", ServicePrefix + ".*.events"},
		{"p", "$KV.engram-partitions.consolidator.p.0"}, {"p", "$KV.engram-schedule.last"},
		{"p", "$JS.API.DIRECT.GET.KV_engram-partitions.$KV.engram-partitions.consolidator.n"},
		{"s", "_INBOX.consolidator.>"},
	},
	RoleConsolidator: {
		{"s", ServicePrefix + ".*.events"}, {"s", ServicePrefix + ".*.context"},
		{"p", "$KV.engram-partitions.extractor.p.0"}, {"s", "_INBOX.extractor.>"},
		{"p", "$JS.API.DIRECT.GET.KV_engram-partitions.$KV.engram-partitions.extractor.n"},
	},
}

// testWorkerRole has worker kind role try what only the operator may
// (update MEMORY's configuration, delete a message, purge, delete the
// stream, make a stream) and what other kinds do: the server refuses each.
func testWorkerRole(t *testing.T, emb *Embedded, auth *Auth, role string) {
	w := connectAs(t, emb, auth.SeedFile(role, ""), nats.CustomInboxPrefix(InboxPrefix(role)))
	js, err := jetstream.New(w.nc)
	if err != nil {
		t.Fatal(err)
	}
	// What every kind may: MEMORY's state.
	s, err := js.Stream(t.Context(), MemoryStream)
	if err != nil {
		t.Fatalf("%s reads MEMORY's state: %v", role, err)
	}
	w.noErrors(t)
	refused := func(what, subject string, call func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		if err := call(ctx); err == nil {
			t.Fatalf("%s could %s", role, what)
		}
		w.denied(t, subject)
	}
	truncate := s.CachedInfo().Config
	truncate.MaxMsgs = 1
	refused("update MEMORY's configuration", "$JS.API.STREAM.UPDATE.MEMORY", func(ctx context.Context) error {
		_, err := js.UpdateStream(ctx, truncate)
		return err
	})
	refused("delete a message", "$JS.API.STREAM.MSG.DELETE.MEMORY", func(ctx context.Context) error {
		return s.DeleteMsg(ctx, 1)
	})
	refused("purge MEMORY", "$JS.API.STREAM.PURGE.MEMORY", func(ctx context.Context) error { return s.Purge(ctx) })
	refused("delete MEMORY", "$JS.API.STREAM.DELETE.MEMORY", func(ctx context.Context) error {
		return js.DeleteStream(ctx, MemoryStream)
	})
	refused("create a stream", "$JS.API.STREAM.CREATE.SHADOW", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SHADOW", Subjects: []string{"shadow.>"}})
		return err
	})
	for _, r := range refusals[role] {
		if r.op == "p" {
			if err := w.nc.Publish(r.subject, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		} else if _, err := w.nc.SubscribeSync(r.subject); err != nil {
			t.Fatal(err)
		}
		w.denied(t, r.subject)
	}
}
