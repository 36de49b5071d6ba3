package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engramhq/engram/internal/quiet"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Each request is logged at debug level with its method, path, status and
// duration, and never its query or body.
func TestAccessLog(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	srv := httptest.NewServer((&Server{Log: zap.New(core)}).Handler())
	defer srv.Close()
	for _, u := range []string{"/healthz", "/v1/search?user=ana&q=my+secret+plan"} {
		resp, err := http.Get(srv.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		quiet.Close(resp.Body)
	}
	entries := logs.FilterMessage("http request").All()
	if len(entries) != 2 {
		t.Fatalf("%d access log entries, want 2: %v", len(entries), logs.All())
	}
	for i, want := range []struct {
		path   string
		status int64
	}{{"/healthz", 200}, {"/v1/search", 404}} {
		e := entries[i]
		f := e.ContextMap()
		if e.Level != zapcore.DebugLevel || f["method"] != "GET" || f["path"] != want.path || f["status"] != want.status || f["duration"] == nil {
			t.Errorf("entry %d: level %v fields %v, want debug GET %s %d with a duration", i, e.Level, f, want.path, want.status)
		}
		for k, v := range f {
			if s, ok := v.(string); ok && strings.Contains(s, "secret") {
				t.Errorf("entry %d field %s logs the query: %q", i, k, s)
			}
		}
	}
}
