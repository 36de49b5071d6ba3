package httpapi

import (
	"io"
	"mime"
	"net"
	"net/http"
	"path"
	"strings"

	"github.com/engramhq/engram/internal/memory"
)

// Edge-only error codes of the checks below.
const (
	// EUNKNOWNHOST: the Host header names a server engram is not.
	EUNKNOWNHOST = "unknown_host"
	// ECROSSSITE: the request comes from a web page of another site.
	ECROSSSITE = "cross_site"
)

// edge refuses, before any route runs, what a web page could send in its
// visitor's name. engram on loopback with no tokens (make run) trusts
// whatever reaches it, and a browser reaches it from any page it opens.
// Three checks, in this order:
//
//  1. Host must be a name engram answers to (hostSet). A page that
//     rebinds its own name to 127.0.0.1 is the same origin as engram to
//     the browser, so it may read every answer; only the Host it sends,
//     its own name, gives it away. The probes (/healthz, /readyz,
//     /metrics) answer any Host: orchestrators call them by the pod's
//     address, and they hold no memory and change nothing.
//  2. Nothing from another site, reads included: net/http's
//     CrossOriginProtection (Sec-Fetch-Site, else Origin against Host).
//     A read is not free of effects here (search and context count
//     accesses), and no page of another site has a reason to call
//     engram. The console's files are exempt for GET: they hold no data,
//     and a person may follow a link to them from anywhere.
//  3. A body must be JSON or CloudEvents. Forms and text/plain are what a
//     page may send without the browser asking engram first, and a
//     browser that sends no Sec-Fetch-Site and no Origin (an old one, or
//     a plugin) is still held by this.
//
// Requests made in process (the bus's ingest, MCP's tools) do not come
// through here: they were checked as the request that caused them.
func (s *Server) edge(next http.Handler) http.Handler {
	hosts := newHostSet(s.AllowedHosts)
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		safe := r.Method == http.MethodGet || r.Method == http.MethodHead
		if !(safe && probes[r.URL.Path]) && !hosts.allows(r.Host) {
			refuse(w, r, memory.Errorf(EUNKNOWNHOST, "host %.100q is not one engram answers to: it answers loopback names, "+
				"the host of http.addr and those of http.allowed_hosts (ENGRAM_HTTP_ALLOWED_HOSTS); add this one there to serve it", r.Host))
			return
		}
		if !(safe && consoleFile(r.URL.Path)) {
			if err := crossSite(cop, r); err != nil {
				refuse(w, r, err)
				return
			}
		}
		if err := checkContentType(r); err != nil {
			refuse(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// probes are the routes that answer any Host, by their exact path.
var probes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// consoleFile reports whether p is under /console/ once cleaned, as the
// mux will see it: /console/../v1/memories is not.
func consoleFile(p string) bool {
	c := path.Clean(p)
	return c == "/console" || strings.HasPrefix(c, "/console/")
}

// crossSite applies CrossOriginProtection to every method. It lets GET,
// HEAD and OPTIONS through, as methods that should change nothing; here
// they are checked as a POST would be.
func crossSite(cop *http.CrossOriginProtection, r *http.Request) error {
	as := r
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		as = r.WithContext(r.Context()) // a shallow copy
		as.Method = http.MethodPost
	}
	if cop.Check(as) == nil {
		return nil
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return memory.Errorf(ECROSSSITE, "the browser says this request comes from another site (Sec-Fetch-Site: %.40s): "+
			"engram answers its own pages and programs, never a page of another site", site)
	}
	return memory.Errorf(ECROSSSITE, "Origin %.100q is not this server (Host %.100q): engram answers its own pages and "+
		"programs, never a page of another site", r.Header.Get("Origin"), r.Host)
}

// checkContentType refuses a body that is neither JSON nor CloudEvents
// (which are JSON) on a method that may change something.
func checkContentType(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return nil // no body: a DELETE, a confirm
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && isJSON(mt) {
		return nil
	}
	return memory.Errorf(EUNSUPPORTED, "content type %.100q: a body is sent as application/json (or, to /v1/events, "+
		"application/cloudevents+json or application/cloudevents-batch+json); forms and text/plain are refused, "+
		"since any web page can send them", ct)
}

// isJSON reports whether mt is application/json or a JSON-based
// application/*+json type, as the CloudEvents ones are.
func isJSON(mt string) bool {
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// refuse answers err without running the route, having read what the
// client sent (discardBody).
func refuse(w http.ResponseWriter, r *http.Request, err error) {
	discardBody(r, false)
	writeError(w, err)
}

// discardBody reads and drops what is left of r's body before an error
// answer. A server that closes a connection with unread bytes in it makes
// the kernel reset the connection, and a client that sends its whole body
// before it reads the answer (Python's urllib, curl for small bodies)
// then sees a broken connection where a 413 or 415 was written. The
// server's ReadTimeout bounds how long this reads. A client that sent
// Expect: 100-continue has sent no body and waits to be told to: unless
// reading has begun (started), which told it, there is nothing to read.
func discardBody(r *http.Request, started bool) {
	if r.Body == nil || r.ContentLength == 0 {
		return
	}
	if !started && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
}

// hostSet is the Host names engram answers to: loopback ones always, and
// those an operator configured ("*": any).
type hostSet struct {
	any   bool
	names map[string]bool
}

func newHostSet(allowed []string) hostSet {
	h := hostSet{names: map[string]bool{}}
	for _, a := range allowed {
		if a == "*" {
			h.any = true
			continue
		}
		h.names[hostName(a)] = true
	}
	return h
}

// allows reports whether a Host header (a name or address, with or
// without a port) is one engram answers to. The port does not matter: a
// page cannot choose the name it is served under, only its own.
func (h hostSet) allows(host string) bool {
	if host == "" {
		return false
	}
	if h.any {
		return true
	}
	name := hostName(host)
	if name == "localhost" {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	return h.names[name]
}

// hostName is the name of a Host header, lower case, without port,
// brackets or a final dot.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}
