package stream

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/quiet"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RateStream is a stream of its own, on a server (or cluster) of its own,
// for benchmarks to measure JetStream's own acknowledged rate: the bound
// of ingest under a durability policy, which engram's ingest is held
// against. Events are published to it straight, each with a dedup id, with
// async acks.
type RateStream struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	stop func()
	n    int
}

// OpenRateStream starts an embedded server of its own with sync policy,
// or, with a cluster, uses that cluster (as its operator) and keeps the
// stream on replicas nodes.
func OpenRateStream(ctx context.Context, sync Sync, c *Cluster, replicas int) (*RateStream, error) {
	r := &RateStream{}
	var err error
	if c == nil {
		// err is the function's: the connect below must reach the check
		// after this branch.
		var dir string
		if dir, err = os.MkdirTemp("", "engram-jsrate-"); err != nil {
			return nil, err
		}
		var emb *Embedded
		if emb, err = StartEmbedded(EmbeddedConfig{StoreDir: dir, Sync: sync}); err != nil {
			quiet.RemoveAll(dir)
			return nil, err
		}
		r.stop = func() { emb.Shutdown(); quiet.RemoveAll(dir) }
		r.nc, err = nats.Connect("", emb.ConnectOption())
	} else {
		r.stop = func() {}
		r.nc, err = Connect(ConnConfig{URL: c.URL(), Name: "jsrate", NKey: c.Auth.SeedFile(RoleOperator, "")})
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	if r.js, err = NewJetStream(r.nc, PublishAckTimeout); err != nil {
		r.Close()
		return nil, err
	}
	if _, err := r.js.CreateStream(ctx, jetstream.StreamConfig{Name: "RATE", Subjects: []string{"rate.>"},
		Storage: jetstream.FileStorage, Duplicates: time.Hour, Replicas: max(replicas, 1)}); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Publish publishes msgs and returns how long until the last ack was in.
func (r *RateStream) Publish(ctx context.Context, msgs [][]byte) (time.Duration, error) {
	start := time.Now()
	for _, m := range msgs {
		r.n++
		if _, err := r.js.PublishAsync("rate.events", m, jetstream.WithMsgID(fmt.Sprintf("rate/%d", r.n)),
			jetstream.WithStallWait(time.Minute)); err != nil {
			return 0, err
		}
	}
	select {
	case <-r.js.PublishAsyncComplete():
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return time.Since(start), nil
}

// Close deletes nothing on a cluster (it goes with it) and stops the
// server of its own.
func (r *RateStream) Close() {
	if r.nc != nil {
		r.nc.Close()
	}
	if r.stop != nil {
		r.stop()
	}
}

// PublishRate measures JetStream's own acknowledged rate for msgs on a
// fresh server of its own with sync policy, in events per second.
func PublishRate(ctx context.Context, sync Sync, msgs [][]byte) (float64, error) {
	r, err := OpenRateStream(ctx, sync, nil, 1)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	d, err := r.Publish(ctx, msgs)
	if err != nil {
		return 0, err
	}
	return float64(len(msgs)) / d.Seconds(), nil
}

// Cluster is nats-server nodes with JetStream routed to each other on
// loopback, in this process, with engram's users (Auth): the three-node
// cluster of deploy/cluster for benchmarks, without leaving the process.
type Cluster struct {
	Auth    *Auth
	servers []*server.Server
}

// StartCluster starts n nodes under dir with sync policy and waits until
// JetStream has a meta leader.
func StartCluster(dir string, n int, sync Sync) (*Cluster, error) {
	always, interval, err := sync.parse()
	if err != nil {
		return nil, err
	}
	auth, err := EnsureAuth(filepath.Join(dir, "auth"), []string{"default"})
	if err != nil {
		return nil, err
	}
	ports := make([]int, 2*n) // client ports, then route ports
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		quiet.Close(l) // only to learn a free port: the routes must name them before any node starts
	}
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[n+i]))
	}
	c := &Cluster{Auth: auth}
	for i := range n {
		opts := &server.Options{
			ServerName: fmt.Sprintf("engram-n%d", i+1), Host: "127.0.0.1", Port: ports[i],
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			SyncAlways: always, SyncInterval: interval, MaxPayload: 8 << 20, NoSigs: true, NoLog: true,
			Nkeys:   auth.nkeyUsers(),
			Cluster: server.ClusterOpts{Name: "engram", Host: "127.0.0.1", Port: ports[n+i]},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		}
		srv, err := server.NewServer(opts)
		if err != nil {
			c.Shutdown()
			return nil, fmt.Errorf("cluster node %d: %w", i+1, err)
		}
		srv.Start()
		c.servers = append(c.servers, srv)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, srv := range c.servers {
		if !srv.ReadyForConnections(time.Until(deadline)) {
			c.Shutdown()
			return nil, fmt.Errorf("cluster node %s not ready", srv.Name())
		}
	}
	for !c.metaReady() {
		if time.Now().After(deadline) {
			c.Shutdown()
			return nil, fmt.Errorf("cluster: no JetStream meta leader after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c, nil
}

// metaReady reports whether the nodes have elected a meta leader.
func (c *Cluster) metaReady() bool {
	for _, s := range c.servers {
		if s.JetStreamIsLeader() {
			return true
		}
	}
	return false
}

// URL lists the nodes' client URLs, comma-separated.
func (c *Cluster) URL() string {
	var urls []string
	for _, s := range c.servers {
		urls = append(urls, s.ClientURL())
	}
	return strings.Join(urls, ",")
}

// Shutdown stops every node.
func (c *Cluster) Shutdown() {
	for _, s := range c.servers {
		s.Shutdown()
	}
}
