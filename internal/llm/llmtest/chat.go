package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/engramhq/engram/internal/llm"
)

// ChatRequest is a decoded POST /v1/chat/completions body.
type ChatRequest struct {
	Model               string          `json:"model"`
	Messages            []llm.Message   `json:"messages"`
	ResponseFormat      *ResponseFormat `json:"response_format,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	MaxTokens           *int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	Seed                *int            `json:"seed,omitempty"`
	Stop                json.RawMessage `json:"stop,omitempty"`
	User                string          `json:"user,omitempty"`
	Stream              bool            `json:"stream,omitempty"`

	// Header holds the request's HTTP headers (Authorization, User-Agent).
	Header http.Header `json:"-"`
}

// ResponseFormat is the request's response_format.
type ResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// JSONMode reports whether the request asked for JSON output.
func (r ChatRequest) JSONMode() bool {
	return r.ResponseFormat != nil && (r.ResponseFormat.Type == "json_object" || r.ResponseFormat.Type == "json_schema")
}

// System returns the system messages' content, joined by newlines.
func (r ChatRequest) System() string {
	return r.joined(func(role string) bool { return role == llm.RoleSystem })
}

// Prompt returns every message's content, joined by newlines.
func (r ChatRequest) Prompt() string { return r.joined(func(string) bool { return true }) }

// LastUser returns the content of the last user message.
func (r ChatRequest) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

func (r ChatRequest) joined(keep func(role string) bool) string {
	var parts []string
	for _, m := range r.Messages {
		if keep(m.Role) {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

var roles = []string{"system", "developer", "user", "assistant", "tool"}

func decodeChat(r *http.Request) (ChatRequest, error) {
	var req ChatRequest
	if err := decodeStrict(r, &req); err != nil {
		return req, err
	}
	req.Header = r.Header.Clone()
	switch {
	case req.Model == "":
		return req, &invalidError{"model", "you must provide a model parameter"}
	case len(req.Messages) == 0:
		return req, &invalidError{"messages", "[] is too short - 'messages'"}
	case req.Stream:
		return req, &invalidError{"stream", "llmtest does not support streaming"}
	case req.ResponseFormat != nil && !slices.Contains([]string{"text", "json_object", "json_schema"}, req.ResponseFormat.Type):
		return req, &invalidError{"response_format.type", fmt.Sprintf("Invalid value: %q. Supported values are: 'text', 'json_object' and 'json_schema'.", req.ResponseFormat.Type)}
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2):
		return req, &invalidError{"temperature", fmt.Sprintf("%g is greater than the maximum of 2 or less than 0 - 'temperature'", *req.Temperature)}
	case req.MaxTokens != nil && *req.MaxTokens < 1:
		return req, &invalidError{"max_tokens", "max_tokens must be at least 1"}
	case req.MaxCompletionTokens != nil && *req.MaxCompletionTokens < 1:
		return req, &invalidError{"max_completion_tokens", "max_completion_tokens must be at least 1"}
	}
	for i, m := range req.Messages {
		if !slices.Contains(roles, m.Role) {
			return req, &invalidError{fmt.Sprintf("messages[%d].role", i),
				fmt.Sprintf("Invalid value: %q. Supported values are: %s.", m.Role, strings.Join(roles, ", "))}
		}
	}
	return req, nil
}

// rejectParam answers 400 if req carries a field the server was told to
// refuse, in the words OpenAI uses for reasoning models.
func rejectParam(w http.ResponseWriter, req ChatRequest, rejected []string) bool {
	present := map[string]bool{
		"response_format":       req.ResponseFormat != nil,
		"temperature":           req.Temperature != nil,
		"max_tokens":            req.MaxTokens != nil,
		"max_completion_tokens": req.MaxCompletionTokens != nil,
		"top_p":                 req.TopP != nil,
		"seed":                  req.Seed != nil,
		"stop":                  req.Stop != nil,
	}
	for _, name := range rejected {
		if !present[name] {
			continue
		}
		msg := fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", name)
		code := "unsupported_parameter"
		switch name {
		case "temperature":
			msg = fmt.Sprintf("Unsupported value: 'temperature' does not support %g with this model. Only the default (1) value is supported.", *req.Temperature)
			code = "unsupported_value"
		case "max_tokens":
			msg += " Use 'max_completion_tokens' instead."
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", code, name, msg)
		return true
	}
	return false
}
