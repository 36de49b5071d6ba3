package httpapi

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A relayed request reaches the owner with the caller's headers, its
// token included, the mark naming the front, and no Origin; the answer
// comes back as the owner wrote it. An address that takes no connection
// is ErrNotSent, an answer cut off is not.
func TestRelay(t *testing.T) {
	var got *http.Request
	var body string
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(r.Context())
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		w.Header().Set(DegradedHeader, "partition 1 is being rebuilt")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(owner.Close)
	relay := NewRelay(time.Second)
	t.Cleanup(relay.Close)

	hdr := http.Header{"Authorization": {"Bearer token-0123456789abcdef"}, "Content-Type": {"application/json"},
		"Origin": {"http://front.example"}, "Connection": {"x-hop"}, ForwardedHeader: {"a caller"}}
	ans, err := relay.Send(t.Context(), owner.URL, "r1", Forwarded{Method: "POST", URL: "/v1/context?x=1",
		Header: hdr, Body: []byte(`{"user":"u1"}`), ByUser: true})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != http.StatusTeapot || string(ans.Body) != `{"ok":true}` || ans.Header.Get(DegradedHeader) == "" {
		t.Errorf("answer %d %q %v, want the owner's as written", ans.Status, ans.Body, ans.Header)
	}
	for k, want := range map[string]string{"Authorization": "Bearer token-0123456789abcdef", "Content-Type": "application/json",
		"Origin": "", ForwardedHeader: "r1"} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("the owner got %s %q, want %q", k, v, want)
		}
	}
	if got.URL.RequestURI() != "/v1/context?x=1" || body != `{"user":"u1"}` {
		t.Errorf("the owner got %s %q, want /v1/context?x=1 and the body", got.URL.RequestURI(), body)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	// The errors are logged and answered: they never quote the query,
	// which holds the caller's question.
	const asked = "/v1/search?user=ana&q=my+secret+diagnosis"
	_, err = relay.Send(t.Context(), dead, "r1", Forwarded{Method: "GET", URL: asked})
	if !errors.Is(err, ErrNotSent) {
		t.Errorf("to an address nothing listens on: %v, want ErrNotSent", err)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("the error quotes the request: %v", err)
	}

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close() // the owner died with the request read
		}
	}))
	t.Cleanup(cut.Close)
	_, err = relay.Send(t.Context(), cut.URL, "r1", Forwarded{Method: "POST", URL: "/v1/memories?q=my+secret+diagnosis", Body: []byte(`{}`)})
	if err == nil || errors.Is(err, ErrNotSent) {
		t.Errorf("to an owner that took the request and died: %v, want an error that is not ErrNotSent", err)
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("the error quotes the request: %v", err)
	}
}
