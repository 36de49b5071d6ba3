package llm_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm"
	"github.com/engramhq/engram/internal/llm/llmtest"
)

// stallTimeout is the request timeout for cases that stall: long enough for
// a loopback answer, short enough to keep the suite quick.
const stallTimeout = 200 * time.Millisecond

func TestFailureKinds(t *testing.T) {
	cases := []struct {
		name      string
		step      llmtest.Step
		kind      llm.ErrorKind
		temporary bool
		status    int
	}{
		{"429", llmtest.RateLimit(0), llm.RateLimited, true, 429},
		{"429 out of credit", llmtest.Raw(429, "application/json",
			`{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`),
			llm.RateLimited, false, 429},
		{"500", llmtest.Status(500, ""), llm.Server, true, 500},
		{"503", llmtest.Status(503, "overloaded"), llm.Server, true, 503},
		{"502 plain text", llmtest.Raw(502, "text/plain", "upstream connect error"), llm.Server, true, 502},
		{"504 html", llmtest.Raw(504, "text/html", "<html><body>Gateway Timeout</body></html>"), llm.Server, true, 504},
		{"408", llmtest.Status(408, ""), llm.Timeout, true, 408},
		{"400", llmtest.Status(400, "context length exceeded"), llm.BadRequest, false, 400},
		{"404 model", llmtest.Status(404, `model "qwen3" not found, try pulling it first`), llm.BadRequest, false, 404},
		{"422", llmtest.Raw(422, "application/json", `{"detail":"invalid"}`), llm.BadRequest, false, 422},
		{"401", llmtest.Status(401, ""), llm.Auth, false, 401},
		{"403", llmtest.Status(403, ""), llm.Auth, false, 403},
		{"truncated body", llmtest.BrokenJSON(), llm.BadResponse, true, 0},
		{"html with 200", llmtest.Raw(200, "text/html", "<html>captive portal</html>"), llm.BadResponse, false, 0},
		{"no choices", llmtest.Raw(200, "application/json", `{"id":"x","object":"chat.completion","choices":[]}`), llm.BadResponse, false, 0},
		{"error with 200", llmtest.Raw(200, "application/json", `{"error":{"message":"upstream failed"}}`), llm.BadResponse, false, 0},
		{"content of wrong type", llmtest.Raw(200, "application/json", `{"choices":[{"message":{"content":42}}]}`), llm.BadResponse, false, 0},
		{"empty 200", llmtest.Raw(200, "application/json", ""), llm.BadResponse, true, 0},
		{"cut short", llmtest.CutShort(), llm.Transport, true, 0},
		{"stall before headers", llmtest.Stall(time.Hour), llm.Timeout, true, 0},
		{"stall mid body", llmtest.StallMidBody(time.Hour), llm.Timeout, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newClient(t, func(cfg *llm.Config) { cfg.Timeout = stallTimeout })
			srv.Enqueue(tc.step)
			_, err := c.Chat(t.Context(), prompt, false)
			e := asError(t, err)
			if e.Kind != tc.kind {
				t.Errorf("Kind=%v, want %v (err: %v)", e.Kind, tc.kind, err)
			}
			if got := e.Temporary(); got != tc.temporary {
				t.Errorf("Temporary()=%v, want %v (err: %v)", got, tc.temporary, err)
			}
			if got := llm.IsTemporary(fmt.Errorf("extract: %w", err)); got != tc.temporary {
				t.Errorf("IsTemporary(wrapped)=%v, want %v", got, tc.temporary)
			}
			if tc.status != 0 && e.Status != tc.status {
				t.Errorf("Status=%d, want %d", e.Status, tc.status)
			}
			if e.Op != "chat" || !strings.HasPrefix(err.Error(), "llm chat: ") {
				t.Errorf("Error()=%q, want it to start with the operation", err)
			}
		})
	}
}

func TestConnectionRefusedIsTransport(t *testing.T) {
	srv, c := newClient(t, nil)
	srv.Close()
	_, err := c.Chat(t.Context(), prompt, false)
	if e := asError(t, err); e.Kind != llm.Transport || !e.Temporary() {
		t.Errorf("err=%v, want a temporary Transport error", err)
	}
}

func TestServerMessageKept(t *testing.T) {
	srv, c := newClient(t, nil)
	srv.Enqueue(llmtest.Status(404, `model "qwen3" not found, try pulling it first`))
	_, err := c.Chat(t.Context(), prompt, false)
	if got, want := asError(t, err).Message, `model "qwen3" not found, try pulling it first`; got != want {
		t.Errorf("Message=%q, want %q", got, want)
	}
}

func TestRetryAfter(t *testing.T) {
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name     string
		step     llmtest.Step
		min, max time.Duration // zero max: no hint expected
	}{
		{"seconds", llmtest.RateLimit(3 * time.Second), 3 * time.Second, 3 * time.Second},
		{"http date", llmtest.WithHeader(llmtest.Status(429, ""), "Retry-After", date), 28 * time.Second, 31 * time.Second},
		{"date in the past", llmtest.WithHeader(llmtest.Status(429, ""), "Retry-After", "Mon, 02 Jan 2006 15:04:05 GMT"), 0, 0},
		{"milliseconds", llmtest.WithHeader(llmtest.RateLimit(5*time.Second), "retry-after-ms", "250"), 250 * time.Millisecond, 250 * time.Millisecond},
		{"on a 503", llmtest.WithHeader(llmtest.Status(503, ""), "Retry-After", "7"), 7 * time.Second, 7 * time.Second},
		{"exhausted request limit",
			llmtest.WithHeader(llmtest.WithHeader(llmtest.WithHeader(llmtest.WithHeader(llmtest.Status(429, ""),
				"x-ratelimit-reset-requests", "1m30s"), "x-ratelimit-remaining-requests", "0"),
				"x-ratelimit-reset-tokens", "20ms"), "x-ratelimit-remaining-tokens", "5000"),
			90 * time.Second, 90 * time.Second},
		{"reset in seconds", llmtest.WithHeader(llmtest.Status(429, ""), "x-ratelimit-reset-tokens", "7.5"), 7500 * time.Millisecond, 7500 * time.Millisecond},
		{"garbage", llmtest.WithHeader(llmtest.Status(429, ""), "Retry-After", "soon"), 0, 0},
		{"none", llmtest.Status(429, ""), 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := newClient(t, nil)
			srv.Enqueue(tc.step)
			_, err := c.Chat(t.Context(), prompt, false)
			d, ok := llm.RetryAfter(fmt.Errorf("wrapped: %w", err))
			if tc.max == 0 {
				if ok {
					t.Fatalf("RetryAfter=%s, want none", d)
				}
				return
			}
			if !ok || d < tc.min || d > tc.max {
				t.Fatalf("RetryAfter=%s,%v, want between %s and %s", d, ok, tc.min, tc.max)
			}
			if e := asError(t, err); e.RetryAfter != d || !strings.Contains(err.Error(), "retry after") {
				t.Errorf("Error()=%q, want the wait in it", err)
			}
		})
	}
	if _, ok := llm.RetryAfter(errors.New("plain")); ok {
		t.Error("RetryAfter(plain error) reported a wait")
	}
}

func TestSecretsNeverInErrors(t *testing.T) {
	const key = "sk-proj-SECRETabcdef0123456789"
	secret := "my bank password is hunter2 and my home address is 12 Rua Augusta"
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "Remember this: " + secret}}
	echoKey := "Incorrect API key provided: " + key + ". You can find your API key in your dashboard."
	// FastAPI-based servers (vLLM) quote the offending input back.
	echoPrompt := `{"detail":[{"type":"string_too_long","loc":["body","messages",0,"content"],"msg":"too long","input":"Remember this: ` + secret + `"}]}`
	steps := map[string]llmtest.Step{
		"401 echoing the key":     llmtest.Status(401, echoKey),
		"400 echoing the key":     llmtest.Status(400, echoKey),
		"429 echoing the key":     llmtest.Status(429, echoKey),
		"422 echoing the prompt":  llmtest.Raw(422, "application/json", echoPrompt),
		"500 text echoing both":   llmtest.Raw(500, "text/plain", "failed on "+key+" for "+secret),
		"200 error echoing both":  llmtest.Raw(200, "application/json", `{"error":{"message":"`+key+` `+secret+`"}}`),
		"400 quoting part of it":  llmtest.Status(400, "cannot parse 'bank password is hunter2 and my' in message"),
		"broken json":             llmtest.BrokenJSON(),
		"cut short":               llmtest.CutShort(),
		"stall":                   llmtest.Stall(time.Hour),
		"stall mid body":          llmtest.StallMidBody(time.Hour),
		"html":                    llmtest.Raw(503, "text/html", "<html>"+key+"</html>"),
		"no choices":              llmtest.Raw(200, "application/json", `{"choices":[]}`),
		"rate limited with reset": llmtest.WithHeader(llmtest.Status(429, secret), "x-ratelimit-reset-requests", "1s"),
	}
	for name, step := range steps {
		t.Run(name, func(t *testing.T) {
			srv, c := newClient(t, func(cfg *llm.Config) { cfg.APIKey = key; cfg.Timeout = stallTimeout })
			srv.Reply(func(req llmtest.ChatRequest) string { return req.LastUser() })
			srv.Enqueue(step)
			_, err := c.Chat(t.Context(), msgs, true)
			if err == nil {
				t.Fatal("Chat succeeded, want an error")
			}
			assertClean(t, err, key, secret)

			srv.EnqueueEmbed(step)
			_, _, err = c.Embed(t.Context(), []string{secret})
			if err == nil {
				t.Fatal("Embed succeeded, want an error")
			}
			assertClean(t, err, key, secret)
		})
	}
}

// assertClean fails if err's text, or any error it wraps, holds the key or
// a recognisable piece of the secret.
func assertClean(t *testing.T, err error, key, secret string) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		text := e.Error() + fmt.Sprintf(" %+v %#v", e, e)
		if strings.Contains(text, key) || strings.Contains(text, key[len(key)-12:]) {
			t.Errorf("error %q holds the API key", text)
		}
		for _, piece := range []string{secret, "hunter2", "Rua Augusta"} {
			if strings.Contains(text, piece) {
				t.Errorf("error %q holds the message content %q", text, piece)
			}
		}
	}
}

func TestBodyCap(t *testing.T) {
	const reply = `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`
	// Padding after the completion keeps the body large without making the
	// decoder (slow under -race) walk megabytes of content.
	padded := func(size int) llmtest.Step {
		return llmtest.Raw(200, "application/json", reply+strings.Repeat(" ", size-len(reply)))
	}
	srv, c := newClient(t, nil)
	srv.Enqueue(padded(llm.MaxResponseBytes+1), padded(llm.MaxResponseBytes))
	_, err := c.Chat(t.Context(), prompt, false)
	e := asError(t, err)
	if e.Kind != llm.BadResponse || e.Temporary() || !strings.Contains(e.Message, "larger than") {
		t.Fatalf("err=%v, want a permanent BadResponse about size", err)
	}
	if resp, err := c.Chat(t.Context(), prompt, false); err != nil || resp.Content != "ok" {
		t.Fatalf("Chat at exactly the cap: %v, %v", resp, err)
	}
}

func TestErrorKindString(t *testing.T) {
	if got, want := llm.RateLimited.String(), "rate limited"; got != want {
		t.Errorf("String()=%q, want %q", got, want)
	}
	if got, want := llm.ErrorKind(99).String(), "ErrorKind(99)"; got != want {
		t.Errorf("String()=%q, want %q", got, want)
	}
}
