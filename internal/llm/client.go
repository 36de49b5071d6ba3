package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/engramhq/engram/internal/quiet"
)

const (
	// MaxResponseBytes caps how much of a chat response is read. Completions
	// are small; a body this large means a misbehaving server.
	MaxResponseBytes = 8 << 20
	// embedBytesPerInput is added to the cap for each embedding input: a
	// 3,072-dimension vector in JSON is about 60 KiB.
	embedBytesPerInput = 64 << 10
	maxErrorBodyBytes  = 64 << 10
	userAgent          = "engram"
)

// Roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one chat message, as sent on the wire.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Usage is what the server said a request cost.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens, u.TotalTokens + v.TotalTokens}
}

// Response is one chat completion.
type Response struct {
	Content      string
	Usage        Usage
	Model        string // the model the server says answered
	FinishReason string // "stop", or "length" when MaxTokens cut it short
}

// Client sends requests to one OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg      Config
	http     *http.Client
	chatURL  string
	embedURL string

	// What the server turned out not to accept; learned once, kept for the
	// life of the Client.
	noJSONMode      atomic.Bool
	noTemperature   atomic.Bool
	completionLimit atomic.Bool // send max_completion_tokens instead of max_tokens
}

// New returns a Client for cfg. httpClient may be nil; its own Timeout, if
// any, applies on top of cfg.Timeout.
func New(cfg Config, httpClient *http.Client) (*Client, error) {
	if !cfg.Enabled() {
		return nil, ErrDisabled
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil { // Validate already parsed it
		return nil, &ConfigError{"BaseURL", "not a valid URL"}
	}
	return &Client{
		cfg:      cfg,
		http:     httpClient,
		chatURL:  base.JoinPath("chat/completions").String(),
		embedURL: base.JoinPath("embeddings").String(),
	}, nil
}

// Model returns the configured model name.
func (c *Client) Model() string { return c.cfg.Model }

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage Usage `json:"usage"`
}

// Chat sends one chat-completions request and returns the first choice.
//
// With jsonMode it asks for a JSON object (response_format json_object). A
// server that rejects response_format (llama.cpp, older servers) is asked
// again without it, and the Client stops sending it; temperature and
// max_tokens, which reasoning models refuse, are handled the same way.
// Callers should pass the content through JSONContent either way. Config.Timeout
// bounds each request sent, so such a call may take up to four of them.
func (c *Client) Chat(ctx context.Context, msgs []Message, jsonMode bool) (res *Response, err error) {
	if c.cfg.Observe != nil {
		defer func(start time.Time) {
			var u Usage
			if res != nil {
				u = res.Usage
			}
			c.cfg.Observe(Call{Op: "chat", Duration: time.Since(start), Usage: u, ErrKind: errKind(err)})
		}(time.Now())
	}
	if len(msgs) == 0 {
		return nil, &Error{Op: "chat", Kind: BadRequest, Message: "no messages"}
	}
	contents := make([]string, len(msgs))
	for i, m := range msgs {
		contents[i] = m.Content
	}
	// Each retry drops one field for good, so there are at most three.
	for attempt := 0; ; attempt++ {
		req := c.chatRequest(msgs, jsonMode)
		data, err := c.post(ctx, "chat", c.chatURL, req, contents, MaxResponseBytes)
		if err != nil {
			if attempt < 3 && c.adapt(err, req) {
				continue
			}
			return nil, err
		}
		return c.parseChat(data, contents)
	}
}

func (c *Client) chatRequest(msgs []Message, jsonMode bool) *chatRequest {
	req := &chatRequest{Model: c.cfg.Model, Messages: msgs}
	if jsonMode && !c.noJSONMode.Load() {
		req.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	if !c.noTemperature.Load() {
		t := c.cfg.Temperature
		req.Temperature = &t
	}
	if c.completionLimit.Load() {
		req.MaxCompletionTokens = c.cfg.MaxTokens
	} else {
		req.MaxTokens = c.cfg.MaxTokens
	}
	return req
}

// adapt reports whether err is the server refusing a field that req carried
// and that the Client can do without, and if so stops sending it.
func (c *Client) adapt(err error, req *chatRequest) bool {
	var e *Error
	if !errors.As(err, &e) || e.Kind != BadRequest {
		return false
	}
	switch {
	case e.refused == "response_format" && req.ResponseFormat != nil:
		c.noJSONMode.Store(true)
	case e.refused == "temperature" && req.Temperature != nil:
		c.noTemperature.Store(true)
	case e.refused == "max_tokens" && req.MaxTokens != 0:
		c.completionLimit.Store(true)
	default:
		return false
	}
	return true
}

// errKind names err's kind for Observe.
func errKind(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind.String()
	}
	return "other"
}

func (c *Client) parseChat(data []byte, contents []string) (*Response, error) {
	var body chatResponse
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&body); err != nil {
		return nil, c.badBody("chat", data, err, contents)
	}
	if len(body.Choices) == 0 {
		return nil, c.badBody("chat", data, errors.New("no choices"), contents)
	}
	choice := body.Choices[0]
	content, err := messageContent(choice.Message.Content)
	if err != nil {
		return nil, &Error{Op: "chat", Kind: BadResponse, Message: "message content: " + err.Error()}
	}
	u := body.Usage
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return &Response{Content: content, Usage: u, Model: body.Model, FinishReason: choice.FinishReason}, nil
}

// messageContent accepts content as a string, null, or the array of text
// parts some servers send.
func messageContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("neither a string nor an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// badBody describes a 2xx body that could not be used. A body that ends
// early is worth asking for again; one that is whole but wrong is not.
func (c *Client) badBody(op string, data []byte, err error, contents []string) *Error {
	e := &Error{Op: op, Kind: BadResponse}
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		e.truncated = true
		e.Message = fmt.Sprintf("response body ends early (%d bytes)", len(data))
	default:
		var typeErr *json.UnmarshalTypeError
		var syntaxErr *json.SyntaxError
		switch {
		case errors.As(err, &syntaxErr):
			e.Message = fmt.Sprintf("response body is not JSON (%d bytes)", len(data))
		case errors.As(err, &typeErr):
			e.Message = fmt.Sprintf("response field %q has the wrong type", typeErr.Field)
		default:
			e.Message = "response body: " + err.Error()
		}
		if se, ok := parseServerError(data); ok {
			e.Code = cmp.Or(se.Code, se.Type)
			e.Message += ": server says: " + sanitize(se.Message, c.cfg.APIKey, contents)
		}
	}
	return e
}

// post sends payload as JSON to url and returns the body of a 2xx response,
// at most limit bytes of it. contents are the texts in the request, which
// must not leak into errors.
func (c *Client) post(ctx context.Context, op, url string, payload any, contents []string, limit int64) ([]byte, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, &Error{Op: op, Kind: BadRequest, Message: "encode request: " + err.Error(), err: err}
	}
	reqCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &Error{Op: op, Kind: BadRequest, Message: "build request", err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}

	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, reqCtx, op, "send request", err)
	}
	defer quiet.Close(resp.Body)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.statusError(op, resp, contents)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, c.transportError(ctx, reqCtx, op, "read response", err)
	}
	if int64(len(data)) > limit {
		return nil, &Error{Op: op, Kind: BadResponse, Status: resp.StatusCode,
			Message: fmt.Sprintf("response body larger than %d bytes", limit)}
	}
	return data, nil
}

// transportError classifies a failure to get a whole response. parent is the
// caller's context and reqCtx the one carrying the request timeout.
func (c *Client) transportError(parent, reqCtx context.Context, op, doing string, err error) *Error {
	switch {
	case errors.Is(parent.Err(), context.Canceled):
		return &Error{Op: op, Kind: Canceled, Message: doing + ": canceled by caller", err: parent.Err()}
	case parent.Err() != nil:
		return &Error{Op: op, Kind: Timeout, Message: doing + ": caller's deadline passed", err: parent.Err()}
	case reqCtx.Err() != nil:
		return &Error{Op: op, Kind: Timeout, Message: fmt.Sprintf("%s: no complete response within %s", doing, c.cfg.Timeout), err: reqCtx.Err()}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return &Error{Op: op, Kind: Timeout, Message: doing + ": " + describe(err), err: err}
	}
	return &Error{Op: op, Kind: Transport, Message: doing + ": " + describe(err), err: err}
}

// describe gives the cause of a transport error without the request URL,
// which may carry credentials in its query.
func describe(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "connection closed before the body was complete"
	}
	return err.Error()
}

func (c *Client) statusError(op string, resp *http.Response, contents []string) *Error {
	e := &Error{
		Op:         op,
		Kind:       kindForStatus(resp.StatusCode),
		Status:     resp.StatusCode,
		RetryAfter: retryAfter(resp.Header, time.Now()),
	}
	// A short read is fine: the status already says what happened.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	if se, ok := parseServerError(body); ok {
		e.Code = cmp.Or(se.Code, se.Type)
		e.refused = refusedField(se.Param, se.Message)
		e.Message = sanitize(se.Message, c.cfg.APIKey, contents)
	} else if text := strings.TrimSpace(string(body)); text != "" && !strings.HasPrefix(text, "<") {
		// Plain-text errors from proxies are worth showing; HTML pages are not.
		e.refused = refusedField("", text)
		e.Message = sanitize(text, c.cfg.APIKey, contents)
	} else {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}
