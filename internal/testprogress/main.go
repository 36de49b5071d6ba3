// Command testprogress turns `go test -json` into what a person watching
// `make test` needs: a line per package as it finishes, the tests that took
// long as they finish, a line every half minute naming what still runs,
// the whole output of every failed test, and at the end the wall time and
// the slowest tests. It exits 1 when anything failed, since a pipe loses
// go test's own exit status.
//
//	go test -json ./... | go run ./internal/testprogress
//
// It reads only the standard library, so it costs make test nothing to
// build.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Stdin, os.Stdout, time.Now, time.Tick(30*time.Second)))
}

func run(in io.Reader, out io.Writer, now func() time.Time, tick <-chan time.Time) int {
	p := newProgress(out, now())
	lines := make(chan string)
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		done <- sc.Err()
		close(lines)
	}()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				if err := <-done; err != nil {
					fmt.Fprintf(out, "testprogress: reading go test's output: %v\n", err)
					p.failed = true
				}
				return p.finish(now())
			}
			p.line(l, now())
		case t := <-tick:
			p.heartbeat(t)
		}
	}
}
