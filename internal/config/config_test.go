package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestFileThenEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engram.yaml")
	if err := os.WriteFile(path, []byte("data_dir: /from/file\nllm:\n  base_url: http://localhost:11434/v1\n  model: qwen3\nextract:\n  token_cap: 4000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(Default(), path, env(map[string]string{"ENGRAM_DATA_DIR": "/from/env", "ENGRAM_NATS_LISTEN": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "/from/env" || cfg.LLM.Model != "qwen3" || cfg.Extract.TokenCap != 4000 || cfg.NATS.Listen != "" {
		t.Fatalf("cfg = %+v", cfg)
	}
}

func TestBadValuesNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		file string
		want string
	}{
		{env: map[string]string{"ENGRAM_HTTP_ADDR": "0.0.0.0:7420"}, want: "http.tokens"},
		{env: map[string]string{"ENGRAM_NATS_SYNC": "sometimes"}, want: "nats.sync"},
		{env: map[string]string{"ENGRAM_MAX_EVENT_BYTES": "ten"}, want: "ENGRAM_MAX_EVENT_BYTES"},
		{env: map[string]string{"ENGRAM_LLM_BASE_URL": "http://x/v1"}, want: "llm.model"},
		{env: map[string]string{"ENGRAM_EXTRACT_SWEEP_AT": "3am"}, want: "extract.sweep_at"},
		{env: map[string]string{"ENGRAM_HTTP_TOKENS": "short=acme"}, want: "shorter than 16"},
		{env: map[string]string{"ENGRAM_RETENTION_RAW_TURNS": "30d"}, want: "ENGRAM_RETENTION_RAW_TURNS"},
		{env: map[string]string{"ENGRAM_RETENTION_RAW_TURNS": "-1h"}, want: "retention.raw_turns"},
		{file: "retention:\n  raw_turns: 500ms\n", want: "retention.raw_turns"},
		{env: map[string]string{"ENGRAM_HTTP_ALLOWED_HOSTS": "https://memory.example.com"}, want: "http.allowed_hosts"},
		{env: map[string]string{"ENGRAM_HTTP_ALLOWED_HOSTS": "memory.example.com:443"}, want: "without scheme, port or path"},
		{env: map[string]string{"ENGRAM_HTTP_ALLOWED_HOSTS": "*"}, want: "needs http.tokens"},
		{env: map[string]string{"ENGRAM_HTTP_ADVERTISE_URL": "10.0.0.5:7421"}, want: "http.advertise_url"},
		{env: map[string]string{"ENGRAM_HTTP_ADVERTISE_URL": "http://10.0.0.5:7421/api"}, want: "no path"},
		{env: map[string]string{"ENGRAM_HTTP_ADVERTISE_URL": "http://0.0.0.0:7421"}, want: "no address another instance can reach"},
		{env: map[string]string{"ENGRAM_INSTANCE": "r1.example.com"}, want: "ENGRAM_INSTANCE"},
		{file: "data_dir: x\nunknown_key: 1\n", want: "unknown_key"},
		{file: "data_dir: [\n", want: "line"},
	} {
		path := ""
		if tc.file != "" {
			path = filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(Default(), path, env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %q: error %v, want it to mention %q", tc.env, tc.file, err, tc.want)
		}
	}
}

// The hosts the API answers to: those configured (names, addresses, "*"
// with tokens) and the listen address's own.
func TestAllowedHosts(t *testing.T) {
	cfg, err := Load(Default(), "", env(map[string]string{"ENGRAM_HTTP_ALLOWED_HOSTS": " memory.example.com, 10.0.0.5,[::2],",
		"ENGRAM_HTTP_ADDR": "192.168.1.5:7420", "ENGRAM_HTTP_TOKENS": "token-0123456789abcdef=*"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(cfg.HTTP.Hosts(), " "), "memory.example.com 10.0.0.5 [::2] 192.168.1.5"; got != want {
		t.Fatalf("Hosts() = %q, want %q", got, want)
	}
	if got := Default().HTTP.Hosts(); len(got) != 1 || got[0] != "127.0.0.1" {
		t.Fatalf("default Hosts() = %q, want the listen address's", got)
	}
	if _, err := Load(Default(), "", env(map[string]string{"ENGRAM_HTTP_ALLOWED_HOSTS": "*",
		"ENGRAM_HTTP_TOKENS": "token-0123456789abcdef=*"})); err != nil {
		t.Fatalf("* with tokens: %v", err)
	}
}

// Where the other instances reach the API: the configured URL; else the
// listen address's host with the port bound; nothing when the host is
// unspecified or "none" is asked for. The advertised host is answered.
func TestAdvertised(t *testing.T) {
	for _, tc := range []struct{ addr, advertise, bound, want string }{
		{addr: "127.0.0.1:0", bound: "127.0.0.1:41234", want: "http://127.0.0.1:41234"},
		{addr: "10.0.0.5:7421", bound: "10.0.0.5:7421", want: "http://10.0.0.5:7421"},
		{addr: "retriever-1.internal:7421", bound: "10.0.0.5:7421", want: "http://retriever-1.internal:7421"},
		{addr: "[::1]:7421", bound: "[::1]:7421", want: "http://[::1]:7421"},
		{addr: ":7421", bound: "[::]:7421", want: ""},
		{addr: "0.0.0.0:7421", bound: "0.0.0.0:7421", want: ""},
		{addr: "0.0.0.0:7421", advertise: "http://10.0.0.5:7421/", bound: "0.0.0.0:7421", want: "http://10.0.0.5:7421"},
		{addr: "127.0.0.1:7421", advertise: "none", bound: "127.0.0.1:7421", want: ""},
	} {
		h := HTTP{Addr: tc.addr, AdvertiseURL: tc.advertise}
		if err := CheckAdvertiseURL(tc.advertise); err != nil {
			t.Errorf("%q: %v", tc.advertise, err)
		}
		if got := h.Advertised(tc.bound); got != tc.want {
			t.Errorf("Advertised(%q) with addr %q, advertise_url %q = %q, want %q", tc.bound, tc.addr, tc.advertise, got, tc.want)
		}
	}
	h := HTTP{Addr: "0.0.0.0:7421", AdvertiseURL: "http://retriever-1.internal:7421"}
	if got, want := strings.Join(h.Hosts(), " "), "0.0.0.0 retriever-1.internal"; got != want {
		t.Errorf("Hosts() = %q, want %q", got, want)
	}
}

// Retention is off unless set; the file and the variable set it.
func TestRetention(t *testing.T) {
	if got := Default().Retention.RawTurns; got != 0 {
		t.Fatalf("default retention.raw_turns=%s, want 0 (off)", got)
	}
	path := filepath.Join(t.TempDir(), "engram.yaml")
	if err := os.WriteFile(path, []byte("retention:\n  raw_turns: 720h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(Default(), path, env(nil))
	if err != nil || cfg.Retention.RawTurns != 720*time.Hour {
		t.Fatalf("file: %s, %v; want 720h", cfg.Retention.RawTurns, err)
	}
	cfg, err = Load(Default(), path, env(map[string]string{"ENGRAM_RETENTION_RAW_TURNS": "0"}))
	if err != nil || cfg.Retention.RawTurns != 0 {
		t.Fatalf("ENGRAM_RETENTION_RAW_TURNS=0: %s, %v; want 0", cfg.Retention.RawTurns, err)
	}
}

// retrieval.preset and retrieval.personas are checked, naming the key.
func TestRetrievalConfig(t *testing.T) {
	cfg, err := Load(Default(), "", env(map[string]string{"ENGRAM_RETRIEVAL_PRESET": "seed002"}))
	if err != nil || cfg.Retrieval.Preset != "seed002" {
		t.Fatalf("ENGRAM_RETRIEVAL_PRESET: preset %q, %v", cfg.Retrieval.Preset, err)
	}
	for _, c := range []struct {
		r    Retrieval
		want string
	}{
		{Retrieval{Preset: "seed001"}, "retrieval.preset"},
		{Retrieval{Personas: map[string]Persona{"Coach": {Kinds: []string{"rule"}, Boost: 1.2}}}, "lower case"},
		{Retrieval{Personas: map[string]Persona{"coach": {Boost: 1.2}}}, "retrieval.personas.coach.kinds"},
		{Retrieval{Personas: map[string]Persona{"coach": {Kinds: []string{"habit"}, Boost: 1.2}}}, `"habit"`},
		{Retrieval{Personas: map[string]Persona{"coach": {Kinds: []string{"rule"}}}}, "retrieval.personas.coach.boost"},
	} {
		cfg := Default()
		cfg.Retrieval = c.r
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.r, err, c.want)
		}
	}
}
