package stream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/engramhq/engram/events"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// Roles on the bus. NATS enforces them: each is a user (an nkey) with
// publish and subscribe permissions, so no process has to check them.
// Every permission is an allow-list: what a role is not granted, the
// server refuses.
const (
	// RoleOperator may do everything, streams included (engram streams,
	// rebuild, dlq, forget, the nats CLI). It alone may change a stream's
	// configuration, delete its messages, purge it or delete it.
	RoleOperator = "operator"
	// RoleIngest, RoleRetriever, RoleExtractor and RoleConsolidator are
	// engram's worker kinds, each a user of its own with the subjects and
	// JetStream API calls that kind makes (workerPermissions).
	RoleIngest       = "ingest"
	RoleRetriever    = "retriever"
	RoleExtractor    = "extractor"
	RoleConsolidator = "consolidator"
	// RoleAgent is per namespace: send input events to that namespace's
	// ingest service and ask that namespace's services, nothing else.
	RoleAgent = "agent"
)

// WorkerRoles are the worker kinds, each with its own seed file.
var WorkerRoles = []string{RoleIngest, RoleRetriever, RoleExtractor, RoleConsolidator}

// RetiredWorkerSeed is the seed every worker kind shared before each had
// its own. It is no longer a user of the bus: a process still given it is
// refused, and `engram creds` says what replaced it.
const RetiredWorkerSeed = "worker.nk"

// InboxPrefix is the inbox prefix a worker of role connects with
// (nats.CustomInboxPrefix): each kind may subscribe to its own inboxes
// only, so none reads the replies another is sent (a retriever's
// message reads, an agent's answers).
func InboxPrefix(role string) string { return "_INBOX." + role }

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
// (0700, each file 0600): operator.nk, ingest.nk, retriever.nk,
// extractor.nk, consolidator.nk and agent-<ns>.nk.
// Only public keys go to the server.
type Auth struct {
	Dir    string
	users  map[string]string // file name (without .nk) → public key
	agents map[string]string // namespace → file name
}

const seedExt = ".nk"

// EnsureAuth loads the users in dir, creating the directory and the seed
// files of the operator, each worker kind and an agent of each namespace
// that are missing. Agent seeds already in dir (made by `engram creds
// agent`) are kept and loaded too; a worker.nk left from before each kind
// had its own is not loaded.
func EnsureAuth(dir string, namespaces []string) (*Auth, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nats credentials dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nats credentials dir: %w", err)
	}
	a := &Auth{Dir: dir, users: map[string]string{}, agents: map[string]string{}}
	names := append([]string{RoleOperator}, WorkerRoles...)
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
		enc, agent := strings.CutPrefix(name, RoleAgent+"-")
		if !agent && name != RoleOperator && !slices.Contains(WorkerRoles, name) {
			continue // not a user: the retired worker.nk, say
		}
		pub, err := publicKey(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if agent {
			ns, err := DecodeToken(enc)
			if err != nil {
				return nil, fmt.Errorf("nats credentials %s: namespace: %w", e.Name(), err)
			}
			a.agents[ns] = name
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
	switch {
	case name == RoleOperator:
		return &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{">"}},
			Subscribe: &server.SubjectPermission{Allow: []string{">"}},
		}
	case slices.Contains(WorkerRoles, name):
		return workerPermissions(name)
	default: // agent-<encoded namespace>
		enc := strings.TrimPrefix(name, RoleAgent+"-")
		return &server.Permissions{
			Publish: &server.SubjectPermission{
				Allow: []string{ServicePrefix + "." + enc + ".>"},
				// The consolidator's service shares the prefix; it is the
				// operator's. A partition's forwarded HTTP API is the
				// fronts': behind it, the write API, which an agent asks
				// over HTTP with a token.
				Deny: []string{ServicePrefix + ".consolidator.>", ServicePrefix + "." + enc + ".*.http"},
			},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.agent." + enc + ".>"}},
		}
	}
}

// Subjects of the consolidator's service (engram.v1.consolidator.*): the
// retriever asks it for the confirm queue, the operator for the rest.
const consolidatorService = ServicePrefix + ".consolidator"

// Event types each worker kind publishes onto MEMORY. The consolidator's
// rules may publish any type (a rule's publish action), so it has mem.>.
var (
	// agentTypes are what agents send to ingest (HTTP and the bus input).
	agentTypes = []string{events.TypeTurnRecorded, events.TypeContextCompressing, events.TypeSessionEnded,
		events.TypeMemoryAdded, events.TypeIdentityConfirmed}
	// retrieverTypes are the write API's (a memory edited or deleted, a
	// pending memory decided, the scratchpad), the accesses it records and
	// the falls down its degradation chain; a retriever serves
	// POST /v1/events too.
	retrieverTypes = append(slices.Clone(agentTypes), events.TypeMemoryUpdated, events.TypeMemoryDeleted,
		events.TypePendingConfirmed, events.TypePendingIgnored, events.TypePendingSnoozed,
		events.TypeScratchpadUpdated, events.TypeMemoriesAccessed, events.TypeRetrievalDegraded)
	// extractorTypes are the batcher's requests, the extractor's results
	// (the memories and the parts of the days' logs) and the embedder's
	// vectors.
	extractorTypes = []string{events.TypeExtractionRequested, events.TypeMemoryExtracted,
		events.TypeExtractionFailed, events.TypeMemoryImportant, events.TypeMemoryEmbedded, events.TypeDailySummarized}
)

// workerPermissions is what worker kind role may do: its own events onto
// MEMORY, its own services, its own inboxes, and of the JetStream API
// only the calls it makes, on the streams and buckets it uses. No worker
// may create, update, purge or delete a stream or delete a message: an
// erasure (forget, retention) runs with the operator's credential. The
// ingest, which faces the internet, reads nothing of MEMORY: no consumer,
// no message get.
func workerPermissions(role string) *server.Permissions {
	api := func(calls ...string) []string {
		out := make([]string, len(calls))
		for i, c := range calls {
			out[i] = "$JS.API." + c
		}
		return out
	}
	onMemory := func(types []string) []string {
		out := make([]string, len(types))
		for i, t := range types {
			out[i] = SubjectPrefix + ".*.*." + t
		}
		return out
	}
	// Every kind reads the streams' state: readiness, the metrics, the
	// check that MEMORY is as engram set it up (CheckStreams).
	pub := api("STREAM.INFO."+MemoryStream, "STREAM.INFO."+DeadLetterStream, "CONSUMER.LIST."+MemoryStream)
	sub := []string{InboxPrefix(role) + ".>"}
	// reader is what a kind that keeps a read model or consumes MEMORY
	// needs: durable consumers of its own (their names carry the
	// instance, and a permission matches whole tokens, so any name), a
	// message read by sequence (the projector's gaps, a trigger event),
	// acknowledgements, and dead letters.
	reader := append(api("STREAM.MSG.GET."+MemoryStream, "DIRECT.GET."+MemoryStream, "DIRECT.GET."+MemoryStream+".>",
		"CONSUMER.CREATE."+MemoryStream+".>", "CONSUMER.DELETE."+MemoryStream+".*",
		"CONSUMER.INFO."+MemoryStream+".*", "CONSUMER.MSG.NEXT."+MemoryStream+".*", "CONSUMER.NAMES."+MemoryStream),
		"$JS.ACK."+MemoryStream+".>", DLQSubjectPrefix+".>")
	// bucket is a key-value bucket's keys under each of keys (">" for
	// all): puts and deletes, gets, and the watcher a key listing runs
	// (an ephemeral consumer filtered on the keys).
	bucket := func(name string, keys ...string) []string {
		stream := "KV_" + name
		out := append(api("STREAM.INFO."+stream, "CONSUMER.DELETE."+stream+".*", "CONSUMER.INFO."+stream+".*"),
			"$JS.FC."+stream+".>")
		for _, k := range keys {
			kv := "$KV." + name + "." + k
			out = append(out, kv, "$JS.API.DIRECT.GET."+stream+"."+kv, "$JS.API.CONSUMER.CREATE."+stream+".*."+kv)
		}
		return out
	}
	// service is a nats micro service's discovery subjects.
	service := func(name string) []string {
		return []string{"$SRV.*", "$SRV.*." + name, "$SRV.*." + name + ".*"}
	}
	// partitions are the endpoints of each partition of the users' read
	// model (engram.v1.<ns>.p<k>.<op>): a partitioned retriever answers
	// on them, and a front (any retriever, an ingest) asks them.
	partitions := func(ops ...string) []string {
		out := make([]string, len(ops))
		for i, op := range ops {
			out[i] = ServicePrefix + ".*.*." + op
		}
		return out
	}
	// readStates is reading, not writing, the retrievers' partition
	// states (GET /readyz?partition=k on a front).
	readStates := func() []string {
		stream, kv := "KV_"+PartitionBucket, "$KV."+PartitionBucket+"."+RoleRetriever+".s.>"
		return append(api("STREAM.INFO."+stream, "CONSUMER.DELETE."+stream+".*", "CONSUMER.INFO."+stream+".*"),
			"$JS.FC."+stream+".>", "$JS.API.DIRECT.GET."+stream+"."+kv, "$JS.API.CONSUMER.CREATE."+stream+".*."+kv)
	}
	switch role {
	case RoleIngest:
		pub = append(pub, onMemory(agentTypes)...)
		// It reads no event: a retriever tells it whether the event
		// stored under a duplicate's id says what it sent (AskDigest).
		pub = append(pub, ServicePrefix+".*.digest")
		pub = append(append(pub, partitions("http")...), readStates()...)
		sub = append(append(sub, ServicePrefix+".*.events"), service("engram-ingest")...)
	case RoleRetriever:
		pub = append(append(pub, onMemory(retrieverTypes)...), reader...)
		pub = append(pub, consolidatorService+".pending", consolidatorService+".approve", consolidatorService+".dismiss")
		sub = append(append(sub, ServicePrefix+".*.search", ServicePrefix+".*.context", ServicePrefix+".*.digest"),
			service("engram-retriever")...)
		// Partitioned: leases and states in the partition bucket, each
		// partition's endpoints, answered and asked.
		pub = append(append(pub, bucket(PartitionBucket, RoleRetriever+".>")...), partitions("search", "context", "http")...)
		sub = append(append(sub, partitions("search", "context", "http")...), service("engram-partition")...)
		// Each says it lives, and asks the others (alive.go).
		pub = append(pub, aliveSubject(RoleRetriever, "*"))
		sub = append(sub, aliveSubject(RoleRetriever, "*"))
	case RoleExtractor:
		pub = append(append(pub, onMemory(extractorTypes)...), reader...)
		pub = append(pub, bucket(PartitionBucket, RoleExtractor+".>")...)
	case RoleConsolidator:
		pub = append(append(pub, SubjectPrefix+".>"), reader...)
		// Retention is the consolidators' too, shared by partitions of its own.
		pub = append(pub, bucket(PartitionBucket, RoleConsolidator+".>", RetentionGroup+".>", CardsGroup+".>")...)
		pub = append(pub, bucket(ConfirmBucket, ">")...)
		pub = append(pub, bucket(ScheduleBucket, ">")...)
		sub = append(append(sub, consolidatorService+".*"), service("engram-consolidator")...)
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: sub},
		// A service answers whatever inbox the asker uses (an agent's
		// _INBOX.agent.<ns>.…, the operator's).
		Response: &server.ResponsePermission{MaxMsgs: 1},
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
