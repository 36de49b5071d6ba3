package imagetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/quiet"
)

const root = "../.."

// finalStage is the Dockerfile's image stage, with its COPY --from=build
// lines reading the build context instead: the test puts there what the
// build stage would have made.
func finalStage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "FROM scratch AS image")
	if i < 0 {
		t.Fatal("the Dockerfile has no `FROM scratch AS image` stage")
	}
	stage := s[i:]
	for from, to := range map[string]string{
		"COPY --from=build /rootfs/ /":                        "COPY rootfs/ /",
		"COPY --from=build --chown=65532:65532 /data/ /data/": "COPY --chown=65532:65532 data/ /data/",
	} {
		if !strings.Contains(stage, from) {
			t.Fatalf("the image stage has no %q: change this test with the Dockerfile", from)
		}
		stage = strings.ReplaceAll(stage, from, to)
	}
	if strings.Contains(stage, "--from=") {
		t.Fatalf("the image stage copies from a stage this test does not build:\n%s", stage)
	}
	return stage
}

// context lays out what the build stage makes: the static binary, the
// CA certificates, /tmp and an empty data dir.
func buildContext(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"rootfs/usr/local/bin", "rootfs/tmp", "rootfs/etc/ssl/certs", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "rootfs/tmp"), os.ModePerm|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if certs, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "rootfs/etc/ssl/certs/ca-certificates.crt"), certs, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-tags", "timetzdata",
		"-ldflags", "-s -w -X github.com/engramhq/engram/internal/app.Commit=imagetest",
		"-o", filepath.Join(dir, "rootfs/usr/local/bin/"), "./cmd/engram")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build a static engram: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "Containerfile"), []byte(finalStage(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// builder runs buildah with its storage in the test's temp dir.
type builder struct {
	t    *testing.T
	args []string
}

func newBuilder(t *testing.T) *builder {
	t.Helper()
	path, err := exec.LookPath("buildah")
	if err != nil {
		t.Skip("buildah is not installed (apt-get install buildah)")
	}
	store := t.TempDir()
	b := &builder{t: t, args: []string{path, "--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs"}}
	// Can it make and mount a container here at all? Without root, or in
	// a sandbox that forbids mounts, it cannot: skip with its words.
	ctr, err := b.try("from", "scratch")
	if err != nil {
		t.Skipf("buildah cannot make a container here: %v", err)
	}
	if _, err := b.try("mount", ctr); err != nil {
		t.Skipf("buildah cannot mount a container here: %v", err)
	}
	b.run("rm", ctr)
	t.Cleanup(func() {
		// What is left for the next run to clear, if these fail.
		for _, args := range [][]string{{"rm", "--all"}, {"rmi", "--all", "--force"}} {
			if out, err := b.try(args...); err != nil {
				t.Logf("buildah %s: %v %s", strings.Join(args, " "), err, out)
			}
		}
	})
	return b
}

func (b *builder) cmd(args ...string) *exec.Cmd {
	return exec.CommandContext(b.t.Context(), b.args[0], append(b.args[1:], args...)...)
}

func (b *builder) try(args ...string) (string, error) {
	out, err := b.cmd(args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("buildah %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func (b *builder) run(args ...string) string {
	b.t.Helper()
	out, err := b.try(args...)
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// The image builds from the Dockerfile's own final stage, is configured as
// docs/operations.md says, refuses to start without tokens, and with them
// answers /readyz and passes its HEALTHCHECK.
func TestImage(t *testing.T) {
	if os.Getenv("ENGRAM_IMAGE_TEST") != "1" {
		t.Skip("builds static binaries and an image, a minute or more: set ENGRAM_IMAGE_TEST=1 (.ci/run does where buildah is installed)")
	}
	b := newBuilder(t)
	dir := buildContext(t)
	b.run("bud", "--format", "docker", "--isolation", "chroot", "-f", filepath.Join(dir, "Containerfile"), "-t", "engram-imagetest", dir)

	for format, want := range map[string]string{
		"{{.Docker.Config.User}}":                                 "65532:65532",
		"{{range $k, $v := .Docker.Config.Volumes}}{{$k}}{{end}}": "/data",
		"{{.Docker.Config.Healthcheck.Test}}":                     "[CMD engram health]",
		"{{.Docker.Config.Cmd}}":                                  "[engram serve]",
	} {
		if got := b.run("inspect", "--format", format, "engram-imagetest"); got != want {
			t.Errorf("image %s = %q, want %q", format, got, want)
		}
	}
	env := b.run("inspect", "--format", "{{.Docker.Config.Env}}", "engram-imagetest")
	for _, want := range []string{"ENGRAM_DATA_DIR=/data", "ENGRAM_HTTP_ADDR=0.0.0.0:7420"} {
		if !strings.Contains(env, want) {
			t.Errorf("image env %s lacks %s", env, want)
		}
	}
	ctr := b.run("from", "engram-imagetest")

	// As shipped it listens beyond loopback, so without tokens it stops
	// and names the setting. (chroot isolation shares the host's network:
	// the test gives it free ports, never 7420 or 4222.)
	port := freePort(t)
	addr := fmt.Sprintf("--env=ENGRAM_HTTP_ADDR=0.0.0.0:%d", port)
	noNATS := "--env=ENGRAM_NATS_LISTEN="
	out, err := b.try("run", "--isolation", "chroot", addr, noNATS, ctr, "--", "engram", "serve")
	switch {
	case err == nil || !strings.Contains(out, "exited with status 2"):
		t.Fatalf("without tokens: %v, want engram's exit status 2 (bad configuration)\n%s", err, out)
	case !strings.Contains(out, "ENGRAM_HTTP_TOKENS"):
		// buildah run can exit before it relays the last of a quick
		// process's output; the status says enough.
		t.Logf("without tokens engram exited 2; buildah relayed no message: %q", out)
	}

	serve := b.cmd("run", "--isolation", "chroot", addr, noNATS, "--env=ENGRAM_HTTP_TOKENS=imagetest-token-0123456789=*", ctr, "--", "engram", "serve")
	serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs strings.Builder
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	t.Cleanup(func() {
		// buildah run, the chroot helper and engram share the process
		// group the test made: stop all three, and wait.
		stop := func(sig syscall.Signal) {
			if err := syscall.Kill(-serve.Process.Pid, sig); err != nil {
				t.Logf("signal %v: %v", sig, err)
			}
		}
		stop(syscall.SIGTERM)
		select {
		case err := <-exited:
			t.Logf("engram in the image stopped: %v", err)
		case <-time.After(30 * time.Second):
			stop(syscall.SIGKILL)
			t.Logf("engram in the image killed: %v", <-exited)
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			quiet.Close(resp.Body)
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("engram in the image exited: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer 200 within 90 s (%v)\n%s", url, err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The HEALTHCHECK's command, run in the container as the engine would.
	if out, err := b.try("run", "--isolation", "chroot", addr, ctr, "--", "engram", "health", "--ready"); err != nil || !strings.Contains(out, "is ready") {
		t.Errorf("engram health in the image: %v %s", err, out)
	}
	if out := b.run("run", "--isolation", "chroot", ctr, "--", "engram", "version"); !regexp.MustCompile(`\(commit imagetest\)`).MatchString(out) {
		t.Errorf("engram version in the image: %q, want the commit stamped by -ldflags", out)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/v1/search?user=u&q=x", port), nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a search without the token: %v %v, want 401", resp, err)
	} else {
		quiet.Close(resp.Body)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(ln) // only its port is wanted, free
	return ln.Addr().(*net.TCPAddr).Port
}
