package clustertest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/cli"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/quiet"
	"github.com/engramhq/engram/internal/sqlite"
	"github.com/engramhq/engram/internal/stream"
	"github.com/engramhq/engram/internal/wait"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap/zaptest"
)

// topology is how many instances of each worker a cluster runs, and over
// how many partitions of the users (ENGRAM_PARTITIONS). Ingests multiply
// freely; extractors, consolidators and retrievers share the work by
// partitions, and every check below (each turn in one extraction, each
// job firing run once, each partition's copy equal to the single binary's
// rows of its users) is written to hold for any count.
type topology struct {
	ingests, retrievers, extractors, consolidators, partitions int
	// leaseTTL, when set, is the partition bucket's TTL: how long a dead
	// instance's partitions wait for another (stream.DefaultLeaseTTL).
	leaseTTL time.Duration
}

// defaultTopology is two of each over four partitions: partitions move
// between instances as they start (the first takes every partition, then
// gives half to the second) and when one is killed.
var defaultTopology = topology{ingests: 2, retrievers: 2, extractors: 2, consolidators: 2, partitions: 4}

// childEnv puts the test binary in a child mode: "nats" for a cluster
// node, or a worker's name ("ingest", …, "engram" for the single binary).
const childEnv = "ENGRAM_CLUSTERTEST_CHILD"

// soak says whether to run the long versions (go test -tags soak, or
// ENGRAM_SOAK=1).
func soak() bool { return soakTag || os.Getenv("ENGRAM_SOAK") == "1" }

// childBinary is what the children run: this test binary, or, when it
// was built with the race detector, a copy built without (once per run).
// A dozen race-instrumented processes on two cores take minutes where
// plain ones take seconds; ENGRAM_CLUSTERTEST_RACE=1 keeps the detector in
// the children too.
var childBinary = os.Args[0]

func TestMain(m *testing.M) {
	switch child := os.Getenv(childEnv); child {
	case "":
		if raceEnabled && os.Getenv("ENGRAM_CLUSTERTEST_RACE") != "1" {
			dir, err := os.MkdirTemp("", "clustertest-")
			if err != nil {
				fmt.Fprintln(os.Stderr, "clustertest:", err)
				os.Exit(1)
			}
			bin := filepath.Join(dir, "children")
			if out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "clustertest: build the children without -race: %v\n%s", err, out)
				quiet.RemoveAll(dir)
				os.Exit(1)
			}
			childBinary = bin
			code := m.Run()
			quiet.RemoveAll(dir)
			os.Exit(code)
		}
		os.Exit(m.Run())
	case "nats":
		os.Exit(runNode())
	case "cli":
		// An operator's command: `engram` with the arguments in CT_ARGS.
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv("CT_ARGS")), &args); err != nil {
			fmt.Fprintln(os.Stderr, "clustertest: CT_ARGS:", err)
			os.Exit(2)
		}
		os.Exit(cli.Main(args, os.Stdout, os.Stderr))
	default:
		os.Exit(runWorker(child))
	}
}

var childRoles = map[string]app.Roles{
	"ingest": app.RoleIngest, "retriever": app.RoleRetriever, "extractor": app.RoleExtractor,
	"consolidator": app.RoleConsolidator, "engram": app.RoleAll,
}

// runWorker is what cmd/<name> (and `engram serve` for "engram") runs:
// the config from the environment the parent set.
func runWorker(name string) int {
	roles, ok := childRoles[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "clustertest: no child mode %q\n", name)
		return 2
	}
	base := config.Default()
	if name != "engram" {
		base = app.WorkerDefaults(base, "")
	}
	return app.Serve(name, roles, nil, base)
}

// runNode is one nats-server of the cluster: deploy/cluster/n<i>.conf
// (copied beside its auth.conf and routes.conf) on the ports the parent
// chose, until SIGTERM (a clean shutdown) or SIGKILL.
func runNode() int {
	opts, err := server.ProcessConfigFile(os.Getenv("CT_NATS_CONF"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 2
	}
	opts.Port, _ = strconv.Atoi(os.Getenv("CT_NATS_PORT"))
	opts.Cluster.Port, _ = strconv.Atoi(os.Getenv("CT_NATS_ROUTE_PORT"))
	opts.HTTPPort = 0
	opts.StoreDir = os.Getenv("CT_NATS_STORE")
	opts.NoSigs = true
	srv, err := server.NewServer(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 2
	}
	if os.Getenv("ENGRAM_CLUSTERTEST_LOGS") != "" {
		// Its notices (elections, catch-ups) go to the node's log, kept
		// when the test fails.
		opts.Logtime = true
		srv.ConfigureLogger()
	}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		fmt.Fprintln(os.Stderr, "node: not ready")
		return 1
	}
	fmt.Println("engram started: nats node ready") // the line proc.start waits for
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	srv.Shutdown()
	srv.WaitForShutdown()
	return 0
}

// engram runs an operator's command (`engram args…`) as a child, with
// env added, and returns what it printed and its exit code.
func engram(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(childBinary, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), childEnv+"=cli", "CT_ARGS="+string(raw))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("engram %v: %v", args, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// proc is a child process: a node or a worker, started again with the
// same environment after a kill.
type proc struct {
	name string
	dir  string   // where its logs go
	env  []string // added to the test's environment
	http string   // its HTTP address, when it serves one

	cmd    *exec.Cmd
	done   chan struct{}
	starts int
	log    string
}

// start runs the process and waits until it says it started.
func (p *proc) start(t *testing.T) {
	t.Helper()
	p.starts++
	p.log = filepath.Join(p.dir, fmt.Sprintf("%s.%d.log", p.name, p.starts))
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	cmd := exec.Command(childBinary, "-test.run=^$")
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	done := p.done
	go func() { _ = cmd.Wait(); close(done) }()
	wait.Within(t, 60*time.Second, p.name+" to start", func() error {
		select {
		case <-done:
			t.Fatalf("%s exited at start:\n%s", p.name, p.tail())
		default:
		}
		if b, _ := os.ReadFile(p.log); !bytes.Contains(b, []byte("engram started")) {
			return fmt.Errorf("its log ends:\n%s", p.tail())
		}
		return nil
	})
}

func (p *proc) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill ends the process with SIGKILL: no shutdown runs.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if !p.running() {
		return
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s: %v", p.name, err)
	}
	<-p.done
}

// stop asks the process to shut down (SIGTERM) and waits for it.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.kill(t)
		t.Errorf("%s did not stop within 30 s of SIGTERM:\n%s", p.name, p.tail())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("%s exited %d after SIGTERM:\n%s", p.name, code, p.tail())
	}
}

// tail is the end of the process's log, for failure messages.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// deployment is engram as the workload sees it: where to send events,
// where the rest of the API is, the bus, and the read models to compare.
type deployment struct {
	t        *testing.T
	dir      string
	parts    int     // the users' partitions: 1 for the single binary
	nodes    []*proc // the cluster's nats-servers; none for the single binary
	procs    map[string][]*proc
	natsURL  string
	operator string // the operator's nkey seed
}

func (d *deployment) all() []*proc {
	var out []*proc
	for _, role := range []string{"engram", "ingest", "retriever", "extractor", "consolidator"} {
		out = append(out, d.procs[role]...)
	}
	return out
}

// ingestURL and apiURL spread users over the instances, user by user, so
// that one user's requests go in order through one ingest and one
// retriever (whose read model answers its own ?wait=true).
func (d *deployment) ingestURL(user int) string {
	if p := d.procs["engram"]; len(p) > 0 {
		return "http://" + p[0].http
	}
	in := d.procs["ingest"]
	return "http://" + in[user%len(in)].http
}

func (d *deployment) apiURL(user int) string {
	if p := d.procs["engram"]; len(p) > 0 {
		return "http://" + p[0].http
	}
	rs := d.procs["retriever"]
	return "http://" + rs[user%len(rs)].http
}

// readModels are the data dirs that hold read models: each retriever's,
// or the single binary's.
func (d *deployment) readModels() []string {
	var out []string
	for _, p := range append(d.procs["engram"], d.procs["retriever"]...) {
		out = append(out, filepath.Join(d.dir, p.name))
	}
	return out
}

// readCopy is a read model to check: the single binary's, whole, or the
// copy of one partition of the users a retriever keeps.
type readCopy struct {
	dir, path string
	// partition is the copy's, of parts; -1 for a whole read model.
	partition, parts int
}

func (c readCopy) String() string {
	if c.partition < 0 {
		return filepath.Base(c.dir)
	}
	return fmt.Sprintf("%s/%s", filepath.Base(c.dir), filepath.Base(c.path))
}

// keeps says whether a row of user belongs in the copy.
func (c readCopy) keeps(namespace, user string) bool {
	return c.partition < 0 || stream.PartitionOf(namespace, user, c.parts) == c.partition
}

// readCopies are the read models that together hold every user once: the
// single binary's, or, for each partition, the most advanced copy of it
// the retrievers kept (with the processes stopped; a copy a retriever was
// still building when it stopped is behind the one that served).
func (d *deployment) readCopies() []readCopy {
	d.t.Helper()
	if len(d.procs["engram"]) > 0 {
		dir := filepath.Join(d.dir, d.procs["engram"][0].name)
		return []readCopy{{dir: dir, path: filepath.Join(dir, "engram.db"), partition: -1}}
	}
	var out []readCopy
	for p := range d.parts {
		var best readCopy
		var bestSeq uint64
		for _, dir := range d.readModels() {
			path := filepath.Join(dir, fmt.Sprintf("engram-%dof%d.db", p+1, d.parts))
			if _, err := os.Stat(path); err != nil {
				continue
			}
			st, err := sqlite.ReadStats(d.t.Context(), path, "", "")
			if errors.Is(err, sqlite.ErrUnbuilt) {
				// A copy whose retriever was killed while making it, and
				// that holds the partition no more: its janitor deletes
				// it once the leases settle, which a stop can precede.
				continue
			}
			if err != nil {
				d.t.Fatalf("%s: %v", path, err)
			}
			if best.path == "" || st.LastSeq > bestSeq {
				best, bestSeq = readCopy{dir: dir, path: path, partition: p, parts: d.parts}, st.LastSeq
			}
		}
		if best.path == "" {
			d.t.Fatalf("no retriever kept a copy of partition %d", p)
		}
		out = append(out, best)
	}
	return out
}

// stopAll stops the workers, then the nodes: the reverse of start.
func (d *deployment) stopAll() {
	d.t.Helper()
	for _, p := range d.all() {
		p.stop(d.t)
	}
	for _, n := range d.nodes {
		n.stop(d.t)
	}
}

// dumpStacks has every worker still running print its goroutines to its
// log (Go's SIGQUIT) when the test failed and its logs are kept: what a
// worker that stopped making progress was waiting on.
func (d *deployment) dumpStacks() {
	if os.Getenv("ENGRAM_CLUSTERTEST_LOGS") == "" || !d.t.Failed() {
		return
	}
	for _, p := range d.all() {
		if p.running() {
			_ = p.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
			}
		}
	}
}

// keepLogs copies the processes' logs of a failed test to
// $ENGRAM_CLUSTERTEST_LOGS, when it is set (t.TempDir goes with the test).
func (d *deployment) keepLogs() {
	dst := os.Getenv("ENGRAM_CLUSTERTEST_LOGS")
	if dst == "" || !d.t.Failed() {
		return
	}
	logs, _ := filepath.Glob(filepath.Join(d.dir, "*.log"))
	// The read models too, each as <process>.db (with its write-ahead
	// log), to look into with sqlite3.
	for _, dir := range d.readModels() {
		dbs, _ := filepath.Glob(filepath.Join(dir, "engram*.db*"))
		logs = append(logs, dbs...)
	}
	for _, l := range logs {
		name := filepath.Base(l)
		if strings.HasPrefix(name, "engram") && strings.Contains(name, ".db") {
			name = filepath.Base(filepath.Dir(l)) + "." + name
		}
		b, err := os.ReadFile(l)
		if err == nil {
			err = os.MkdirAll(dst, 0o750)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, name), b, 0o600)
		}
		if err != nil {
			d.t.Logf("keep %s: %v", l, err)
		}
	}
	d.t.Logf("logs kept in %s", dst)
}

// freePorts finds n ports free on loopback now. The cluster's routes must
// name each other's ports before any node starts, and a process restarted
// after a kill comes back on its own port.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	out := make([]int, n)
	for i := range out {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer quiet.Close(l)
		out[i] = l.Addr().(*net.TCPAddr).Port
	}
	return out
}

// startCluster starts three nats-server nodes (R3 streams), sets the
// streams up as the operator, and starts the workers apart of the
// default topology, each kind as its own bus user (its seed from
// ENGRAM_NATS_NKEY_DIR), with env added to its environment.
func startCluster(t *testing.T, env ...string) *deployment {
	t.Helper()
	return startClusterOf(t, defaultTopology, env...)
}

// startClusterOf is startCluster with the workers of topo.
func startClusterOf(t *testing.T, topo topology, env ...string) *deployment {
	t.Helper()
	dir := t.TempDir()
	auth, err := stream.EnsureAuth(filepath.Join(dir, "nats-auth"), []string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("auth.conf", auth.ServerConfig())
	ports := freePorts(t, 6+topo.ingests+topo.retrievers)
	routes := ""
	for _, p := range ports[3:6] {
		routes += fmt.Sprintf("  \"nats-route://route:secret@127.0.0.1:%d\"\n", p)
	}
	write("routes.conf", "authorization { user: route, password: \"secret\" }\nroutes: [\n"+routes+"]\n")
	d := &deployment{t: t, dir: dir, parts: topo.partitions, procs: map[string][]*proc{}, operator: auth.SeedFile(stream.RoleOperator, "")}
	var urls []string
	for n := range 3 {
		conf, err := os.ReadFile(fmt.Sprintf("../../deploy/cluster/n%d.conf", n+1))
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("n%d", n+1)
		write(name+".conf", string(conf))
		d.nodes = append(d.nodes, &proc{name: "nats-" + name, dir: dir, env: []string{
			childEnv + "=nats", "CT_NATS_CONF=" + filepath.Join(dir, name+".conf"),
			"CT_NATS_PORT=" + strconv.Itoa(ports[n]), "CT_NATS_ROUTE_PORT=" + strconv.Itoa(ports[3+n]),
			"CT_NATS_STORE=" + filepath.Join(dir, name),
		}})
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[n]))
	}
	d.natsURL = strings.Join(urls, ",")
	t.Cleanup(func() {
		d.dumpStacks()
		for _, p := range append(d.all(), d.nodes...) {
			p.kill(t)
		}
		d.keepLogs()
	})
	for _, n := range d.nodes {
		n.start(t)
	}
	httpPorts := ports[6:]
	add := func(role string, count int) {
		for i := range count {
			name := fmt.Sprintf("%s-%d", role, i+1)
			p := &proc{name: name, dir: dir, env: []string{
				childEnv + "=" + role,
				"ENGRAM_NATS_URL=" + d.natsURL,
				"ENGRAM_NATS_NKEY_DIR=" + auth.Dir,
				"ENGRAM_NATS_REPLICAS=3",
				"ENGRAM_DATA_DIR=" + filepath.Join(dir, name),
				"ENGRAM_INSTANCE=" + name,
				"ENGRAM_SHUTDOWN_TIMEOUT=20s",
				"ENGRAM_PARTITIONS=" + strconv.Itoa(topo.partitions),
			}}
			p.env = append(p.env, env...)
			if role == "ingest" || role == "retriever" {
				p.http = fmt.Sprintf("127.0.0.1:%d", httpPorts[0])
				httpPorts = httpPorts[1:]
				// The address the others forward a user's requests to
				// (the listen address would be advertised anyway; said
				// here so that the soak measures the HTTP route).
				p.env = append(p.env, "ENGRAM_HTTP_ADDR="+p.http, "ENGRAM_HTTP_ADVERTISE_URL=http://"+p.http)
			}
			d.procs[role] = append(d.procs[role], p)
		}
	}
	add("ingest", topo.ingests)
	add("retriever", topo.retrievers)
	add("extractor", topo.extractors)
	add("consolidator", topo.consolidators)
	// Workers may not create streams: the operator sets them up, with
	// three replicas, as deploy/cluster.sh does.
	ocfg := d.operatorConfig(t.TempDir())
	ocfg.NATS.Replicas = 3
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := app.ApplyStreams(ctx, ocfg, zaptest.NewLogger(t)); err != nil {
		t.Fatalf("engram streams apply: %v", err)
	}
	if topo.leaseTTL > 0 {
		if _, err := stream.SetupStreams(ctx, d.operatorJS(t), stream.StreamsConfig{Replicas: 3, LeaseTTL: topo.leaseTTL}, stream.Restore); err != nil {
			t.Fatalf("partition bucket with a TTL of %v: %v", topo.leaseTTL, err)
		}
	}
	for _, p := range d.all() {
		p.start(t)
	}
	return d
}

// startSingle starts the single binary (`engram serve`): embedded NATS,
// every worker in one process, with env added to its environment.
func startSingle(t *testing.T, env ...string) *deployment {
	t.Helper()
	dir := t.TempDir()
	ports := freePorts(t, 2)
	data := filepath.Join(dir, "engram")
	// The users the single binary finds at start (it makes them when absent).
	auth, err := stream.EnsureAuth(filepath.Join(data, "nats-auth"), []string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{name: "engram", dir: dir, http: fmt.Sprintf("127.0.0.1:%d", ports[0]), env: []string{
		childEnv + "=engram",
		"ENGRAM_DATA_DIR=" + data,
		"ENGRAM_HTTP_ADDR=" + fmt.Sprintf("127.0.0.1:%d", ports[0]),
		"ENGRAM_NATS_LISTEN=" + fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"ENGRAM_SHUTDOWN_TIMEOUT=20s",
	}}
	p.env = append(p.env, env...)
	d := &deployment{t: t, dir: dir, parts: 1, procs: map[string][]*proc{"engram": {p}},
		natsURL: fmt.Sprintf("nats://127.0.0.1:%d", ports[1]), operator: auth.SeedFile(stream.RoleOperator, "")}
	t.Cleanup(func() { p.kill(t); d.keepLogs() })
	p.start(t)
	return d
}

// operatorJS connects to the deployment's bus as the operator.
func (d *deployment) operatorJS(t *testing.T) jetstream.JetStream {
	t.Helper()
	nc, err := stream.Connect(stream.ConnConfig{URL: d.natsURL, Name: "clustertest", NKey: d.operator})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// operatorConfig is the config an operator's command uses against the
// deployment (engram rules run, engram rebuild).
func (d *deployment) operatorConfig(dataDir string) config.Config {
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.NATS.URL = d.natsURL
	cfg.NATS.NKey = d.operator
	cfg.NATS.Listen = ""
	return cfg
}

// settle waits until nothing is in flight: every partition's consumer
// exists and is pulled by a live instance (after a kill, a partition whose
// lease has not yet moved, or whose consumer is being made again, has work
// no consumer shows), every consumer of MEMORY has been delivered and has
// acknowledged all there is, and the stream's end has not moved for calm.
// The retrievers' projectors are consumers too, so their read models then
// hold everything.
func settle(t *testing.T, js jetstream.JetStream, parts int, calm time.Duration) uint64 {
	t.Helper()
	want := partitionDurables(parts)
	var last uint64
	var calmSince time.Time
	why := ""
	deadline := time.Now().Add(2 * time.Minute)
	for {
		busy := func(reason string) { calmSince, why = time.Time{}, reason }
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		if s, err := js.Stream(ctx, stream.MemoryStream); err != nil {
			busy(err.Error())
		} else if si, err := s.Info(ctx); err != nil {
			busy(err.Error())
		} else {
			lister := s.ListConsumers(ctx)
			pending := ""
			pulled := map[string]bool{}
			state := map[string]string{}
			for ci := range lister.Info() {
				leader := ""
				if ci.Cluster != nil {
					leader = ci.Cluster.Leader
				}
				state[ci.Name] = fmt.Sprintf("%s{waiting %d, pending %d, unacked %d, delivered %d, leader %q}",
					ci.Name, ci.NumWaiting, ci.NumPending, ci.NumAckPending, ci.Delivered.Stream, leader)
				if ci.NumPending > 0 || ci.NumAckPending > 0 {
					pending += fmt.Sprintf(" %s: %d pending, %d unacknowledged (last delivered %d);",
						ci.Name, ci.NumPending, ci.NumAckPending, ci.Delivered.Stream)
				}
				pulled[ci.Name] = ci.NumWaiting > 0
			}
			var idle []string
			for _, name := range want {
				if !pulled[name] {
					idle = append(idle, cmp.Or(state[name], name+"{missing}"))
				}
			}
			switch {
			case lister.Err() != nil:
				busy(lister.Err().Error())
			case len(idle) > 0:
				busy(fmt.Sprintf("consumers missing or pulled by no instance: %v", idle))
			case pending != "":
				busy("consumers:" + pending)
			case si.State.LastSeq != last:
				last = si.State.LastSeq
				busy(fmt.Sprintf("the stream grew to %d", last))
			case calmSince.IsZero():
				calmSince = time.Now()
			}
		}
		cancel()
		if !calmSince.IsZero() && time.Since(calmSince) > calm {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workers did not settle in 2m: %s", why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPulling waits until the consumers of the extractors and the
// consolidators (one per partition, made once a worker holds it) exist
// and every consumer of MEMORY has a pull request waiting: each worker
// has done what it does before it takes events.
func waitPulling(t *testing.T, js jetstream.JetStream, parts int) {
	t.Helper()
	want := partitionDurables(parts)
	wait.Within(t, time.Minute, fmt.Sprintf("every consumer to pull (%v among them)", want), func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, stream.MemoryStream)
		if err != nil {
			return err
		}
		lister := s.ListConsumers(ctx)
		pulling := map[string]bool{}
		for ci := range lister.Info() {
			if ci.NumWaiting == 0 {
				return fmt.Errorf("%s has no pull waiting", ci.Name)
			}
			pulling[ci.Name] = true
		}
		for _, name := range want {
			if !pulling[name] {
				return fmt.Errorf("%s does not pull", name)
			}
		}
		return lister.Err()
	})
}

// partitionDurables are the consumers the extractors and consolidators
// make over parts partitions: one per partition for the batchers and the
// consolidators, one for all for the extraction requests.
func partitionDurables(parts int) []string {
	want := []string{"extractor"}
	for _, base := range []string{"batcher", "consolidator"} {
		for p := range parts {
			want = append(want, stream.PartitionDurable(base, p, parts))
		}
	}
	return want
}
