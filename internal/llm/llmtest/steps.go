package llmtest

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/engramhq/engram/internal/quiet"
)

// Step answers one request. The constructors below cover what real
// endpoints do; a test may write its own.
type Step func(w http.ResponseWriter, c *Call)

// answer is the normal response: the Reply content, or embeddings.
func answer(w http.ResponseWriter, c *Call) {
	body, u := c.success()
	c.deliver(w, body, u)
}

// OK answers a chat request with content and finish_reason "stop". Content
// that is not what the caller asked for (not JSON, say) is how a test feeds
// the caller a model's bad output.
func OK(content string) Step { return Completion(content, "stop") }

// Completion answers a chat request with content and the given finish
// reason ("length" for a reply cut short by max_tokens).
func Completion(content, finishReason string) Step {
	return func(w http.ResponseWriter, c *Call) {
		if c.Chat == nil {
			c.misuse(w, "Completion")
			return
		}
		body, u := completion(c.Chat, content, finishReason)
		c.deliver(w, body, u)
	}
}

// Reversed answers an embeddings request normally but lists the vectors
// last to first; clients must place them by their index field.
func Reversed() Step {
	return func(w http.ResponseWriter, c *Call) {
		if c.Embed == nil {
			c.misuse(w, "Reversed")
			return
		}
		body, u := c.s.embeddings(c.Embed, true)
		c.deliver(w, body, u)
	}
}

// Status answers with an HTTP error status and OpenAI's error body carrying
// message (the status text when empty).
func Status(code int, message string) Step {
	return func(w http.ResponseWriter, c *Call) {
		if message == "" {
			message = http.StatusText(code)
		}
		typ, errCode := "invalid_request_error", ""
		switch {
		case code == http.StatusUnauthorized:
			errCode = "invalid_api_key"
		case code == http.StatusForbidden:
			typ = "permission_error"
		case code == http.StatusTooManyRequests:
			typ, errCode = "requests", "rate_limit_exceeded"
		case code >= 500:
			typ = "server_error"
		}
		writeError(w, code, typ, errCode, "", message)
	}
}

// RateLimit answers 429 with Retry-After in whole seconds, rounded up (no
// header when retryAfter is 0).
func RateLimit(retryAfter time.Duration) Step {
	step := Status(http.StatusTooManyRequests, "Rate limit reached for requests. Please try again later.")
	if retryAfter <= 0 {
		return step
	}
	return WithHeader(step, "Retry-After", fmt.Sprint(int(math.Ceil(retryAfter.Seconds()))))
}

// Raw answers with exactly this status, content type and body: an HTML page
// from a proxy, a body with extra fields, anything.
func Raw(status int, contentType, body string) Step {
	return func(w http.ResponseWriter, c *Call) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// WithHeader runs step with an extra response header, such as Retry-After
// as an HTTP date or x-ratelimit-reset-requests.
func WithHeader(step Step, key, value string) Step {
	return func(w http.ResponseWriter, c *Call) {
		w.Header().Set(key, value)
		step(w, c)
	}
}

// BrokenJSON answers 200 with the first half of a normal response body and
// a Content-Length to match: the body is complete on the wire but is not
// JSON, as when a proxy truncates a response.
func BrokenJSON() Step {
	return func(w http.ResponseWriter, c *Call) {
		body, _ := c.success()
		half := body[:len(body)/2]
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(half)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(half) // the client may hang up: it is being sent half a body
	}
}

// Stall holds the request for d before answering as the server would with
// nothing queued. It lets go at once when the client gives up or the server
// closes, so a test need not wait out d.
func Stall(d time.Duration) Step {
	return func(w http.ResponseWriter, c *Call) {
		if !c.wait(d) {
			return
		}
		c.s.mu.Lock()
		step := c.s.defaultLocked(c)
		c.s.mu.Unlock()
		step(w, c)
	}
}

// Latency answers as the server would with nothing queued, after d: an
// endpoint of fixed latency, for benchmarks of throughput. Like Stall it
// lets go when the client gives up. It may be the Always step.
func Latency(d time.Duration) Step {
	return func(w http.ResponseWriter, c *Call) {
		if c.wait(d) {
			answer(w, c)
		}
	}
}

// StallMidBody sends the headers and the first half of a normal response,
// then holds the rest back for d: the stall a client's timeout must cover
// while it reads the body.
func StallMidBody(d time.Duration) Step {
	return func(w http.ResponseWriter, c *Call) {
		body, u := c.success()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusOK)
		half := len(body) / 2
		if _, err := w.Write(body[:half]); err != nil {
			return
		}
		quiet.Do(http.NewResponseController(w).Flush) // a client gone shows in the next write
		if !c.wait(d) {
			return
		}
		if _, err := w.Write(body[half:]); err != nil {
			return
		}
		c.s.mu.Lock()
		c.s.usage = c.s.usage.Add(u)
		c.s.mu.Unlock()
	}
}

// CutShort sends the headers, with the Content-Length of a whole normal
// response, and half of its body, then closes the connection: a connection
// reset mid-response.
func CutShort() Step {
	return func(w http.ResponseWriter, c *Call) {
		body, _ := c.success()
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			c.s.t.Errorf("llmtest: CutShort: hijack: %v", err)
			return
		}
		defer quiet.Close(conn)
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		_, _ = buf.Write(body[:len(body)/2]) // the connection is cut next, whatever these say
		_ = buf.Flush()
	}
}
