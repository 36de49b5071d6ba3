package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/quiet"
)

// A body over the limit is answered 413 with the JSON error, whatever its
// size and however the client sends it: all of it before reading the
// answer (as Python's urllib does), chunked and read as it goes (Go's
// client), or only once told to continue (curl's Expect: 100-continue).
// The bodies are streamed, never held whole.
func TestBodyOverLimit413(t *testing.T) {
	t.Parallel()
	a := startApp(t, testConfig(t, t.TempDir()), RoleAll)
	before := streamState(t, a)
	const mb = 1 << 20
	cases := []struct {
		path, contentType string
		size              int64
		chunked           bool
	}{
		{"/v1/events", "application/cloudevents+json", 12 * mb, false},
		{"/v1/events", "application/cloudevents+json", 12 * mb, true},
		{"/v1/events", "application/cloudevents-batch+json", 100 * mb, false},
		{"/v1/memories", "application/json", 12 * mb, false},
		{"/v1/context", "application/json", 12 * mb, true},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s %s %d MiB", c.path, c.contentType, c.size/mb)
		if !c.chunked {
			t.Run(name+" sent whole", func(t *testing.T) {
				status, body, err := sendWhole(t, a.HTTPAddr(), c.path, c.contentType, c.size, false)
				if err != nil {
					t.Fatalf("the connection broke instead of an answer: %v", err)
				}
				check413(t, status, body)
			})
			continue
		}
		t.Run(name+" chunked", func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), "POST", "http://"+a.HTTPAddr()+c.path,
				io.NopCloser(io.LimitReader(filler{}, c.size))) // no length: chunked
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", c.contentType)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("the connection broke instead of an answer: %v", err)
			}
			defer quiet.Close(resp.Body)
			body, _ := io.ReadAll(resp.Body)
			check413(t, resp.StatusCode, body)
		})
	}
	t.Run("Expect: 100-continue", func(t *testing.T) {
		status, body, err := sendWhole(t, a.HTTPAddr(), "/v1/events", "application/cloudevents+json", 100*mb, true)
		if err != nil {
			t.Fatal(err)
		}
		check413(t, status, body)
	})
	if after := streamState(t, a); after != before {
		t.Fatalf("the stream changed: %+v, then %+v", before, after)
	}
	// The server still answers.
	if r := do(t, "GET", "http://"+a.HTTPAddr()+"/healthz", "", nil, nil); r.Status != 200 {
		t.Fatalf("healthz after: %d", r.Status)
	}
}

func check413(t *testing.T, status int, body []byte) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(body, &e); err != nil || status != http.StatusRequestEntityTooLarge || e.Error.Code != "too_large" {
		t.Fatalf("got %d %.300s, want 413 with the JSON error too_large", status, body)
	}
}

// filler is an endless reader of JSON-looking bytes.
type filler struct{}

var fill = bytes.Repeat([]byte(`{"a":1},`), 8<<10)

func (filler) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], fill)
	}
	return n, nil
}

// sendWhole writes a request with a declared body of size bytes, and the
// whole body, before it reads the answer; with expect it sends Expect:
// 100-continue and the body only if told to continue.
func sendWhole(t *testing.T, addr, path, contentType string, size int64, expect bool) (int, []byte, error) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(conn)
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n", path, addr, contentType, size)
	if expect {
		head += "Expect: 100-continue\r\n"
	}
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		return 0, nil, err
	}
	br := bufio.NewReader(conn)
	if !expect {
		if _, err := io.Copy(conn, io.LimitReader(filler{}, size)); err != nil {
			return 0, nil, fmt.Errorf("write the body: %w", err)
		}
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("read the answer: %w", err)
	}
	defer quiet.Close(resp.Body)
	if resp.StatusCode == http.StatusContinue {
		return 0, nil, fmt.Errorf("told to continue with a body over the limit")
	}
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, bytes.TrimSpace(body), err
}
