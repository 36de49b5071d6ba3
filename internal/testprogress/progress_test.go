package main

import (
	"strings"
	"testing"
	"time"
)

const module = "github.com/engramhq/engram/"

// A passing package is one line; a failed test shows all it printed; the
// exit status says whether anything failed.
func TestProgress(t *testing.T) {
	t.Parallel()
	stream := strings.Join([]string{
		`{"Action":"start","Package":"` + module + `internal/a"}`,
		`{"Action":"start","Package":"` + module + `internal/b"}`,
		`{"Action":"run","Package":"` + module + `internal/a","Test":"TestQuick"}`,
		`{"Action":"output","Package":"` + module + `internal/a","Test":"TestQuick","Output":"noise of a passing test\n"}`,
		`{"Action":"pass","Package":"` + module + `internal/a","Test":"TestQuick","Elapsed":0.1}`,
		`{"Action":"pass","Package":"` + module + `internal/a","Test":"TestSlow","Elapsed":25}`,
		`{"Action":"pass","Package":"` + module + `internal/a","Elapsed":25.3}`,
		`{"Action":"start","Package":"` + module + `cmd/x"}`,
		`{"Action":"skip","Package":"` + module + `cmd/x","Elapsed":0}`,
		`{"Action":"output","Package":"` + module + `internal/b","Test":"TestBroken","Output":"    logger.go:146: 2026-11-29T11:15:02Z INFO started\n"}`,
		`{"Action":"output","Package":"` + module + `internal/b","Test":"TestBroken","Output":"    b_test.go:9: got 1, want 2\n"}`,
		`{"Action":"fail","Package":"` + module + `internal/b","Test":"TestBroken","Elapsed":1.5}`,
		`{"Action":"fail","Package":"` + module + `internal/b","Elapsed":1.7}`,
	}, "\n")
	var out strings.Builder
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clockAt := start
	code := run(strings.NewReader(stream), &out, func() time.Time { clockAt = clockAt.Add(time.Second); return clockAt }, nil)
	got := out.String()
	for _, want := range []string{
		"internal/a                   TestSlow", "ok    internal/a", "2 tests",
		"--- FAIL: internal/b TestBroken (1.5s)\n    logger.go:146: 2026-11-29T11:15:02Z INFO started\n    b_test.go:9: got 1, want 2\n",
		// The reason again at the end, without the log lines.
		"Why each failed:\ninternal/b TestBroken:\n    b_test.go:9: got 1, want 2\nFAIL: ",
		"FAIL  internal/b", "FAIL: internal/b TestBroken, internal/b",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "cmd/x") {
		t.Errorf("a package without tests has a line:\n%s", got)
	}
	if strings.Contains(got, "noise of a passing test") {
		t.Errorf("a passing test's output is shown:\n%s", got)
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

func TestProgressAllPass(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	code := run(strings.NewReader(`{"Action":"pass","Package":"`+module+`x","Elapsed":1}`), &out, time.Now, nil)
	if code != 0 || !strings.Contains(out.String(), "PASS") {
		t.Errorf("exit %d, output %q; want 0 and PASS", code, out.String())
	}
	if code := run(strings.NewReader(""), &out, time.Now, nil); code != 1 {
		t.Errorf("no package reported: exit %d, want 1", code)
	}
}

// The heartbeat names the packages still running and how far each is.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	start := time.Now()
	p := newProgress(&out, start)
	p.line(`{"Action":"start","Package":"`+module+`internal/app"}`, start)
	p.line(`{"Action":"pass","Package":"`+module+`internal/app","Test":"TestA","Elapsed":2}`, start)
	p.heartbeat(start.Add(90 * time.Second))
	if want := "[1:30] running: internal/app (1 done)"; !strings.Contains(out.String(), want) {
		t.Errorf("heartbeat %q, want %q", out.String(), want)
	}
}
