package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// slowTest is how long a test runs before its finish is worth a line.
const slowTest = 20 * time.Second

type result struct {
	pkg, test string
	took      time.Duration
}

type progress struct {
	out     io.Writer
	start   time.Time
	output  map[string]*strings.Builder // by package and test, until it passes
	running map[string]int              // package → tests finished so far
	results []result
	failed  bool
	fails   []string // failed package or test, in order
	why     []string // each failed test's own lines (reason), in order
	pkgs    int
}

func newProgress(out io.Writer, start time.Time) *progress {
	return &progress{out: out, start: start, output: map[string]*strings.Builder{}, running: map[string]int{}}
}

func short(pkg string) string {
	if i := strings.Index(pkg, "/engram/"); i >= 0 {
		return pkg[i+len("/engram/"):]
	}
	return pkg
}

func (p *progress) line(l string, now time.Time) {
	var e event
	if err := json.Unmarshal([]byte(l), &e); err != nil || e.Action == "" {
		// Not test2json's (a build error printed by go itself): show it.
		fmt.Fprintln(p.out, l)
		return
	}
	key := e.Package + " " + e.Test
	switch e.Action {
	case "start":
		p.running[e.Package] = 0
	case "output", "build-output":
		b := p.output[key]
		if b == nil {
			b = &strings.Builder{}
			p.output[key] = b
		}
		b.WriteString(e.Output)
	case "build-fail":
		p.failed = true
		p.fails = append(p.fails, short(e.Package)+" (build)")
		fmt.Fprint(p.out, p.take(key))
	case "pass", "skip":
		took := time.Duration(e.Elapsed * float64(time.Second))
		delete(p.output, key)
		if e.Test == "" && e.Action == "skip" {
			// A package with no test files: nothing worth a line.
			delete(p.running, e.Package)
			return
		}
		if e.Test == "" {
			p.packageDone("ok  ", e.Package, took, now)
			return
		}
		if strings.Contains(e.Test, "/") {
			return
		}
		p.running[e.Package]++
		p.results = append(p.results, result{short(e.Package), e.Test, took})
		if took >= slowTest {
			fmt.Fprintf(p.out, "      %-28s %-44s %6.1fs\n", short(e.Package), e.Test, took.Seconds())
		}
	case "fail":
		p.failed = true
		took := time.Duration(e.Elapsed * float64(time.Second))
		if e.Test == "" {
			fmt.Fprint(p.out, p.take(key))
			p.packageDone("FAIL", e.Package, took, now)
			p.fails = append(p.fails, short(e.Package))
			return
		}
		p.fails = append(p.fails, short(e.Package)+" "+e.Test)
		if !strings.Contains(e.Test, "/") {
			p.running[e.Package]++
			p.results = append(p.results, result{short(e.Package), e.Test, took})
		}
		printed := p.take(key)
		fmt.Fprintf(p.out, "--- FAIL: %s %s (%.1fs)\n%s", short(e.Package), e.Test, took.Seconds(), printed)
		p.why = append(p.why, fmt.Sprintf("%s %s:\n%s", short(e.Package), e.Test, reason(printed)))
	}
}

// reasonLines bounds the lines reason keeps of one test.
const reasonLines = 12

// reason is what a failed test said itself: its output without the
// lines its loggers wrote (zaptest's "logger.go:") and the framework's
// "=== RUN"/"--- FAIL" lines, the last reasonLines of them.
func reason(printed string) string {
	var keep []string
	for l := range strings.Lines(printed) {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "logger.go:") || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		keep = append(keep, "    "+t+"\n")
	}
	if len(keep) > reasonLines {
		keep = append([]string{"    […]\n"}, keep[len(keep)-reasonLines:]...)
	}
	return strings.Join(keep, "")
}

// take hands back what a test printed and forgets it.
func (p *progress) take(key string) string {
	b := p.output[key]
	delete(p.output, key)
	if b == nil {
		return ""
	}
	return b.String()
}

func (p *progress) packageDone(status, pkg string, took time.Duration, now time.Time) {
	p.pkgs++
	tests := p.running[pkg]
	delete(p.running, pkg)
	for k := range p.output {
		if strings.HasPrefix(k, pkg+" ") {
			delete(p.output, k)
		}
	}
	fmt.Fprintf(p.out, "%s  %-28s %6.1fs  %3d tests   [%s]\n", status, short(pkg), took.Seconds(), tests, clock(now.Sub(p.start)))
}

func (p *progress) heartbeat(now time.Time) {
	if len(p.running) == 0 {
		return
	}
	var names []string
	for pkg, n := range p.running {
		names = append(names, fmt.Sprintf("%s (%d done)", short(pkg), n))
	}
	sort.Strings(names)
	fmt.Fprintf(p.out, "      [%s] running: %s\n", clock(now.Sub(p.start)), strings.Join(names, ", "))
}

func (p *progress) finish(now time.Time) int {
	sort.Slice(p.results, func(i, j int) bool { return p.results[i].took > p.results[j].took })
	fmt.Fprintf(p.out, "\n%d packages in %s wall time. Slowest tests:\n", p.pkgs, clock(now.Sub(p.start)))
	for _, r := range p.results[:min(10, len(p.results))] {
		fmt.Fprintf(p.out, "  %6.1fs  %s %s\n", r.took.Seconds(), r.pkg, r.test)
	}
	if p.pkgs == 0 {
		fmt.Fprintln(p.out, "FAIL: go test reported no package")
		return 1
	}
	if p.failed {
		// Again at the end, without the logs: a failed test's output can
		// run to thousands of lines, and a log cut to its head and tail
		// (a CI page) keeps only this.
		if len(p.why) > 0 {
			fmt.Fprintf(p.out, "\nWhy each failed:\n%s", strings.Join(p.why, ""))
		}
		fmt.Fprintf(p.out, "FAIL: %s\n", strings.Join(p.fails, ", "))
		return 1
	}
	fmt.Fprintln(p.out, "PASS")
	return 0
}

func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}
