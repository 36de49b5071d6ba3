package stream

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
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
