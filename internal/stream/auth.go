package stream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Roles on the bus. NATS enforces them: each is a user (an nkey) with
// publish and subscribe permissions, so no process has to check them.
const (
	// RoleOperator may do everything, streams included (engram rebuild,
	// dlq, rules run, the nats CLI).
	RoleOperator = "operator"
	// RoleWorker is what engram's workers need: events and dead letters,
	// the JetStream API except deleting or purging a stream, the services.
	RoleWorker = "worker"
	// RoleAgent is per namespace: send input events to that namespace's
	// ingest service and ask that namespace's services, nothing else.
	RoleAgent = "agent"
)

// AgentInboxPrefix is the inbox prefix an agent of namespace must connect
// with (nats.CustomInboxPrefix, or `nats --inbox-prefix`): an agent may
// subscribe to its own inboxes only, so it cannot read other replies.
func AgentInboxPrefix(namespace string) string {
	return "_INBOX.agent." + EncodeToken(namespace)
}

// InputSubject is where an agent of namespace sends events: ingest
// validates each and stores it in MEMORY, replying after JetStream's ack.
func InputSubject(namespace string) string {
	return ServicePrefix + "." + EncodeToken(namespace) + ".events"
}

// ServicePrefix starts engram's request-reply subjects:
// engram.v1.<namespace>.<service>.
const ServicePrefix = "engram.v1"

// Auth is the set of bus users kept as nkey seed files in one directory
// (0700, each file 0600): operator.nk, worker.nk and agent-<ns>.nk.
// Only public keys go to the server.
type Auth struct {
	Dir    string
	users  map[string]string // file name (without .nk) → public key
	agents map[string]string // namespace → file name
}

const seedExt = ".nk"

// EnsureAuth loads the users in dir, creating the directory and the seed
// files of the operator, the worker and an agent of each namespace that
// are missing. Agent seeds already in dir (made by `engram creds agent`)
// are kept and loaded too.
func EnsureAuth(dir string, namespaces []string) (*Auth, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nats credentials dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nats credentials dir: %w", err)
	}
	a := &Auth{Dir: dir, users: map[string]string{}, agents: map[string]string{}}
	names := []string{RoleOperator, RoleWorker}
	for _, ns := range namespaces {
		names = append(names, agentFile(ns))
	}
	for _, name := range names {
		if err := ensureSeed(filepath.Join(dir, name+seedExt)); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("nats credentials dir: %w", err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), seedExt)
		if !ok || e.IsDir() {
			continue
		}
		pub, err := publicKey(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if enc, ok := strings.CutPrefix(name, RoleAgent+"-"); ok {
			ns, err := DecodeToken(enc)
			if err != nil {
				return nil, fmt.Errorf("nats credentials %s: namespace: %w", e.Name(), err)
			}
			a.agents[ns] = name
		} else if name != RoleOperator && name != RoleWorker {
			continue
		}
		a.users[name] = pub
	}
	return a, nil
}

func agentFile(namespace string) string { return RoleAgent + "-" + EncodeToken(namespace) }

// SeedFile is the path of role's seed file; namespace names an agent's.
func (a *Auth) SeedFile(role, namespace string) string {
	if role == RoleAgent {
		return filepath.Join(a.Dir, agentFile(namespace)+seedExt)
	}
	return filepath.Join(a.Dir, role+seedExt)
}

// Namespaces lists the namespaces that have an agent, sorted.
func (a *Auth) Namespaces() []string {
	out := make([]string, 0, len(a.agents))
	for ns := range a.agents {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// CreateAgent writes the seed of an agent of namespace into dir unless it
// exists, and returns its path. A running embedded server learns of it at
// its next start.
func CreateAgent(dir, namespace string) (string, error) {
	if namespace == "" {
		return "", errors.New("agent credentials: namespace is empty")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("nats credentials dir: %w", err)
	}
	path := filepath.Join(dir, agentFile(namespace)+seedExt)
	return path, ensureSeed(path)
}

// ensureSeed creates a user seed at path (0600) unless one is there.
func ensureSeed(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("nats credentials %s: %w", path, err)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return fmt.Errorf("create nkey: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return fmt.Errorf("create nkey: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil // another process made it first
	}
	if err != nil {
		return fmt.Errorf("nats credentials %s: %w", path, err)
	}
	_, werr := f.Write(append(seed, '\n'))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("nats credentials %s: %w", path, err)
	}
	return nil
}

func publicKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("nats credentials: %w", err)
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(b))))
	if err != nil {
		return "", fmt.Errorf("nats credentials %s: not an nkey seed: %w", path, err)
	}
	defer kp.Wipe()
	return kp.PublicKey()
}

// permissions is each role's grant. Users live in the global account:
// the JetStream store of an existing data dir belongs to it.
func permissions(name string) *server.Permissions {
	switch name {
	case RoleOperator:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{">"}},
			Subscribe: &server.SubjectPermission{Allow: []string{">"}},
		}
	case RoleWorker:
		return &server.Permissions{
			Publish: &server.SubjectPermission{
				Allow: []string{SubjectPrefix + ".>", DLQSubjectPrefix + ".>", "$JS.API.>", "$JS.ACK.>", "$JS.FC.>",
					"_INBOX.>", "$SRV.>", ServicePrefix + ".>", "$KV.engram-schedule.>", "$KV.engram-confirm.>", "$KV." + PartitionBucket + ".>"},
				Deny: []string{"$JS.API.STREAM.DELETE.>", "$JS.API.STREAM.PURGE.>"},
			},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", "$SRV.>", ServicePrefix + ".>"}},
			// Replies go to whatever inbox the asker uses (an agent's
			// _INBOX.agent.<ns>.…).
			Response: &server.ResponsePermission{MaxMsgs: 1},
		}
	default: // agent-<encoded namespace>
		enc := strings.TrimPrefix(name, RoleAgent+"-")
		return &server.Permissions{
			Publish: &server.SubjectPermission{
				Allow: []string{ServicePrefix + "." + enc + ".>"},
				// The consolidator's service shares the prefix; it is the operator's.
				Deny: []string{ServicePrefix + ".consolidator.>"},
			},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.agent." + enc + ".>"}},
		}
	}
}

// nkeyUsers is what the embedded server is told.
func (a *Auth) nkeyUsers() []*server.NkeyUser {
	names := a.names()
	out := make([]*server.NkeyUser, 0, len(names))
	for _, name := range names {
		out = append(out, &server.NkeyUser{Nkey: a.users[name], Permissions: permissions(name)})
	}
	return out
}

func (a *Auth) names() []string {
	names := make([]string, 0, len(a.users))
	for name := range a.users {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ServerConfig is the users as a nats-server configuration block, to
// include from the config of an external server or cluster (deploy/): the
// same users and permissions as the embedded server's, public keys only.
func (a *Auth) ServerConfig() string {
	var b strings.Builder
	b.WriteString("# engram's NATS users (engram creds --nats-conf); public keys only.\nauthorization {\n  users = [\n")
	list := func(xs []string) string {
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = strconv.Quote(x)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	for _, name := range a.names() {
		p := permissions(name)
		fmt.Fprintf(&b, "    # %s\n    { nkey: %q, permissions: {\n", name, a.users[name])
		fmt.Fprintf(&b, "        publish: { allow: %s", list(p.Publish.Allow))
		if len(p.Publish.Deny) > 0 {
			fmt.Fprintf(&b, ", deny: %s", list(p.Publish.Deny))
		}
		fmt.Fprintf(&b, " }\n        subscribe: { allow: %s }\n", list(p.Subscribe.Allow))
		if p.Response != nil {
			fmt.Fprintf(&b, "        allow_responses: { max: %d }\n", p.Response.MaxMsgs)
		}
		b.WriteString("    } }\n")
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}
