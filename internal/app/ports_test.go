package app

import (
	"errors"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/engramhq/engram/internal/quiet"
)

// holdPort keeps addr taken for the test: it listens there, or, when
// something else (a `make run` beside the tests) already does, leaves it
// to that.
func holdPort(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return
	}
	if err != nil {
		t.Fatalf("hold %s: %v", addr, err)
	}
	t.Cleanup(func() { quiet.Close(ln) })
}

// Tests never take engram's fixed ports: with 4222 and 7420 taken (as
// they are while `make run` is up), a test instance asking for port 0
// gets free ports for NATS and HTTP and works.
func TestNoFixedPorts(t *testing.T) {
	t.Parallel()
	holdPort(t, "127.0.0.1:4222")
	holdPort(t, "127.0.0.1:7420")
	cfg := testConfig(t, t.TempDir())
	cfg.NATS.Listen = "127.0.0.1:0"
	a := startApp(t, cfg, RoleAll)

	u, err := url.Parse(a.NATSURL())
	if err != nil || u.Port() == "" || u.Port() == "0" || u.Port() == "4222" {
		t.Fatalf("NATS URL %q (%v), want a free port", a.NATSURL(), err)
	}
	if _, port, _ := net.SplitHostPort(a.HTTPAddr()); port == "7420" || port == "0" {
		t.Fatalf("HTTP addr %s, want a free port", a.HTTPAddr())
	}
	r := postEvent(t, a, turnEvent("p-1", "ana", "s1", 0, "user", "hello"))
	mustAccept(t, r)
	waitProjected(t, a, lastSeqOf(r))
}
