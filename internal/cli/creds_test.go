package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// engram creds makes the users, prints how to use them, adds an agent and
// writes the nats-server config block.
func TestCreds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "auth.conf")
	out, errOut, code := run(t, "creds", "agent", "acme", "--data-dir", dir, "--nats-conf", conf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	seed := filepath.Join(dir, "nats-auth", "agent-acme.nk")
	for _, want := range []string{seed, filepath.Join(dir, "nats-auth", "operator.nk"), "--inbox-prefix _INBOX.agent.acme", "engram.v1.acme.events"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	st, err := os.Stat(seed)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s mode %v, want 0600", seed, st.Mode().Perm())
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	// operator, worker, agent-default, agent-acme
	if got := strings.Count(string(b), "nkey:"); got != 4 {
		t.Fatalf("%d users in %s, want 4:\n%s", got, conf, b)
	}
}
