package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/quiet"
)

// The console is served from the binary: /console leads to /console/,
// each file has its UTF-8 type, and the page may load scripts and styles
// from engram alone. It needs no token (it holds no data); the API does.
func TestConsoleServed(t *testing.T) {
	ts := httptest.NewServer((&Server{Tokens: map[string]string{"secret-token": "*"}}).Handler())
	defer ts.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(ts.URL + "/console")
	if err != nil {
		t.Fatal(err)
	}
	quiet.Close(resp.Body)
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/console/" {
		t.Fatalf("GET /console: %d Location %q, want a redirect to /console/", resp.StatusCode, resp.Header.Get("Location"))
	}
	for path, want := range map[string]string{
		"/console/":            "text/html; charset=utf-8",
		"/console/console.js":  "text/javascript; charset=utf-8",
		"/console/console.css": "text/css; charset=utf-8",
	} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		quiet.Close(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != want || len(body) == 0 {
			t.Errorf("GET %s: %d %q (%d bytes), want 200 %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body), want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
	}
	resp, err = http.Get(ts.URL + "/console/missing.js")
	if err != nil {
		t.Fatal(err)
	}
	quiet.Close(resp.Body)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /console/missing.js: %d, want 404", resp.StatusCode)
	}
}

// Stored text reaches the page as text: the console's script builds
// elements and sets textContent, and never parses strings as HTML.
func TestConsoleScriptSetsNoHTML(t *testing.T) {
	js, err := consoleFiles.ReadFile("console/console.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if strings.Contains(string(js), sink) {
			t.Errorf("console.js uses %s: build elements and set textContent instead", sink)
		}
	}
}
