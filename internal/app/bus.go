package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
	"go.uber.org/zap"
)

// AuthDir is where the embedded server's users are kept as nkey seeds
// (see stream.Auth): generated at first start, 0600 each.
func AuthDir(cfg config.Config) string { return filepath.Join(cfg.DataDir, "nats-auth") }

// agentNamespaces are the namespaces that get an agent user at start:
// "default" and every namespace an HTTP token is for, so that a token and
// an agent's NATS credentials cover the same namespaces.
func agentNamespaces(cfg config.Config) []string {
	set := map[string]bool{"default": true}
	for _, ns := range cfg.HTTP.Tokens {
		if ns != "*" && ns != "" {
			set[ns] = true
		}
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// connConfig is how a process reaches NATS as the user of role: the
// credentials the config names or, when it names none, role's seed in
// nats.nkey_dir (by default the data dir's nats-auth, where `engram serve`
// and `engram creds` keep them), so that `engram rules run` works beside a
// local `engram serve`, and a worker apart finds its own kind's seed.
func connConfig(cfg config.Config, name, role string) stream.ConnConfig {
	n := cfg.NATS
	cc := stream.ConnConfig{
		URL: n.URL, Name: name, Creds: n.Creds, NKey: n.NKey, Token: n.Token, User: n.User, Pass: n.Password,
		TLSCA: n.TLSCA, TLSCert: n.TLSCert, TLSKey: n.TLSKey,
	}
	if cc.Creds == "" && cc.NKey == "" && cc.Token == "" && cc.User == "" {
		if seed := roleSeed(cfg, role); fileExists(seed) {
			cc.NKey = seed
		}
	}
	return cc
}

// roleSeed is where role's seed is looked for.
func roleSeed(cfg config.Config, role string) string {
	dir := cfg.NATS.NKeyDir
	if dir == "" {
		dir = AuthDir(cfg)
	}
	return filepath.Join(dir, role+".nk")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// BusCredentials makes sure the embedded server's users exist in the
// data dir (what `engram serve` does at start) and returns them; agent,
// when not empty, adds an agent of that namespace, let in at the next
// start of the server.
func BusCredentials(cfg config.Config, agent string) (*stream.Auth, error) {
	if agent != "" {
		if _, err := stream.CreateAgent(AuthDir(cfg), agent); err != nil {
			return nil, err
		}
	}
	return stream.EnsureAuth(AuthDir(cfg), agentNamespaces(cfg))
}

// busConn is one connection to NATS as one of engram's bus users.
type busConn struct {
	role string
	nc   *stream.Conn
	js   stream.JetStream
}

// busRoles are the bus users of the worker kinds in roles, the reader of
// the read model first (the main connection: see App.nc).
func busRoles(roles Roles) []string {
	var out []string
	for _, k := range []struct {
		role Roles
		name string
	}{{RoleRetriever, stream.RoleRetriever}, {RoleExtractor, stream.RoleExtractor},
		{RoleConsolidator, stream.RoleConsolidator}, {RoleIngest, stream.RoleIngest}} {
		if roles&k.role != 0 {
			out = append(out, k.name)
		}
	}
	return out
}

// bus is the connection of bus user role: its own, or, in an operator's
// process (commands), the operator's.
func (a *App) bus(role string) *busConn {
	if c := a.conns[role]; c != nil {
		return c
	}
	if a.op != nil {
		return a.op
	}
	return a.main
}

// buckets are the key-value buckets bus user role uses.
func buckets(role string) []string {
	switch role {
	case stream.RoleExtractor:
		return []string{stream.PartitionBucket}
	case stream.RoleConsolidator:
		return []string{stream.PartitionBucket, stream.ConfirmBucket, stream.ScheduleBucket}
	}
	return nil
}

// connectBus connects as the user of role, with its own inbox prefix and
// a handler that logs what the server refuses it (a permission the role
// lacks: a bug to report, never to retry).
func (a *App) connectBus(role string, cc stream.ConnConfig, extra ...stream.ConnOption) (*busConn, error) {
	log := a.Log.Named("nats").With(zap.String("user", role))
	nc, js, err := stream.ConnectAs(role, cc, log, func() { a.denied.Add(1) }, extra...)
	if err != nil {
		if filepath.Base(cc.NKey) == stream.RetiredWorkerSeed {
			err = fmt.Errorf("%w (%s is no longer a user of the bus: each worker kind has a seed of its own, "+
				"ingest.nk, retriever.nk, extractor.nk and consolidator.nk, made by `engram creds`; for an external "+
				"server write its users again with `engram creds --nats-conf` and reload it, then give each worker "+
				"ENGRAM_NATS_NKEY_DIR=<the seeds' directory>, or ENGRAM_NATS_NKEY=<its kind's seed>)", err, cc.NKey)
		}
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	return &busConn{role: role, nc: nc, js: js}, nil
}

// openBus connects the process's bus users: one per worker kind it runs,
// each with that kind's permissions only, and the operator's when the
// process holds that credential (its embedded server's data dir, an
// operator command, nats.operator_nkey). Then it sets up the streams, as
// the operator, or, as a worker, checks that they are there.
func (a *App) openBus(ctx context.Context, extra []stream.ConnOption) error {
	embedded := a.Config.NATS.URL == ""
	operator := a.busRole == stream.RoleOperator
	if operator || embedded || a.Config.NATS.OperatorNKey != "" {
		cc := connConfig(a.Config, "engram-operator", stream.RoleOperator)
		switch {
		case embedded:
			cc = stream.ConnConfig{Name: cc.Name, NKey: filepath.Join(AuthDir(a.Config), stream.RoleOperator+".nk")}
		case !operator:
			cc.Creds, cc.NKey, cc.Token, cc.User, cc.Pass = "", a.Config.NATS.OperatorNKey, "", "", ""
		}
		c, err := a.connectBus(stream.RoleOperator, cc, extra...)
		if err != nil {
			return err
		}
		a.op = c
	}
	if !operator {
		for _, role := range busRoles(a.Roles) {
			cc := connConfig(a.Config, "engram-"+role, role)
			if embedded {
				// The embedded server's users are the data dir's.
				cc = stream.ConnConfig{Name: cc.Name, NKey: filepath.Join(AuthDir(a.Config), role+".nk")}
			}
			c, err := a.connectBus(role, cc, extra...)
			if err != nil {
				return err
			}
			a.conns[role] = c
			a.order = append(a.order, c)
		}
	}
	if a.op != nil {
		a.order = append(a.order, a.op)
	}
	a.main = a.order[0]
	a.nc, a.js = a.main.nc, a.main.js
	return a.setupStreams(ctx, embedded, operator)
}

// setupStreams, as engram serve (the operator of its embedded server),
// creates the streams and buckets and applies the config's settings,
// leaving a difference that loses events for the drift check to report;
// as an operator command it changes nothing (but creates what is missing
// for one that fills a new store: import); as a worker it may do
// neither, and checks that they are there. It asks
// again for up to 30 s: on a cluster that has just formed, or when several
// workers start at once, a JetStream API request can go unanswered.
func (a *App) setupStreams(ctx context.Context, embedded, operator bool) error {
	cfg := a.streamsConfig()
	step := func(ctx context.Context) error {
		switch {
		case operator && a.createStreams:
			_, err := stream.SetupStreams(ctx, a.op.js, cfg, stream.CreateMissing)
			return err
		case operator:
			return nil
		case embedded:
			reps, err := stream.SetupStreams(ctx, a.op.js, cfg, stream.ApplySettings)
			for _, r := range reps {
				if len(r.Changed) > 0 {
					a.Log.Info("stream settings applied from the config", zap.String("stream", r.Name),
						zap.Stringers("changed", r.Changed))
				}
			}
			return err
		}
		for _, role := range busRoles(a.Roles) {
			bs := buckets(role)
			if role == stream.RoleRetriever && a.partitionedReads() {
				bs = append(bs, stream.PartitionBucket)
			}
			if err := stream.RequireStreams(ctx, a.conns[role].js, bs...); err != nil {
				return fmt.Errorf("%s: %w", role, err)
			}
		}
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := step(actx)
		cancel()
		if err == nil || errors.Is(err, stream.ErrNotSetUp) || ctx.Err() != nil || time.Now().After(deadline) {
			if err != nil {
				return err
			}
			break
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
	if a.Roles&(RoleExtractor|RoleConsolidator) != 0 || a.partitionedReads() {
		// The partition bucket's TTL, the operator's, is how long a lease
		// lives; the batcher's ack wait follows it, and a partitioned
		// retriever's rounds.
		js := a.bus(stream.RoleExtractor).js
		switch {
		case a.Roles&RoleExtractor != 0:
		case a.Roles&RoleConsolidator != 0:
			js = a.bus(stream.RoleConsolidator).js
		default:
			js = a.bus(stream.RoleRetriever).js
		}
		ttl, err := stream.LeaseTTL(ctx, js)
		if err != nil {
			return err
		}
		a.leaseTTL = ttl
	}
	return nil
}

// streamsConfig is the streams and buckets as this process's config
// sizes them.
func (a *App) streamsConfig() stream.StreamsConfig {
	c := streamsConfigOf(a.Config)
	c.LeaseTTL = a.leaseTTL
	return c
}

// closeBus drains every connection, the workers' first.
func (a *App) closeBus(ctx context.Context) []error {
	var errs []error
	for _, c := range a.order {
		if err := stream.Drain(c.nc); err != nil {
			errs = append(errs, fmt.Errorf("drain nats (%s): %w", c.role, err))
		}
	}
	for _, c := range a.order {
		for c.nc.IsDraining() && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		c.nc.Close()
	}
	return errs
}

// busConnected reports the first bus user whose connection is down.
func (a *App) busConnected() error {
	if len(a.order) == 0 {
		return errors.New("nats not connected")
	}
	var down []string
	for _, c := range a.order {
		if !c.nc.IsConnected() {
			down = append(down, c.role)
		}
	}
	if len(down) > 0 {
		return fmt.Errorf("nats not connected (%s)", strings.Join(down, ", "))
	}
	return nil
}
