package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// A front that does not hold a user's partition sends the request over
// HTTP to the API of the instance whose copy answers for it (Relay),
// when that instance advertises where it is reached: the owner's side of
// the request is then the same as a direct one's, edge and token
// included, and one kept-alive connection carries it (docs/scale.md,
// "What routing costs"). The bus is the way when no address is known or
// no connection can be made.

// ForwardedHeader marks a request a front forwarded over HTTP; its value
// names the front. An instance that gets such a request for a partition
// it no longer answers for (the copy moved since the front looked) sends
// it on over the bus, which reaches the copy that answers now, never over
// HTTP again: no request goes round in a loop. It chooses the route and
// nothing else: a request that carries it passes the edge and the token
// check as any other, so a caller who sets it gains nothing.
const ForwardedHeader = "Engram-Forwarded-By"

// ErrNotSent says a forwarded request reached no one (no connection
// could be made to the address): sending it another way is safe.
var ErrNotSent = errors.New("forwarded request not sent")

// maxAnswerBytes bounds an answer a Relay reads into memory; the API's
// largest (a page of memories) is far below it.
const maxAnswerBytes = 64 << 20

// Relay sends forwarded requests over HTTP on kept-alive connections,
// shared by every request of the process.
type Relay struct {
	client *http.Client
	tr     *http.Transport
}

// NewRelay returns a Relay whose connections are made within dialTimeout:
// a request to an address that does not answer waits that long before it
// goes another way.
func NewRelay(dialTimeout time.Duration) *Relay {
	dialer := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		// No proxy: the instances reach each other directly.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, dialError{err}
			}
			return c, nil
		},
		// As many connections kept to one instance as the bus route lets
		// requests be answered side by side (natsapi's 64).
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		// Below the API server's own idle timeout (2 minutes), so that a
		// connection is dropped here before the owner closes it under a
		// request.
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // the caller's context bounds the answer
		// The answer's bytes go back as they came.
		DisableCompression: true,
	}
	return &Relay{client: &http.Client{Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, tr: tr}
}

// dialError is a connection that could not be made: nothing was sent.
type dialError struct{ err error }

func (e dialError) Error() string { return e.err.Error() }
func (e dialError) Unwrap() error { return e.err }

// Close drops the kept-alive connections.
func (r *Relay) Close() { r.tr.CloseIdleConnections() }

// Send sends req to the API at base (an advertised base URL) as a request
// front forwarded, with the caller's own headers (its token too), and
// returns the answer. An error that wraps ErrNotSent means nothing reached
// base. Only what net/http knows it may send again (nothing of it was
// written, or a GET, or a request with an Idempotency-Key, on a kept-alive
// connection the other end had closed) is ever sent twice.
func (r *Relay) Send(ctx context.Context, base, front string, req Forwarded) (Answer, error) {
	out, err := http.NewRequestWithContext(ctx, req.Method, base+req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return Answer{}, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	for k, v := range req.Header {
		if !hopByHop[k] {
			out.Header[k] = v
		}
	}
	// The front's edge has judged the request's Origin against the Host
	// the caller named, the front's; the owner is named by its own
	// address, which the Origin of a page on the front is not.
	out.Header.Del("Origin")
	out.Header.Set(ForwardedHeader, front)
	resp, err := r.client.Do(out)
	if err != nil {
		// Not net/http's own words, which quote the whole URL: its query
		// holds the caller's question.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		if _, ok := errors.AsType[dialError](err); ok {
			return Answer{}, fmt.Errorf("%w: %w", ErrNotSent, err)
		}
		return Answer{}, memory.Errorf(memory.EUNAVAILABLE, "forwarded to %s: %v", base, err)
	}
	defer quiet.Close(resp.Body) // read to the end or failed below
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return Answer{}, memory.Errorf(memory.EUNAVAILABLE, "forwarded to %s: reading the answer: %v", base, err)
	}
	if len(body) > maxAnswerBytes {
		return Answer{}, memory.Errorf(memory.EUNAVAILABLE, "forwarded to %s: the answer is larger than %d bytes", base, maxAnswerBytes)
	}
	hdr := resp.Header.Clone()
	for k := range hopByHop {
		delete(hdr, k)
	}
	return Answer{Status: resp.StatusCode, Header: hdr, Body: body}, nil
}

// hopByHop are the headers of one connection, not of the request or
// answer (RFC 9110 §7.6.1), and those the transport sets itself.
var hopByHop = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Content-Length": true}
