package stream

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// ConnConfig says how to reach an external NATS server.
type ConnConfig struct {
	URL   string // nats://host:4222[,nats://…]
	Name  string // client name shown by `nats server report connections`
	Creds string // path to a .creds file (JWT + nkey)
	NKey  string // path to an nkey seed file
	Token string
	User  string
	Pass  string
	// TLS: a CA to trust and, for mutual TLS, a client certificate.
	TLSCA   string
	TLSCert string
	TLSKey  string
}

// Connect connects to NATS with cfg and any extra options (for example
// the embedded server's in-process option). It reconnects forever: a worker
// outlives a restart of its NATS server.
func Connect(cfg ConnConfig, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
	}
	if cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if cfg.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NKey)
		if err != nil {
			return nil, fmt.Errorf("nats nkey %s: %w", cfg.NKey, err)
		}
		opts = append(opts, o)
	}
	if cfg.Token != "" {
		opts = append(opts, nats.Token(cfg.Token))
	}
	if cfg.User != "" {
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Pass))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	opts = append(opts, extra...)
	url := cfg.URL
	if url == "" {
		url = nats.DefaultURL
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to nats: %w", err)
	}
	return nc, nil
}

// ConnectAs connects as bus user role, with its own inbox prefix
// (InboxPrefix), and returns the connection with its JetStream. What the
// server refuses the connection is logged, each permission violation
// once, and counted by denied: a permission the role lacks is a bug to
// report, never to retry.
func ConnectAs(role string, cfg ConnConfig, log *zap.Logger, denied func(), extra ...nats.Option) (*nats.Conn, jetstream.JetStream, error) {
	var seen sync.Map
	opts := append([]nats.Option{
		nats.CustomInboxPrefix(InboxPrefix(role)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				denied()
				if _, again := seen.LoadOrStore(err.Error(), true); again {
					return
				}
			}
			log.Error("nats refused", zap.Error(err))
		}),
	}, extra...)
	nc, err := Connect(cfg, opts...)
	if err != nil {
		return nil, nil, err
	}
	js, err := NewJetStream(nc, PublishAckTimeout)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// Drain drains nc; one closed already is drained.
func Drain(nc *nats.Conn) error {
	if err := nc.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return err
	}
	return nil
}
