package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/quiet"
)

// Host names: loopback ones with any port, the configured ones, nothing
// else; "*" any.
func TestHostSet(t *testing.T) {
	h := newHostSet([]string{"Memory.Example.com", "10.0.0.5", "[fd00::1]"})
	for host, want := range map[string]bool{
		"localhost": true, "localhost:7420": true, "LOCALHOST.:1": true, "127.0.0.1:7420": true, "127.3.2.1": true,
		"[::1]:7420": true, "[::1]": true, "::1": true,
		"memory.example.com": true, "memory.example.com:443": true, "10.0.0.5:7420": true, "[fd00::1]:80": true,
		"": false, "evil.example": false, "evil.example:7420": false, "localhost.evil.example": false,
		"10.0.0.6": false, "memory.example.com.evil.example": false, "0.0.0.0:7420": false,
	} {
		if got := h.allows(host); got != want {
			t.Errorf("allows(%q) = %v, want %v", host, got, want)
		}
	}
	if !newHostSet([]string{"*"}).allows("anything:1") {
		t.Error(`"*" refuses a host`)
	}
}

// What the edge lets through and what it refuses, by method, path and
// headers, without a route behind it to tell.
func TestEdge(t *testing.T) {
	srv := httptest.NewServer((&Server{}).Handler())
	defer srv.Close()
	for _, c := range []struct {
		name, method, path, ct, body string
		hdr                          map[string]string
		want                         int
	}{
		{name: "probe, any host", method: "GET", path: "/healthz", hdr: map[string]string{"Host": "10.1.2.3:7420"}, want: 200},
		{name: "probe from another site", method: "GET", path: "/healthz", hdr: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		{name: "console, a link from elsewhere", method: "GET", path: "/console/", hdr: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 200},
		{name: "console, rebound name", method: "GET", path: "/console/", hdr: map[string]string{"Host": "evil.example"}, want: 421},
		{name: "console, no slash", method: "GET", path: "/console", hdr: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 307},
		{name: "out of the console", method: "GET", path: "/console/%2e%2e/v1/memories", hdr: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		{name: "address bar", method: "GET", path: "/openapi.json", hdr: map[string]string{"Sec-Fetch-Site": "none"}, want: 200},
		{name: "same origin, no Sec-Fetch-Site", method: "GET", path: "/openapi.json", hdr: map[string]string{"Origin": srv.URL}, want: 200},
		{name: "JSON with a charset", method: "POST", path: "/v1/context", ct: "application/json; charset=utf-8", body: "{}", want: 404},
		{name: "CloudEvents", method: "POST", path: "/v1/events", ct: "application/cloudevents-batch+json", body: "[]", want: 404},
		{name: "no body, no type", method: "POST", path: "/v1/pending/x/confirm", want: 404},
		{name: "a body with no type", method: "POST", path: "/v1/context", body: "{}", want: 415},
		{name: "text/plain, empty", method: "POST", path: "/v1/pending/x/confirm", ct: "text/plain", want: 415},
		{name: "form, empty", method: "DELETE", path: "/v1/memories/x", ct: "application/x-www-form-urlencoded", want: 415},
		{name: "not a media type", method: "POST", path: "/v1/context", ct: "json", body: "{}", want: 415},
	} {
		req, err := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.body == "" {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		if c.ct != "" {
			req.Header.Set("Content-Type", c.ct)
		}
		for k, v := range c.hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		quiet.Close(resp.Body)
		// 404: let through to a mux with no such route.
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
