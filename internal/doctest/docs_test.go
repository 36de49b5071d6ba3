package doctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/cli"
	"github.com/engramhq/engram/internal/config"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

// asCLI set in its environment makes the test binary the engram command,
// so the pages' `engram …` lines run the code under test without a build.
const asCLI = "ENGRAM_DOCTEST_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// root is the repository's top directory.
const root = "../.."

// pages are README.md and every page under docs/, in that order.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

// Every shell example of README.md and docs/ runs against a real engram,
// in order, and prints what the page shows.
func TestDocExamples(t *testing.T) {
	bin := cliWrapper(t)
	var notRun []string
	for _, p := range pages(t) {
		blocks, err := parsePage(p)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, p)
		for _, b := range blocks {
			if b.notRun != "" {
				notRun = append(notRun, fmt.Sprintf("%s:%d: %s", name, b.line, b.notRun))
			}
		}
		if runnable(blocks) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runPage(t, name, blocks, bin)
		})
	}
	t.Logf("blocks marked not run:\n  %s", strings.Join(notRun, "\n  "))
}

// A block is a fenced sh block of a page.
type block struct {
	line   int    // of its opening fence
	notRun string // why it is not run; "" runs it
	steps  []step
}

// A step is one command and the output the page shows for it.
type step struct {
	line     int
	cmd      string
	shown    []string
	hasShown bool
}

func runnable(blocks []block) int {
	n := 0
	for _, b := range blocks {
		if b.notRun == "" {
			n += len(b.steps)
		}
	}
	return n
}

var notRunMark = regexp.MustCompile(`^<!--\s*not run:\s*(.*?)\s*-->$`)

// parsePage reads the sh blocks of a markdown page (see the package doc).
func parsePage(path string) ([]block, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(raw), "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		lang := strings.TrimPrefix(fence, "```")
		start := i
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: a code block that never closes", path, start+1)
		}
		if lang != "sh" {
			continue
		}
		b := block{line: start + 1}
		if start > 0 {
			if m := notRunMark.FindStringSubmatch(strings.TrimSpace(lines[start-1])); m != nil {
				b.notRun = m[1]
			}
		}
		b.steps = parseSteps(body, start+2)
		out = append(out, b)
	}
	return out, nil
}

// parseSteps splits a block's lines into commands and what each shows.
func parseSteps(body []string, firstLine int) []step {
	var steps []step
	var cur *step
	open := false   // the command so far continues on the next line
	output := false // comment lines now are the command's output
	for n, l := range body {
		switch {
		case open:
			cur.cmd += "\n" + l
			open = continues(cur.cmd)
		case strings.TrimSpace(l) == "":
			output = false
		case strings.HasPrefix(l, "#"):
			if output {
				cur.shown = append(cur.shown, strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
				cur.hasShown = true
			}
		default:
			steps = append(steps, step{line: firstLine + n, cmd: l})
			cur = &steps[len(steps)-1]
			open = continues(cur.cmd)
			output = true
		}
	}
	return steps
}

// continues reports whether a shell command goes on past its last line: a
// quote still open, or a trailing backslash.
func continues(cmd string) bool {
	var quote rune
	escaped := false
	for _, r := range cmd {
		switch {
		case escaped:
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			}
		case r == '\\':
			escaped = true
		case quote == '"':
			if r == '"' {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		}
	}
	return quote != 0 || strings.HasSuffix(cmd, "\\")
}

// matches reports whether got is what the page shows: the lines equal,
// "…" standing for any text.
func matches(shown []string, got string) bool {
	var re strings.Builder
	re.WriteString(`^`)
	for i, part := range strings.Split(strings.Join(shown, "\n"), "…") {
		if i > 0 {
			re.WriteString(`(?s:.*?)`)
		}
		re.WriteString(regexp.QuoteMeta(part))
	}
	re.WriteString(`$`)
	return regexp.MustCompile(re.String()).MatchString(tidy(got))
}

// tidy drops trailing spaces of each line and the empty lines at the end.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// tools a command may need beyond bash, and how a missing one is got.
var tools = map[string]string{
	"curl": "apt-get install curl",
	"jq":   "apt-get install jq",
	"nats": "go install github.com/nats-io/natscli/nats@v0.5.1",
}

var toolUse = regexp.MustCompile(`(?:^|[|;&(]|\$\()\s*(curl|jq|nats)\s`)

// missingTool names a tool the command needs that is not installed.
func missingTool(cmd string) string {
	for _, m := range toolUse.FindAllStringSubmatch(cmd, -1) {
		if _, err := exec.LookPath(m[1]); err != nil {
			return fmt.Sprintf("%s is not installed (%s)", m[1], tools[m[1]])
		}
	}
	return ""
}

// cliWrapper writes an `engram` that runs this test binary as the CLI,
// and returns its directory.
func cliWrapper(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := fmt.Sprintf("#!/bin/sh\n%s=1 exec '%s' \"$@\"\n", asCLI, self)
	if err := os.WriteFile(filepath.Join(dir, "engram"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPage starts an engram and runs the page's steps against it.
func runPage(t *testing.T, name string, blocks []block, bin string) {
	work := checkout(t)
	a := startEngram(t, filepath.Join(work, "data"))
	httpAddr, natsAddr := a.HTTPAddr(), strings.TrimPrefix(a.NATSURL(), "nats://")
	in := strings.NewReplacer("localhost:7420", httpAddr, "127.0.0.1:7420", httpAddr, "127.0.0.1:4222", natsAddr)
	back := strings.NewReplacer(httpAddr, "127.0.0.1:7420", natsAddr, "127.0.0.1:4222")
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"ENGRAM_HTTP_ADDR=" + httpAddr, "ENGRAM_NATS_LISTEN=" + natsAddr, "LANG=C.UTF-8"}
	for _, b := range blocks {
		if b.notRun != "" {
			continue
		}
		for _, s := range b.steps {
			where := fmt.Sprintf("%s:%d", name, s.line)
			if why := missingTool(s.cmd); why != "" {
				t.Logf("%s: not run: %s", where, why)
				continue
			}
			settle(t, a)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			c := exec.CommandContext(ctx, "bash", "-c", in.Replace(s.cmd))
			c.Dir, c.Env = work, env
			out, err := c.CombinedOutput()
			cancel()
			got := back.Replace(string(out))
			switch {
			case s.hasShown && !matches(s.shown, got):
				t.Errorf("%s: %s\nprinted:\n%s\nthe page shows:\n%s", where, s.cmd, tidy(got), strings.Join(s.shown, "\n"))
			case !s.hasShown && err != nil:
				t.Errorf("%s: %s: %v\n%s", where, s.cmd, err, got)
			case !s.hasShown && strings.Contains(s.cmd, "curl ") && strings.Contains(got, `{"error":`):
				t.Errorf("%s: %s answered an error the page does not show:\n%s", where, s.cmd, got)
			}
		}
	}
}

// checkout is a directory that looks like the repository (its top-level
// entries linked in), where ./data is the data dir of the engram under
// test.
func checkout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "data" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(abs, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startEngram runs every worker in one process, as engram serve does, on
// free ports.
func startEngram(t *testing.T, dataDir string) *app.App {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.Listen = "127.0.0.1:0"
	a := app.New(cfg, app.RoleAll, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)))
	if err := a.Open(t.Context()); err != nil {
		t.Fatalf("start engram: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return a
}

// settle waits until every worker has done what the stream asks of it:
// no consumer has messages pending or unacknowledged, the read model has
// applied the stream's last event, and that has held a moment, so a
// message on its way from one worker to the next is not taken for calm.
func settle(t *testing.T, a *app.App) {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(30 * time.Second)
	var last uint64
	var calmSince time.Time
	for {
		calm := func() bool {
			head, err := a.StreamHead(ctx)
			if err != nil {
				return false
			}
			backlogs, err := a.Backlogs(ctx)
			if err != nil {
				return false
			}
			for _, c := range backlogs {
				if c.Pending > 0 || c.AckPending > 0 {
					return false
				}
			}
			got, err := a.Store().LastSeq(ctx)
			if err != nil || got < head || head != last {
				last = head
				return false
			}
			return true
		}()
		switch {
		case !calm:
			calmSince = time.Time{}
		case calmSince.IsZero():
			calmSince = time.Now()
		case time.Since(calmSince) > 200*time.Millisecond:
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("engram did not settle within 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
