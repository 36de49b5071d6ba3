// Package mcpserver serves engram to MCP hosts (Claude Desktop, Cursor,
// agent frameworks) through the official Go SDK: tools to remember and
// recall, search, read and edit memories, decide pending ones and read
// episodes; the profile cards as resources.
//
// Every tool is one call to engram's HTTP API: in process for /mcp (Local),
// over the network for `engram mcp` on stdio (Remote). So both transports
// see the same routes, validation and scoping as the HTTP API, and a tool
// can do nothing its bearer token could not do over HTTP. This package
// must never read the store or publish events itself.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/engramhq/engram/internal/quiet"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// API performs one request on engram's HTTP API and returns its status
// and body. auth is the caller's Authorization header ("" for none).
type API func(ctx context.Context, method, path string, query url.Values, contentType string, body []byte, auth string) (int, []byte, error)

// Local calls h, engram's HTTP handler, in process, with the MCP request's
// own Authorization header, so /mcp is under the same tokens as the API.
func Local(h http.Handler) API {
	return func(ctx context.Context, method, path string, query url.Values, contentType string, body []byte, auth string) (int, []byte, error) {
		r, err := http.NewRequestWithContext(ctx, method, "http://engram"+path+"?"+query.Encode(), bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := &recorder{header: http.Header{}, status: http.StatusOK}
		h.ServeHTTP(w, r)
		return w.status, w.body.Bytes(), nil
	}
}

// recorder is the response of an in-process call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (w *recorder) Header() http.Header { return w.header }
func (w *recorder) Write(b []byte) (int, error) {
	w.wrote = true
	return w.body.Write(b)
}
func (w *recorder) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
}

// Remote calls the engram at base (http://127.0.0.1:7420) with token (""
// for none); the caller's own header is not used: on stdio there is none.
func Remote(base, token string, client *http.Client) API {
	base = strings.TrimSuffix(base, "/")
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	return func(ctx context.Context, method, path string, query url.Values, contentType string, body []byte, _ string) (int, []byte, error) {
		r, err := http.NewRequestWithContext(ctx, method, base+path+"?"+query.Encode(), bytes.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(r)
		if err != nil {
			return 0, nil, fmt.Errorf("engram at %s: %w (is it running?)", base, err)
		}
		defer quiet.Close(resp.Body)
		b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		return resp.StatusCode, b, err
	}
}

// Handler serves s over MCP's streamable HTTP transport, stateless (each
// request stands alone, so nothing is kept between requests) and with
// plain JSON responses.
func Handler(s *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// ServeStdio serves s on in and out (os.Stdin and os.Stdout for `engram
// mcp`) until the host closes in or ctx ends.
func ServeStdio(ctx context.Context, s *mcp.Server, in io.ReadCloser, out io.WriteCloser) error {
	return s.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

// New returns the MCP server: its tools and resources call api. user, when
// not empty, is the user of the calls that name none (a desktop host's
// single user); "" makes user required.
func New(api API, version, user string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "engram", Title: "engram memory", Version: version}, &mcp.ServerOptions{
		Instructions: "engram is long-term memory across conversations. Before you answer a message of the user's, " +
			"call recall with it and put the block it answers (rendered) in your prompt. When the user states " +
			"something worth keeping, or asks you to remember something, call remember with it in plain words. " +
			"Memories are per user: pass the same user id every time.",
	})
	t := tools{api: api, user: user}
	t.register(s)
	for _, card := range []struct{ name, key, desc string }{
		{"MEMORY.md", "memory_md", "What engram remembers about the user, as a card: facts, preferences, rules, by kind."},
		{"USER.md", "user_md", "Who the user is: the core profile (tier 1 memories) and the scratchpad."},
	} {
		s.AddResourceTemplate(&mcp.ResourceTemplate{
			Name: card.name, Title: card.name, Description: card.desc, MIMEType: "text/markdown",
			URITemplate: "engram://{namespace}/{user}/" + card.name,
		}, t.card(card.key))
	}
	return s
}

type tools struct {
	api  API
	user string
}

// call runs one API request for a tool and returns its JSON body; an API
// error becomes the tool's error, with the API's code and message.
func (t tools) call(ctx context.Context, req *mcp.CallToolRequest, method, path string, q url.Values, contentType string, body any) (json.RawMessage, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
		if contentType == "" {
			contentType = "application/json"
		}
	}
	return t.do(ctx, authOf(req), method, path, q, contentType, raw)
}

func (t tools) do(ctx context.Context, auth, method, path string, q url.Values, contentType string, raw []byte) (json.RawMessage, error) {
	status, out, err := t.api(ctx, method, path, q, contentType, raw, auth)
	if err != nil {
		return nil, err
	}
	if status >= 300 {
		var e struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal(out, &e) == nil && e.Error.Message != "" {
			return nil, fmt.Errorf("%s: %s", e.Error.Code, e.Error.Message)
		}
		return nil, fmt.Errorf("engram answered %d: %.200s", status, out)
	}
	return out, nil
}

// authOf is the Authorization header of the MCP request that carried req
// (streamable HTTP); "" on stdio.
func authOf(req *mcp.CallToolRequest) string {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return ""
	}
	return req.Extra.Header.Get("Authorization")
}

// result is a tool's answer: the text (when there is one worth reading as
// such) and the API's JSON, as text and as structured content, which the
// SDK holds to the tool's output schema.
func result(raw json.RawMessage, text string) (*mcp.CallToolResult, any, error) {
	var structured any
	if err := json.Unmarshal(raw, &structured); err != nil {
		return nil, nil, fmt.Errorf("engram's answer is not JSON: %w", err)
	}
	res := &mcp.CallToolResult{}
	if text != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: text})
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: string(raw)})
	return res, structured, nil
}

// card reads a profile card (memory_md or user_md) of the user in the URI.
func (t tools) card(key string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		u, err := url.Parse(req.Params.URI)
		if err != nil || u.Scheme != "engram" {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		ns, _ := url.PathUnescape(u.Host)
		parts := strings.Split(strings.TrimPrefix(u.EscapedPath(), "/"), "/")
		if ns == "" || len(parts) != 2 {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		user, err := url.PathUnescape(parts[0])
		if err != nil || user == "" {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		auth := ""
		if req.Extra != nil && req.Extra.Header != nil {
			auth = req.Extra.Header.Get("Authorization")
		}
		raw, err := t.do(ctx, auth, http.MethodGet, "/v1/profile", url.Values{"namespace": {ns}, "user": {user}}, "", nil)
		if err != nil {
			return nil, err
		}
		var profile map[string]any
		if err := json.Unmarshal(raw, &profile); err != nil {
			return nil, err
		}
		text, _ := profile[key].(string)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}}, nil
	}
}
