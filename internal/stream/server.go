package stream

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Sync says when JetStream fsyncs its files.
//
// "always" fsyncs every write before the publish is acknowledged: an
// acknowledged event survives power loss. A duration ("1s", "2m") fsyncs
// on that interval: acknowledged writes sit in the OS page cache until then,
// so they survive a crash of engram but a power failure or kernel panic can
// lose up to that interval. nats-server's own default is 2m.
type Sync string

// DefaultSync is engram's choice; docs/operations.md ("Durability") explains it.
const DefaultSync Sync = "always"

// Validate reports a Sync that is neither "always" nor a positive duration.
func (s Sync) Validate() error {
	_, _, err := s.parse()
	return err
}

func (s Sync) parse() (always bool, interval time.Duration, err error) {
	if s == "" || s == "always" {
		return true, 0, nil
	}
	d, err := time.ParseDuration(string(s))
	if err != nil || d <= 0 {
		return false, 0, fmt.Errorf("sync %q: want \"always\" or a positive duration such as 1s", string(s))
	}
	return false, d, nil
}

// EmbeddedConfig configures the in-process nats-server.
type EmbeddedConfig struct {
	// StoreDir holds JetStream's files.
	StoreDir string
	// Listen is host:port for outside clients (the nats CLI, agents);
	// empty means in-process connections only; port 0 is any free port.
	Listen string
	// Sync is the fsync policy.
	Sync Sync
	// MaxPayload bounds one message; it must exceed the largest event.
	MaxPayload int32
	// Auth, when set, is the only way in: every client, in-process ones
	// too, connects as one of its users and gets that role's permissions.
	Auth *Auth
}

// Embedded is a running in-process nats-server with JetStream.
type Embedded struct {
	srv      *server.Server
	storeDir string
	always   bool
	interval time.Duration
}

// StartEmbedded starts the server and waits until it accepts connections.
func StartEmbedded(cfg EmbeddedConfig) (*Embedded, error) {
	always, interval, err := cfg.Sync.parse()
	if err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName:   "engram",
		JetStream:    true,
		StoreDir:     filepath.Clean(cfg.StoreDir),
		SyncAlways:   always,
		SyncInterval: interval,
		MaxPayload:   cfg.MaxPayload,
		NoSigs:       true,
		NoLog:        true,
	}
	if opts.MaxPayload == 0 {
		opts.MaxPayload = 8 << 20
	}
	if cfg.Listen == "" {
		opts.DontListen = true
	} else {
		host, port, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("nats listen %q: %w", cfg.Listen, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("nats listen %q: port: %w", cfg.Listen, err)
		}
		// nats-server reads port 0 as its default, 4222; a random free
		// port is RANDOM_PORT. Port 0 means "any free port" everywhere else
		// (net.Listen, engram's HTTP address), so it does here too.
		if p == 0 {
			p = server.RANDOM_PORT
		}
		opts.Host, opts.Port = host, p
	}
	if cfg.Auth != nil {
		opts.Nkeys = cfg.Auth.nkeyUsers()
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("create embedded nats: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded nats not ready after 30s (is %s in use?)", cfg.Listen)
	}
	return &Embedded{srv: srv, storeDir: opts.StoreDir, always: always, interval: interval}, nil
}

// ConnectOption returns the option that connects a client in-process.
func (e *Embedded) ConnectOption() nats.Option { return nats.InProcessServer(e.srv) }

// ClientURL is the URL outside clients use; empty when not listening.
func (e *Embedded) ClientURL() string {
	if e.srv.Addr() == nil {
		return ""
	}
	return e.srv.ClientURL()
}

// Shutdown stops the server and waits until it has.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// JetStreamEnabled reports whether JetStream runs. nats-server turns it off
// on a permission error in the store, and does not turn it on again by
// itself.
func (e *Embedded) JetStreamEnabled() bool { return e.srv.JetStreamEnabled() }

// StoreHealth is nil while JetStream can store, else why not: JetStream
// is off, or a stream met a write error. A write error (a full disk:
// "no space left on device") sticks to the stream until JetStream loads
// it again, however much room there is since; and the server does not
// answer the publishes it cannot store, so they time out.
func (e *Embedded) StoreHealth() error {
	if !e.srv.JetStreamEnabled() {
		return errors.New("jetstream is off")
	}
	var bad []string
	for _, h := range e.srv.Healthz(&server.HealthzOptions{Details: true}).Errors {
		// Only write errors: the server's health also reports a stream
		// being created, whose directory is there before the stream is,
		// as one that "could not be recovered".
		if h.Type == server.HealthzErrorStream && strings.Contains(h.Error, "write error") {
			bad = append(bad, h.Error)
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// StoreDir is where JetStream keeps its files.
func (e *Embedded) StoreDir() string { return e.storeDir }

// RestartJetStream stops JetStream, when it runs, and starts it again on
// the same store: every stream and consumer is loaded again from its
// files, without the write errors they had met. Clients keep their
// connections; a consumer's pull lost meanwhile is asked again when its
// heartbeat is missed.
func (e *Embedded) RestartJetStream() error {
	if e.srv.JetStreamEnabled() {
		if err := e.srv.ShutdownJetStream(); err != nil {
			return fmt.Errorf("stop jetstream: %w", err)
		}
	}
	if err := e.srv.EnableJetStream(&server.JetStreamConfig{StoreDir: e.storeDir, SyncAlways: e.always, SyncInterval: e.interval}); err != nil {
		return fmt.Errorf("start jetstream: %w", err)
	}
	return nil
}

// StopJetStream turns JetStream off as a full disk does; for tests of
// what follows.
func (e *Embedded) StopJetStream() error { return e.srv.ShutdownJetStream() }
