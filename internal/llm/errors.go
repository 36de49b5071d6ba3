package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/chars"
)

// ErrorKind classifies a failure so that callers decide about retries in one
// place.
type ErrorKind int

const (
	_ ErrorKind = iota
	// RateLimited: HTTP 429. Wait RetryAfter when the server gave one.
	RateLimited
	// Timeout: no complete response within Config.Timeout (or the caller's
	// deadline), or HTTP 408.
	Timeout
	// Server: HTTP 5xx.
	Server
	// Transport: the connection failed or the body was cut short.
	Transport
	// BadRequest: any other 4xx; sending the same request again will not help.
	BadRequest
	// Auth: HTTP 401 or 403.
	Auth
	// BadResponse: the server answered 2xx with something that is not a
	// valid response body.
	BadResponse
	// Canceled: the caller's context was canceled (shutdown); the request
	// itself did not fail.
	Canceled
)

var kindNames = map[ErrorKind]string{
	RateLimited: "rate limited",
	Timeout:     "timeout",
	Server:      "server error",
	Transport:   "transport error",
	BadRequest:  "bad request",
	Auth:        "auth failed",
	BadResponse: "bad response",
	Canceled:    "canceled",
}

func (k ErrorKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "ErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// Error is every failure Chat and Embed return. Its text never holds the API
// key or the content of the request.
type Error struct {
	Op         string // "chat" or "embed"
	Kind       ErrorKind
	Status     int    // HTTP status, 0 when no response arrived
	Code       string // the server's error code or type, e.g. "insufficient_quota"
	RetryAfter time.Duration
	Message    string

	truncated bool   // BadResponse whose body ended early
	refused   string // a request field the server does not support; see refusedField
	err       error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm %s: %s", e.Op, e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d", e.Status)
		if e.Code != "" {
			b.WriteString(", " + e.Code)
		}
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, "; retry after %s", e.RetryAfter)
	}
	return b.String()
}

// Unwrap returns the underlying cause, so errors.Is(err, context.Canceled)
// and errors.Is(err, context.DeadlineExceeded) work.
func (e *Error) Unwrap() error { return e.err }

// Temporary reports whether the same request may succeed later.
func (e *Error) Temporary() bool {
	switch e.Kind {
	case RateLimited:
		// OpenAI answers 429 insufficient_quota when the account is out of
		// credit: waiting will not fix it.
		return e.Code != "insufficient_quota"
	case Timeout, Server, Transport, Canceled:
		return true
	case BadResponse:
		return e.truncated
	default:
		return false
	}
}

// IsTemporary reports whether err is an *Error that is Temporary.
func IsTemporary(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Temporary()
}

// RetryAfter returns how long the server asked the caller to wait, if it did.
func RetryAfter(err error) (time.Duration, bool) {
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter, true
	}
	return 0, false
}

func kindForStatus(status int) ErrorKind {
	switch {
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return Auth
	case status == http.StatusRequestTimeout:
		return Timeout
	case status >= 500:
		return Server
	case status >= 400:
		return BadRequest
	default:
		return BadResponse
	}
}

// serverError is what OpenAI-compatible servers put in an error body. The
// shapes vary: OpenAI and vLLM nest an object under "error", Ollama's native
// API and some proxies put a string there, FastAPI servers use "detail".
type serverError struct {
	Message string
	Type    string
	Code    string
	Param   string
}

func parseServerError(body []byte) (serverError, bool) {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &env) != nil {
		return serverError{}, false
	}
	var se serverError
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   json.RawMessage `json:"param"`
	}
	var s string
	switch {
	case json.Unmarshal(env.Error, &obj) == nil && obj.Message != "":
		se = serverError{Message: obj.Message, Type: obj.Type, Code: scalar(obj.Code), Param: scalar(obj.Param)}
	case json.Unmarshal(env.Error, &s) == nil && s != "":
		se.Message = s
	case len(env.Detail) > 0:
		if json.Unmarshal(env.Detail, &s) == nil {
			se.Message = s
		} else {
			se.Message = string(env.Detail)
		}
	case env.Message != "":
		se.Message = env.Message
	default:
		return serverError{}, false
	}
	return se, true
}

// scalar turns a JSON string or number into text; servers disagree on which
// one "code" is.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// retryAfter reads how long to wait from, in order of precision:
// retry-after-ms (OpenAI, Azure), Retry-After in seconds or as an HTTP date,
// and the x-ratelimit-reset-* headers of OpenAI-style rate limiters.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s > 0 {
				return time.Duration(s * float64(time.Second))
			}
		} else if t, err := http.ParseTime(v); err == nil {
			if d := t.Sub(now); d > 0 {
				return d
			}
		}
	}
	// Prefer the reset of a limit that is used up; otherwise the soonest.
	var exhausted, soonest time.Duration
	for _, limit := range []string{"requests", "tokens", ""} {
		name := "x-ratelimit-reset"
		remaining := "x-ratelimit-remaining"
		if limit != "" {
			name += "-" + limit
			remaining += "-" + limit
		}
		d, ok := resetDuration(h.Get(name), now)
		if !ok {
			continue
		}
		if strings.TrimSpace(h.Get(remaining)) == "0" {
			exhausted = max(exhausted, d)
		}
		if soonest == 0 || d < soonest {
			soonest = d
		}
	}
	if exhausted > 0 {
		return exhausted
	}
	return soonest
}

// resetDuration parses an x-ratelimit-reset value: a Go-style duration
// ("6m0s", "20ms", OpenAI and Groq), seconds, or a Unix time.
func resetDuration(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		return 0, false
	}
	if f > 1e9 { // a Unix timestamp, not a number of seconds
		d := time.Unix(int64(f), 0).Sub(now)
		return d, d > 0
	}
	return time.Duration(f * float64(time.Second)), true
}

const (
	maxMessageBytes = 300
	quoteWindow     = 24 // a run this long shared with the request counts as a quote
	quoteStride     = 8
)

// sanitize makes a server's message safe to show: the key is redacted, the
// text is cut short, and if it quotes any request content it is withheld.
func sanitize(msg, apiKey string, contents []string) string {
	if apiKey != "" {
		msg = strings.ReplaceAll(msg, apiKey, "[redacted]")
	}
	// Look for quotes before whitespace is folded, while the text still
	// matches the request byte for byte.
	if quotes(chars.ClipBytes(msg, 8*maxMessageBytes), contents) {
		return "[server message withheld: it quotes the request]"
	}
	msg = strings.ToValidUTF8(msg, "?")
	msg = strings.Join(strings.Fields(msg), " ")
	return chars.ClipBytes(msg, maxMessageBytes)
}

// quotes reports whether msg shares a run of quoteWindow bytes with any of
// contents, or holds a whole content that is at least 8 bytes long.
func quotes(msg string, contents []string) bool {
	for _, c := range contents {
		if len(c) >= 8 && len(c) < quoteWindow && strings.Contains(msg, c) {
			return true
		}
	}
	for i := 0; i+quoteWindow <= len(msg); i += quoteStride {
		w := msg[i : i+quoteWindow]
		for _, c := range contents {
			if strings.Contains(c, w) {
				return true
			}
		}
	}
	return false
}

// refusedField reads a 4xx error for a request field that the server or
// model does not support and that a Client can do without. Only the field's
// name is kept: the message itself may quote the key or the request.
func refusedField(param, message string) string {
	msg := strings.ToLower(message)
	names := func(field string) bool { return param == field || strings.Contains(msg, field) }
	unsupported := strings.Contains(msg, "unsupported") || strings.Contains(msg, "not support")
	switch {
	// OpenAI's demand that the prompt mention JSON is the caller's mistake,
	// not a missing feature.
	case (names("response_format") || names("json_object")) && !strings.Contains(msg, "must contain the word"):
		return "response_format"
	case names("temperature") && unsupported:
		return "temperature"
	case names("max_tokens") && strings.Contains(msg, "max_completion_tokens"):
		return "max_tokens"
	}
	return ""
}
