package app

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/stream"
	"github.com/nats-io/nats.go/jetstream"
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

// connConfig is how a process of role reaches NATS: the credentials the
// config names or, when it names none, role's seed in the data dir (so
// `engram rules run` works beside a local `engram serve` with no setup).
func connConfig(cfg config.Config, name, role string) stream.ConnConfig {
	n := cfg.NATS
	cc := stream.ConnConfig{
		URL: n.URL, Name: name, Creds: n.Creds, NKey: n.NKey, Token: n.Token, User: n.User, Pass: n.Password,
		TLSCA: n.TLSCA, TLSCert: n.TLSCert, TLSKey: n.TLSKey,
	}
	if cc.Creds == "" && cc.NKey == "" && cc.Token == "" && cc.User == "" {
		seed := filepath.Join(AuthDir(cfg), role+".nk")
		if _, err := os.Stat(seed); err == nil {
			cc.NKey = seed
		}
	}
	return cc
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

// ensureStreams creates or updates the streams, asking again for up to
// 30 s: on a cluster that has just formed, or when several workers start
// at once, a JetStream API request can go unanswered.
func ensureStreams(ctx context.Context, js jetstream.JetStream, cfg stream.StreamsConfig) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := stream.EnsureStreams(actx, js, cfg)
		cancel()
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}
