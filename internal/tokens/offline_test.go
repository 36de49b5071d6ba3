package tokens

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// By construction: nothing this package links can open a connection. The
// rank tables are Go source compiled into the binary; a future version of
// the dependency that fetched them (as github.com/pkoukk/tiktoken-go's
// default loader does) would have to import net, and this fails.
func TestLinksNoNetwork(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !contains(deps, "github.com/tiktoken-go/tokenizer/codec") {
		t.Fatalf("go list -deps does not list the tokenizer codec: %v", deps)
	}
	forbidden := map[string]bool{"net": true, "net/http": true, "crypto/tls": true, "os/exec": true}
	for _, dep := range deps {
		if forbidden[dep] {
			t.Errorf("internal/tokens links %s; counting must not reach the network or a process", dep)
		}
	}
}

// At run time: the first Count in a fresh process, which is when the ranks
// load, works with every HTTP request failing and proxies pointing nowhere.
func TestFirstCountOffline(t *testing.T) {
	t.Parallel()
	if os.Getenv("ENGRAM_TOKENS_OFFLINE_CHILD") == "1" {
		offlineChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFirstCountOffline$", "-test.v")
	cmd.Env = append(os.Environ(), "ENGRAM_TOKENS_OFFLINE_CHILD=1",
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=",
		"TIKTOKEN_CACHE_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "offline: ok") {
		t.Fatalf("child process: %v\n%s", err, out)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type refuseAll struct{ t *testing.T }

func (r refuseAll) RoundTrip(req *http.Request) (*http.Response, error) {
	r.t.Errorf("HTTP request to %s while counting tokens", req.URL)
	return nil, errors.New("network access is not allowed")
}

func offlineChild(t *testing.T) {
	http.DefaultTransport = refuseAll{t}
	http.DefaultClient = &http.Client{Transport: refuseAll{t}}
	for _, tt := range []struct {
		encoding string
		want     int
	}{{"o200k_base", 2}, {"cl100k_base", 2}} {
		c, err := Exact(tt.encoding)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Count("hello world"); got != tt.want {
			t.Fatalf("%s: Count(\"hello world\") = %d, want %d", tt.encoding, got, tt.want)
		}
	}
	t.Log("offline: ok")
}
