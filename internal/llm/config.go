package llm

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Defaults used by Default and, for zero fields, by New.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultTemperature = 0.3 // low, so extraction is consistent (seed 001 §11.2)
)

// Config says which endpoint and model to use. The memory model is configured
// apart from the agent's own model (seed 001 §9); a Client made for embeddings
// is simply a second Client whose Model is an embedding model.
type Config struct {
	// BaseURL is the API root including its version, as the OpenAI SDKs take
	// it: https://api.openai.com/v1, http://localhost:11434/v1 (Ollama).
	// Empty means no LLM is configured.
	BaseURL string
	Model   string
	// APIKey is sent as a bearer token when set; local servers need none.
	APIKey string
	// Timeout bounds each HTTP request, reading the whole response included.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxTokens caps the completion; zero leaves it to the server.
	MaxTokens int
	// Temperature is always sent (0 is a valid choice), unless the model
	// rejects it.
	Temperature float64
	// Observe, when set, is told of every Chat and Embed call as it ends,
	// for metrics. It must not keep the Call's error past its return.
	Observe func(Call)
}

// Call is one Chat or Embed call, retries included, as Observe sees it.
type Call struct {
	Op       string // "chat" or "embed"
	Duration time.Duration
	Usage    Usage
	// ErrKind is the failure's kind (ErrorKind's name), "" on success.
	ErrKind string
}

// Default returns the configuration engram starts from: no endpoint, the
// default timeout and temperature.
func Default() Config {
	return Config{Timeout: DefaultTimeout, Temperature: DefaultTemperature}
}

// Enabled reports whether an endpoint is configured.
func (c Config) Enabled() bool { return c.BaseURL != "" }

// ConfigError names the Config field that is wrong, so the config loader can
// report it under its own key name.
type ConfigError struct {
	Field  string // Go field name in Config, e.g. "BaseURL"
	Reason string
}

func (e *ConfigError) Error() string { return "llm config: " + e.Field + ": " + e.Reason }

// ErrDisabled is returned by New when the Config has no BaseURL.
var ErrDisabled = errors.New("llm: no endpoint configured (BaseURL is empty)")

// Validate checks the Config. A Config with no BaseURL is valid: it means no
// LLM. The error never quotes APIKey.
func (c Config) Validate() error {
	if c.Timeout < 0 {
		return &ConfigError{"Timeout", fmt.Sprintf("must not be negative, got %s", c.Timeout)}
	}
	if c.MaxTokens < 0 {
		return &ConfigError{"MaxTokens", fmt.Sprintf("must not be negative, got %d", c.MaxTokens)}
	}
	if c.Temperature < 0 || c.Temperature > 2 {
		return &ConfigError{"Temperature", fmt.Sprintf("must be between 0 and 2, got %g", c.Temperature)}
	}
	if !c.Enabled() {
		return nil
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		// url.Parse's error quotes the URL, which may hold credentials.
		return &ConfigError{"BaseURL", "not a valid URL"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &ConfigError{"BaseURL", fmt.Sprintf("scheme must be http or https, got %q", u.Scheme)}
	}
	if u.Host == "" {
		return &ConfigError{"BaseURL", "has no host"}
	}
	if c.Model == "" {
		return &ConfigError{"Model", "required when BaseURL is set"}
	}
	return nil
}
