// Package config is engram's configuration: one struct with defaults that
// give a working local server, an optional YAML file, and ENGRAM_*
// environment variables that override any key, applied in one function.
//
// It must never log or print secrets (API keys, tokens, passwords).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/events"
	"go.yaml.in/yaml/v3"
)

// Config is everything engram can be told.
type Config struct {
	// DataDir holds the read model, the embedded JetStream store and the
	// rendered cards.
	DataDir string `yaml:"data_dir"`
	HTTP    HTTP   `yaml:"http"`
	NATS    NATS   `yaml:"nats"`
	Log     Log    `yaml:"log"`
	// LLM is the memory model, configured apart from any model the agent
	// uses (seed 001 §9). An empty base URL means no LLM: rules extract.
	LLM LLM `yaml:"llm"`
	// Embed is the optional embeddings endpoint: with a base URL, memories
	// are embedded as they are written and /v1/context adds semantic
	// recall. Empty: full-text only.
	Embed Embed `yaml:"embed"`
	// ContextModel is the model family /v1/context counts tokens for when
	// a request names none.
	ContextModel string  `yaml:"context_model"`
	Extract      Extract `yaml:"extract"`
	// Instance names this process's read model consumer; retrievers that
	// run apart need different names.
	Instance string `yaml:"instance"`
	// Partitions is how many parts the users are split into for the
	// extractors' batchers, the consolidators and the retrievers run
	// apart: each part is held by one instance at a time, so up to this
	// many instances share the work, and a retriever keeps the read model
	// of the parts it holds only (docs/scale.md). It must be the same on
	// every instance.
	Partitions int `yaml:"partitions"`
	// ShutdownTimeout bounds a graceful stop.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// Consolidate configures the consolidator's rules and cards.
	Consolidate Consolidate `yaml:"consolidate"`
	// Retention is how long raw history is kept.
	Retention Retention `yaml:"retention"`
	// Retrieval is what /v1/context answers with when a request does not
	// say.
	Retrieval Retrieval `yaml:"retrieval"`
}

// Retrieval configures the retriever's defaults.
type Retrieval struct {
	// Preset reproduces one seed's retrieval as written for every request
	// that names none: "seed000" (seed 000 §8.1's layout), "seed002"
	// (seed 002's budget, its §5.2 scoring and 5 memories) or "seed004"
	// (seed 004 §5's budget, hybrid scoring and 5 pieces of evidence).
	// Empty: engram's defaults.
	Preset string `yaml:"preset"`
	// Personas are personas a request may name, beside the built-in
	// tech_expert (skill and error ×1.2, seed 000 §5.5) and jarvis (rule,
	// preference and context ×1.2); one of the same name replaces it.
	Personas map[string]Persona `yaml:"personas"`
	// Onboarding asks the agent, in /v1/context, to settle who it and
	// the user are while the user has not (seed 004 §3) for every request
	// that does not say. Off by default: an agent that does not know of
	// identity.confirmed would be asked in every block. The seed004
	// preset turns it on.
	Onboarding bool `yaml:"onboarding"`
}

// Persona weighs up the kinds of memory a persona favours.
type Persona struct {
	Kinds []string `yaml:"kinds"`
	Boost float64  `yaml:"boost"`
}

// Retention configures how long raw history is kept (seeds 000 §4.5 and
// 003 ask for 30 days). What was derived from it (memories, episodes,
// summaries, the profile, history) stays.
type Retention struct {
	// RawTurns is how long a raw turn (turn.recorded, and the turns of a
	// context.compressing) is kept after the stream stored it, in the
	// stream and in every read model alike. 0 keeps them forever. A turn
	// not yet extracted is kept until it is.
	RawTurns time.Duration `yaml:"raw_turns"`
}

// HTTP configures the HTTP API.
type HTTP struct {
	// Addr is where the API listens. Loopback by default; any other address
	// requires Tokens.
	Addr string `yaml:"addr"`
	// Tokens maps a bearer token to the namespace it may use ("*" for all).
	Tokens map[string]string `yaml:"tokens"`
	// AllowedHosts are the names (or addresses) the API answers to in a
	// request's Host, beyond loopback names and Addr's host: the names
	// clients and a reverse proxy reach it by. Any other Host is refused,
	// so that a web page that rebinds its own name to this machine reads
	// nothing. "*" answers any Host, and needs Tokens.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// AdvertiseURL is the base URL (http://host:port) at which the other
	// instances reach this one's API, published with a partitioned
	// retriever's state of its copies: a front forwards a user's request
	// there, on a kept-alive connection, rather than over NATS. Empty
	// advertises Addr when it names a host (the port it is bound to);
	// with an unspecified host (":7421", "0.0.0.0:7421") nothing is
	// advertised, and requests are forwarded over NATS. "none" advertises
	// nothing.
	AdvertiseURL string `yaml:"advertise_url"`
	// MaxEventBytes bounds one event; MaxBatchEvents one batch.
	MaxEventBytes  int `yaml:"max_event_bytes"`
	MaxBatchEvents int `yaml:"max_batch_events"`
	// WaitMemories bounds how long POST /v1/events?wait=memories waits
	// for the rules' reading of its turns; past it, the answer says the
	// reading is still pending.
	WaitMemories time.Duration `yaml:"wait_memories"`
}

// NATS configures JetStream: an embedded server (URL empty) or an external one.
type NATS struct {
	// URL of an external NATS; empty runs an embedded server.
	URL string `yaml:"url"`
	// Listen is where the embedded server accepts outside clients; empty
	// keeps it in-process only.
	Listen string `yaml:"listen"`
	// Sync is JetStream's fsync policy: "always" or an interval ("1s").
	Sync            string        `yaml:"sync"`
	Replicas        int           `yaml:"replicas"`
	DuplicateWindow time.Duration `yaml:"duplicate_window"`
	Creds           string        `yaml:"creds"`
	NKey            string        `yaml:"nkey"`
	// NKeyDir holds a seed per bus user (ingest.nk, retriever.nk,
	// extractor.nk, consolidator.nk, operator.nk, as `engram creds`
	// makes them): with no credentials set, each connection of a process
	// takes its kind's seed from here. Default <data dir>/nats-auth.
	NKeyDir string `yaml:"nkey_dir"`
	// OperatorNKey gives a worker apart the operator's seed for the one
	// thing only the operator may do that it runs: erasing messages
	// (forget over HTTP on an ingest, raw-turn retention on a
	// consolidator). The operator's credential reads and deletes
	// everything: never give it to an ingest facing the internet.
	OperatorNKey string `yaml:"operator_nkey"`
	Token        string `yaml:"token"`
	User         string `yaml:"user"`
	Password     string `yaml:"password"`
	TLSCA        string `yaml:"tls_ca"`
	TLSCert      string `yaml:"tls_cert"`
	TLSKey       string `yaml:"tls_key"`
}

// LLM is an OpenAI-compatible chat-completions endpoint.
type LLM struct {
	BaseURL string        `yaml:"base_url"` // e.g. http://localhost:11434/v1; empty = no LLM
	Model   string        `yaml:"model"`
	APIKey  string        `yaml:"api_key"`
	Timeout time.Duration `yaml:"timeout"`
	// MaxRetryAfter caps how long a rate-limited request waits before its
	// next try, whatever the endpoint's Retry-After says.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
}

// Embed is an OpenAI-compatible embeddings endpoint.
type Embed struct {
	BaseURL string `yaml:"base_url"` // e.g. https://api.openai.com/v1; empty = no vectors
	Model   string `yaml:"model"`
	// APIKey defaults to the LLM's key.
	APIKey string `yaml:"api_key"`
	// Timeout bounds the embedder's requests; QueryTimeout bounds embedding
	// a /v1/context query, after which it answers from full text alone.
	Timeout      time.Duration `yaml:"timeout"`
	QueryTimeout time.Duration `yaml:"query_timeout"`
}

// Extract configures when and how turns become memories (seed 001 §6.2).
type Extract struct {
	QuietGap    time.Duration `yaml:"quiet_gap"`
	TokenCap    int           `yaml:"token_cap"`
	SweepAt     string        `yaml:"sweep_at"`
	MaxAttempts int           `yaml:"max_attempts"` // LLM tries before the rules cover and the request is dead-lettered
	MaskSecrets bool          `yaml:"mask_secrets"`
	// UnmaskedNamespaces opt out of masking at ingest, one by one: their
	// events enter the stream as sent. MaskSecrets false opts every
	// namespace out.
	UnmaskedNamespaces []string `yaml:"unmasked_namespaces"`
	// RulesAtOnce has the rules read each of the user's turns as it
	// arrives, so what they find is a memory within moments; the session's
	// batch (the LLM's, when one is configured) still comes after the quiet
	// gap. Processes that run apart must agree on it.
	RulesAtOnce bool `yaml:"rules_at_once"`
}

// MaskAtIngest reports whether events of namespace ns have their secrets
// masked before they enter the stream.
func (x Extract) MaskAtIngest(ns string) bool {
	return x.MaskSecrets && !slices.Contains(x.UnmaskedNamespaces, ns)
}

// Consolidate configures the consolidator. The schedules themselves
// (daily 03:00, weekly Monday 04:00) are in the rule files.
type Consolidate struct {
	// RulesDir holds the rule files (*.yaml), reloaded when they change.
	// Until it exists, the defaults built into engram are in force; it is
	// loaded when it is created, without a restart.
	RulesDir string `yaml:"rules_dir"`
	// RulesPoll is how often RulesDir is checked for changes.
	RulesPoll time.Duration `yaml:"rules_poll"`
	// CardsDir is where MEMORY.md and USER.md are written, one directory
	// per namespace and user; empty means <data_dir>/cards.
	CardsDir string `yaml:"cards_dir"`
}

// Log configures logging.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // console or json
}

// Default is the zero-config local server.
func Default() Config {
	return Config{
		DataDir: "./data",
		HTTP: HTTP{
			Addr:           "127.0.0.1:7420",
			MaxEventBytes:  1 << 20,
			MaxBatchEvents: 1000,
			WaitMemories:   2 * time.Second,
		},
		NATS: NATS{
			Listen:          "127.0.0.1:4222",
			Sync:            "always",
			Replicas:        1,
			DuplicateWindow: time.Hour,
		},
		Log:      Log{Level: "info", Format: "console"},
		Instance: "local",
		LLM:      LLM{Timeout: 60 * time.Second, MaxRetryAfter: 5 * time.Minute},
		Embed:    Embed{Timeout: 30 * time.Second, QueryTimeout: 2 * time.Second},
		Extract: Extract{QuietGap: 3 * time.Minute, TokenCap: 6000, SweepAt: "03:00", MaxAttempts: 4,
			MaskSecrets: true, RulesAtOnce: true},
		Partitions:      1,
		ShutdownTimeout: 15 * time.Second,
		Consolidate:     Consolidate{RulesDir: "rules", RulesPoll: 2 * time.Second},
	}
}

// Load returns base (usually Default()), overlaid by the YAML file at path
// (if not empty), overlaid by the environment, validated.
func Load(base Config, path string, getenv func(string) (string, bool)) (Config, error) {
	cfg := base
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			return cfg, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if err := cfg.ApplyEnv(getenv); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// ApplyEnv overrides keys from ENGRAM_* variables. A variable that is set
// but empty sets the key to empty (ENGRAM_NATS_LISTEN= keeps NATS
// in-process).
func (c *Config) ApplyEnv(getenv func(string) (string, bool)) error {
	str := map[string]*string{
		"ENGRAM_DATA_DIR":           &c.DataDir,
		"ENGRAM_HTTP_ADDR":          &c.HTTP.Addr,
		"ENGRAM_HTTP_ADVERTISE_URL": &c.HTTP.AdvertiseURL,
		"ENGRAM_NATS_URL":           &c.NATS.URL,
		"ENGRAM_NATS_LISTEN":        &c.NATS.Listen,
		"ENGRAM_NATS_SYNC":          &c.NATS.Sync,
		"ENGRAM_NATS_CREDS":         &c.NATS.Creds,
		"ENGRAM_NATS_NKEY":          &c.NATS.NKey,
		"ENGRAM_NATS_NKEY_DIR":      &c.NATS.NKeyDir,
		"ENGRAM_NATS_OPERATOR_NKEY": &c.NATS.OperatorNKey,
		"ENGRAM_NATS_TOKEN":         &c.NATS.Token,
		"ENGRAM_NATS_USER":          &c.NATS.User,
		"ENGRAM_NATS_PASSWORD":      &c.NATS.Password,
		"ENGRAM_NATS_TLS_CA":        &c.NATS.TLSCA,
		"ENGRAM_NATS_TLS_CERT":      &c.NATS.TLSCert,
		"ENGRAM_NATS_TLS_KEY":       &c.NATS.TLSKey,
		"ENGRAM_LOG_LEVEL":          &c.Log.Level,
		"ENGRAM_LOG_FORMAT":         &c.Log.Format,
		"ENGRAM_INSTANCE":           &c.Instance,
		"ENGRAM_LLM_BASE_URL":       &c.LLM.BaseURL,
		"ENGRAM_LLM_MODEL":          &c.LLM.Model,
		"ENGRAM_LLM_API_KEY":        &c.LLM.APIKey,
		"ENGRAM_EMBED_BASE_URL":     &c.Embed.BaseURL,
		"ENGRAM_EMBED_MODEL":        &c.Embed.Model,
		"ENGRAM_EMBED_API_KEY":      &c.Embed.APIKey,
		"ENGRAM_EXTRACT_SWEEP_AT":   &c.Extract.SweepAt,
		"ENGRAM_RULES_DIR":          &c.Consolidate.RulesDir,
		"ENGRAM_CARDS_DIR":          &c.Consolidate.CardsDir,
		"ENGRAM_CONTEXT_MODEL":      &c.ContextModel,
		"ENGRAM_RETRIEVAL_PRESET":   &c.Retrieval.Preset,
	}
	for name, p := range str {
		if v, ok := getenv(name); ok {
			*p = v
		}
	}
	ints := map[string]*int{
		"ENGRAM_MAX_EVENT_BYTES":      &c.HTTP.MaxEventBytes,
		"ENGRAM_MAX_BATCH_EVENTS":     &c.HTTP.MaxBatchEvents,
		"ENGRAM_NATS_REPLICAS":        &c.NATS.Replicas,
		"ENGRAM_EXTRACT_TOKEN_CAP":    &c.Extract.TokenCap,
		"ENGRAM_EXTRACT_MAX_ATTEMPTS": &c.Extract.MaxAttempts,
		"ENGRAM_PARTITIONS":           &c.Partitions,
	}
	for name, p := range ints {
		if v, ok := getenv(name); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %q is not a number", name, v)
			}
			*p = n
		}
	}
	durs := map[string]*time.Duration{
		"ENGRAM_NATS_DUPLICATE_WINDOW": &c.NATS.DuplicateWindow,
		"ENGRAM_SHUTDOWN_TIMEOUT":      &c.ShutdownTimeout,
		"ENGRAM_LLM_TIMEOUT":           &c.LLM.Timeout,
		"ENGRAM_LLM_MAX_RETRY_AFTER":   &c.LLM.MaxRetryAfter,
		"ENGRAM_EMBED_TIMEOUT":         &c.Embed.Timeout,
		"ENGRAM_EMBED_QUERY_TIMEOUT":   &c.Embed.QueryTimeout,
		"ENGRAM_EXTRACT_QUIET_GAP":     &c.Extract.QuietGap,
		"ENGRAM_RULES_POLL":            &c.Consolidate.RulesPoll,
		"ENGRAM_RETENTION_RAW_TURNS":   &c.Retention.RawTurns,
		"ENGRAM_HTTP_WAIT_MEMORIES":    &c.HTTP.WaitMemories,
	}
	for name, p := range durs {
		if v, ok := getenv(name); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %q is not a duration such as 30s", name, v)
			}
			*p = d
		}
	}
	if v, ok := getenv("ENGRAM_MASK_SECRETS"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("ENGRAM_MASK_SECRETS: %q is not true or false", v)
		}
		c.Extract.MaskSecrets = b
	}
	if v, ok := getenv("ENGRAM_RETRIEVAL_ONBOARDING"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("ENGRAM_RETRIEVAL_ONBOARDING: %q is not true or false", v)
		}
		c.Retrieval.Onboarding = b
	}
	if v, ok := getenv("ENGRAM_EXTRACT_RULES_AT_ONCE"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("ENGRAM_EXTRACT_RULES_AT_ONCE: %q is not true or false", v)
		}
		c.Extract.RulesAtOnce = b
	}
	if v, ok := getenv("ENGRAM_UNMASKED_NAMESPACES"); ok {
		c.Extract.UnmaskedNamespaces = nil
		for _, ns := range strings.Split(v, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				c.Extract.UnmaskedNamespaces = append(c.Extract.UnmaskedNamespaces, ns)
			}
		}
	}
	if v, ok := getenv("ENGRAM_HTTP_ALLOWED_HOSTS"); ok {
		c.HTTP.AllowedHosts = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.HTTP.AllowedHosts = append(c.HTTP.AllowedHosts, h)
			}
		}
	}
	if v, ok := getenv("ENGRAM_HTTP_TOKENS"); ok {
		tokens, err := parseTokens(v)
		if err != nil {
			return fmt.Errorf("ENGRAM_HTTP_TOKENS: %w", err)
		}
		c.HTTP.Tokens = tokens
	}
	return nil
}

// parseTokens reads "token=namespace,token2=*".
func parseTokens(v string) (map[string]string, error) {
	out := map[string]string{}
	for i, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		tok, ns, ok := strings.Cut(part, "=")
		if !ok || tok == "" || ns == "" {
			return nil, fmt.Errorf("entry %d: want token=namespace (namespace * for all)", i+1)
		}
		out[tok] = ns
	}
	return out, nil
}

// Validate names the first bad key.
func (c Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("data_dir: must not be empty")
	}
	if c.HTTP.WaitMemories <= 0 || c.HTTP.WaitMemories > 30*time.Second {
		return fmt.Errorf("http.wait_memories: %v is outside (0, 30s]", c.HTTP.WaitMemories)
	}
	if c.HTTP.Addr != "" {
		host, _, err := net.SplitHostPort(c.HTTP.Addr)
		if err != nil {
			return fmt.Errorf("http.addr: %q is not host:port", c.HTTP.Addr)
		}
		if !IsLoopback(host) && len(c.HTTP.Tokens) == 0 {
			return fmt.Errorf("http.addr: %s is beyond loopback, so http.tokens (ENGRAM_HTTP_TOKENS) must be set", c.HTTP.Addr)
		}
	}
	for _, h := range c.HTTP.AllowedHosts {
		if err := checkAllowedHost(h, len(c.HTTP.Tokens) > 0); err != nil {
			return fmt.Errorf("http.allowed_hosts (ENGRAM_HTTP_ALLOWED_HOSTS): %w", err)
		}
	}
	if err := CheckAdvertiseURL(c.HTTP.AdvertiseURL); err != nil {
		return fmt.Errorf("http.advertise_url (ENGRAM_HTTP_ADVERTISE_URL): %w", err)
	}
	for tok, ns := range c.HTTP.Tokens {
		if len(tok) < 16 {
			return fmt.Errorf("http.tokens: a token for namespace %q is shorter than 16 characters", ns)
		}
	}
	if c.HTTP.MaxEventBytes < 1024 || c.HTTP.MaxEventBytes > 8<<20 {
		return fmt.Errorf("http.max_event_bytes: %d is outside 1024..8388608", c.HTTP.MaxEventBytes)
	}
	if c.HTTP.MaxBatchEvents < 1 || c.HTTP.MaxBatchEvents > 10000 {
		return fmt.Errorf("http.max_batch_events: %d is outside 1..10000", c.HTTP.MaxBatchEvents)
	}
	if c.NATS.Listen != "" {
		if _, _, err := net.SplitHostPort(c.NATS.Listen); err != nil {
			return fmt.Errorf("nats.listen: %q is not host:port", c.NATS.Listen)
		}
	}
	if c.NATS.Sync != "always" {
		if d, err := time.ParseDuration(c.NATS.Sync); err != nil || d <= 0 {
			return fmt.Errorf("nats.sync: %q: want \"always\" or a positive duration such as 1s", c.NATS.Sync)
		}
	}
	if c.NATS.Replicas < 1 || c.NATS.Replicas > 5 {
		return fmt.Errorf("nats.replicas: %d is outside 1..5", c.NATS.Replicas)
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log.level: %q: want debug, info, warn or error", c.Log.Level)
	}
	switch c.Log.Format {
	case "console", "json":
	default:
		return fmt.Errorf("log.format: %q: want console or json", c.Log.Format)
	}
	if c.LLM.BaseURL != "" {
		if !strings.HasPrefix(c.LLM.BaseURL, "http://") && !strings.HasPrefix(c.LLM.BaseURL, "https://") {
			return fmt.Errorf("llm.base_url: %q must start with http:// or https://", c.LLM.BaseURL)
		}
		if c.LLM.Model == "" {
			return errors.New("llm.model: required when llm.base_url is set (ENGRAM_LLM_MODEL)")
		}
	}
	if c.LLM.Timeout <= 0 {
		return errors.New("llm.timeout: must be positive")
	}
	if c.LLM.MaxRetryAfter < 0 {
		return errors.New("llm.max_retry_after: must not be negative (ENGRAM_LLM_MAX_RETRY_AFTER)")
	}
	if c.Embed.BaseURL != "" {
		if !strings.HasPrefix(c.Embed.BaseURL, "http://") && !strings.HasPrefix(c.Embed.BaseURL, "https://") {
			return fmt.Errorf("embed.base_url: %q must start with http:// or https://", c.Embed.BaseURL)
		}
		if c.Embed.Model == "" {
			return errors.New("embed.model: required when embed.base_url is set (ENGRAM_EMBED_MODEL)")
		}
		if len(c.Embed.Model) > events.MaxEmbeddingModelBytes {
			return fmt.Errorf("embed.model: longer than %d bytes", events.MaxEmbeddingModelBytes)
		}
	}
	if c.Embed.Timeout <= 0 || c.Embed.QueryTimeout <= 0 {
		return errors.New("embed.timeout, embed.query_timeout: must be positive")
	}
	if c.Extract.QuietGap <= 0 {
		return errors.New("extract.quiet_gap: must be positive")
	}
	if c.Extract.TokenCap < 100 {
		return fmt.Errorf("extract.token_cap: %d is below 100", c.Extract.TokenCap)
	}
	if _, err := time.Parse("15:04", c.Extract.SweepAt); err != nil {
		return fmt.Errorf("extract.sweep_at: %q is not HH:MM", c.Extract.SweepAt)
	}
	if c.Extract.MaxAttempts < 1 || c.Extract.MaxAttempts > 20 {
		return fmt.Errorf("extract.max_attempts: %d is outside 1..20", c.Extract.MaxAttempts)
	}
	switch c.Retrieval.Preset {
	case "", "seed000", "seed002", "seed004":
	default:
		return fmt.Errorf("retrieval.preset: %q: want seed000, seed002, seed004 or empty (ENGRAM_RETRIEVAL_PRESET)", c.Retrieval.Preset)
	}
	for name, p := range c.Retrieval.Personas {
		if name == "" || strings.ToLower(name) != name {
			return fmt.Errorf("retrieval.personas: %q: a persona's name is lower case and not empty", name)
		}
		if len(p.Kinds) == 0 {
			return fmt.Errorf("retrieval.personas.%s.kinds: name at least one kind of memory", name)
		}
		for _, k := range p.Kinds {
			if !slices.Contains(events.Kinds(), k) {
				return fmt.Errorf("retrieval.personas.%s.kinds: %q is not one of %s", name, k, strings.Join(events.Kinds(), ", "))
			}
		}
		if p.Boost <= 0 || p.Boost > 10 {
			return fmt.Errorf("retrieval.personas.%s.boost: %v is outside (0, 10]", name, p.Boost)
		}
	}
	if c.Consolidate.RulesPoll <= 0 {
		return errors.New("consolidate.rules_poll: must be positive")
	}
	if c.Retention.RawTurns != 0 && c.Retention.RawTurns < time.Second {
		return fmt.Errorf("retention.raw_turns: %s is below 1s: want 0 (keep forever) or an age such as 720h (ENGRAM_RETENTION_RAW_TURNS)",
			c.Retention.RawTurns)
	}
	if c.Instance == "" {
		return errors.New("instance: must not be empty")
	}
	if i := strings.IndexFunc(c.Instance, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}); i >= 0 {
		return fmt.Errorf("instance: %q holds %q: use letters, digits, '-' and '_' only (ENGRAM_INSTANCE): "+
			"the name is part of this instance's consumer and key names on the bus", c.Instance, c.Instance[i:i+1])
	}
	if c.Partitions < 1 || c.Partitions > 64 {
		return fmt.Errorf("partitions: %d is outside 1..64", c.Partitions)
	}
	if c.ShutdownTimeout <= 0 {
		return errors.New("shutdown_timeout: must be positive")
	}
	return nil
}

// checkAllowedHost refuses an http.allowed_hosts entry that is not a
// host name or address as a Host header carries it, and "*" without
// tokens.
func checkAllowedHost(h string, tokens bool) error {
	if h == "*" {
		if !tokens {
			return errors.New("\"*\" answers any Host, so a web page that rebinds its name to this machine could " +
				"read and write; it needs http.tokens (ENGRAM_HTTP_TOKENS)")
		}
		return nil
	}
	if ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); ip != nil {
		return nil
	}
	if len(h) > 253 {
		return fmt.Errorf("%.40q…: longer than a host name can be", h)
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return fmt.Errorf("%q: want a host name or address alone, such as memory.example.com or 10.0.0.5, "+
				"without scheme, port or path (any port is answered)", h)
		}
	}
	return nil
}

// Hosts are the Host names the API answers to beyond loopback ones:
// AllowedHosts, Addr's host when it names one, and AdvertiseURL's host,
// which the other instances name in the requests they forward.
func (h HTTP) Hosts() []string {
	out := append([]string(nil), h.AllowedHosts...)
	if host, _, err := net.SplitHostPort(h.Addr); err == nil && host != "" {
		out = append(out, host)
	}
	if u, err := url.Parse(h.AdvertiseURL); err == nil && h.AdvertiseURL != NoAdvertise && u.Hostname() != "" {
		out = append(out, u.Hostname())
	}
	return out
}

// NoAdvertise, as http.advertise_url, advertises no address.
const NoAdvertise = "none"

// Advertised is the base URL the other instances reach this one's API
// at, the API being bound to bound (its listener's address, whose port
// may have been chosen by the system); "" when none is to be advertised.
func (h HTTP) Advertised(bound string) string {
	switch h.AdvertiseURL {
	case NoAdvertise:
		return ""
	case "":
	default:
		return strings.TrimSuffix(h.AdvertiseURL, "/")
	}
	host, _, err := net.SplitHostPort(h.Addr)
	if err != nil || host == "" {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return ""
	}
	_, port, err := net.SplitHostPort(bound)
	if err != nil {
		return ""
	}
	return "http://" + net.JoinHostPort(host, port)
}

// CheckAdvertiseURL refuses an http.advertise_url that is not a base
// URL: scheme http or https, a host, nothing after it.
func CheckAdvertiseURL(v string) error {
	if v == "" || v == NoAdvertise {
		return nil
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %w", v, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: want http:// or https:// and the host and port the other instances reach this one at", v)
	case u.Hostname() == "":
		return fmt.Errorf("%q names no host", v)
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("%q: want a base URL, scheme, host and port alone (no path, query or user)", v)
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("%q: %s is no address another instance can reach", v, u.Hostname())
	}
	return nil
}

// IsLoopback reports whether host only reaches this machine.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Paths under DataDir.
func (c Config) ReadModelPath() string { return filepath.Join(c.DataDir, "engram.db") }

// ReadPartitionPath is where a partitioned retriever keeps its copy of
// partition p of n: engram-<p+1>of<n>.db, beside where the whole read
// model would be.
func (c Config) ReadPartitionPath(p, n int) string {
	return filepath.Join(c.DataDir, fmt.Sprintf("engram-%dof%d.db", p+1, n))
}

// CardsPath is where the cards are written.
func (c Config) CardsPath() string {
	if c.Consolidate.CardsDir != "" {
		return c.Consolidate.CardsDir
	}
	return filepath.Join(c.DataDir, "cards")
}

// JetStreamDir is the embedded server's store.
func (c Config) JetStreamDir() string { return filepath.Join(c.DataDir, "nats") }
