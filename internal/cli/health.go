package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/engramhq/engram/internal/quiet"
)

// health asks a running engram's probe and exits 0 when it answers ok. It
// is the container image's HEALTHCHECK: the image has no curl, and a
// check that needs no shell runs in an image that has none.
func health(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("ENGRAM_HTTP_ADDR", "127.0.0.1:7420"), "engram HTTP address (env ENGRAM_HTTP_ADDR)")
	ready := fs.Bool("ready", false, "ask /readyz (caught up with the stream) rather than /healthz (alive)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: engram health [--addr HOST:PORT] [--ready] [--timeout D]")
		return 2
	}
	target := *addr
	if host, port, err := net.SplitHostPort(target); err == nil {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			// engram listens on every interface (the image does): ask it
			// on this machine's loopback.
			target = net.JoinHostPort("127.0.0.1", port)
		}
	}
	probe, state := "/healthz", "live"
	if *ready {
		probe, state = "/readyz", "ready"
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+target+probe, nil)
	if err != nil {
		fmt.Fprintf(stderr, "engram health: %v\n", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "engram health: %s: %v\n", target, err)
		return 1
	}
	defer quiet.Close(resp.Body)
	var body struct{ Status, Reason string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		fmt.Fprintf(stderr, "engram health: %s%s answered %s, not JSON: %v\n", target, probe, resp.Status, err)
		return 1
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "engram health: %s is not %s: %s\n", target, state, body.Reason)
		return 1
	}
	fmt.Fprintf(stdout, "ok: %s is %s\n", target, state)
	return 0
}
