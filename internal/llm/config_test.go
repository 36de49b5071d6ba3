package llm_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/llm"
)

func TestConfigValidate(t *testing.T) {
	good := llm.Config{BaseURL: "http://localhost:11434/v1", Model: "qwen3:4b", Timeout: time.Second, Temperature: 0.3}
	cases := []struct {
		name  string
		edit  func(*llm.Config)
		field string // "" means valid
	}{
		{"good", func(*llm.Config) {}, ""},
		{"no endpoint is valid", func(c *llm.Config) { *c = llm.Default() }, ""},
		{"https with path and query", func(c *llm.Config) { c.BaseURL = "https://x.openai.azure.com/openai/v1?api-version=preview" }, ""},
		{"no model", func(c *llm.Config) { c.Model = "" }, "Model"},
		{"ftp", func(c *llm.Config) { c.BaseURL = "ftp://host/v1" }, "BaseURL"},
		{"no scheme", func(c *llm.Config) { c.BaseURL = "localhost:11434/v1" }, "BaseURL"},
		{"no host", func(c *llm.Config) { c.BaseURL = "http:///v1" }, "BaseURL"},
		{"unparsable", func(c *llm.Config) { c.BaseURL = "http://user:p%zz@host/v1" }, "BaseURL"},
		{"negative timeout", func(c *llm.Config) { c.Timeout = -time.Second }, "Timeout"},
		{"negative max tokens", func(c *llm.Config) { c.MaxTokens = -1 }, "MaxTokens"},
		{"hot", func(c *llm.Config) { c.Temperature = 2.5 }, "Temperature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			cfg.APIKey = "sk-do-not-print"
			tc.edit(&cfg)
			err := cfg.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate()=%v, want nil", err)
				}
				return
			}
			var ce *llm.ConfigError
			if !errors.As(err, &ce) || ce.Field != tc.field {
				t.Fatalf("Validate()=%v, want a ConfigError naming %s", err, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) || strings.Contains(err.Error(), "p%zz") || strings.Contains(err.Error(), "sk-do-not-print") {
				t.Errorf("Error()=%q: want the field named and no secrets", err)
			}
		})
	}
}

func TestConfigEnabledAndDefault(t *testing.T) {
	d := llm.Default()
	if d.Enabled() {
		t.Error("Default() is enabled, want no LLM")
	}
	if d.Timeout != llm.DefaultTimeout || d.Temperature != llm.DefaultTemperature {
		t.Errorf("Default()=%+v", d)
	}
	d.BaseURL = "http://localhost:8080/v1"
	if !d.Enabled() {
		t.Error("a Config with BaseURL is not enabled")
	}
}
