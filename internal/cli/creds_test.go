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
	// A data dir from before each worker kind had its own seed.
	if err := os.MkdirAll(filepath.Join(dir, "nats-auth"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nats-auth", "worker.nk"), []byte("SUAOLD\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "creds", "agent", "acme", "--data-dir", dir, "--nats-conf", conf)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	seed := filepath.Join(dir, "nats-auth", "agent-acme.nk")
	wants := []string{seed, filepath.Join(dir, "nats-auth", "operator.nk"), "--inbox-prefix _INBOX.agent.acme",
		"engram.v1.acme.events", "engram streams apply", "ENGRAM_NATS_NKEY_DIR=", "worker.nk is retired"}
	for _, kind := range []string{"ingest", "retriever", "extractor", "consolidator"} {
		wants = append(wants, filepath.Join(dir, "nats-auth", kind+".nk"))
	}
	for _, want := range wants {
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
	// operator, the four worker kinds, agent-default, agent-acme; not the
	// retired worker.nk
	if got := strings.Count(string(b), "nkey:"); got != 7 {
		t.Fatalf("%d users in %s, want 7:\n%s", got, conf, b)
	}
	if strings.Contains(string(b), "# worker\n") {
		t.Fatalf("the retired worker is still a user:\n%s", b)
	}
}
