package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

const forgetUsage = `Usage:
  engram forget --user U [--namespace N] [--reason R]

Erases a user: every event of theirs leaves the MEMORY stream (their bytes
overwritten in the store), every dead letter of theirs leaves DEADLETTER,
the read model drops and securely deletes their rows, and their cards are
removed. A user.forgotten receipt, with no content, stays on the stream so
a rebuild agrees.

With engram running on the data dir (or, with --nats-url, answering on
--http-addr), the command asks it: DELETE /v1/users/{user} on --http-addr,
with ENGRAM_OPERATOR_TOKEN or the first "*" token of ENGRAM_HTTP_TOKENS.
With engram stopped, it opens the data dir itself.
`

func forget(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram forget", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, forgetUsage); fs.PrintDefaults() }
	var f app.Flags
	f.Register(fs)
	ns := fs.String("namespace", "default", "the user's namespace")
	user := fs.String("user", "", "the user to forget (required)")
	reason := fs.String("reason", "", "why, kept in the receipt (no personal data)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *user == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram forget: %v\n", err)
		return 2
	}
	ctx, stop := signalContext()
	defer stop()
	scope := memory.Scope{Namespace: *ns, User: *user}
	var rep any
	// The engram that holds this data dir's lock is the one to ask; with
	// an external NATS, the one answering on --http-addr.
	unlock, lockErr := app.LockDataDir(cfg.DataDir)
	switch {
	case lockErr == nil && (cfg.NATS.URL == "" || !running(ctx, cfg)):
		rep, err = forgetLocal(ctx, cfg, scope, *reason, stderr)
		unlock()
	case lockErr == nil:
		unlock()
		rep, err = forgetRemote(ctx, cfg, scope, *reason)
	default:
		rep, err = forgetRemote(ctx, cfg, scope, *reason)
	}
	if err != nil {
		fmt.Fprintf(stderr, "engram forget: %v\n", err)
		return 1
	}
	b, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Fprintln(stdout, string(b))
	return 0
}

// running reports whether an engram answers on the configured HTTP address.
func running(ctx context.Context, cfg config.Config) bool {
	if cfg.HTTP.Addr == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+cfg.HTTP.Addr+"/healthz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	quiet.Close(resp.Body) // only whether it answered matters
	return true
}

func operatorToken(cfg config.Config) string {
	if t := os.Getenv("ENGRAM_OPERATOR_TOKEN"); t != "" {
		return t
	}
	for tok, ns := range cfg.HTTP.Tokens {
		if ns == "*" {
			return tok
		}
	}
	return ""
}

func forgetRemote(ctx context.Context, cfg config.Config, scope memory.Scope, reason string) (any, error) {
	u := "http://" + cfg.HTTP.Addr + "/v1/users/" + url.PathEscape(scope.User) + "?" +
		url.Values{"namespace": {scope.Namespace}, "reason": {reason}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, u, nil)
	if err != nil {
		return nil, err
	}
	if tok := operatorToken(cfg); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask the running engram at %s: %w", cfg.HTTP.Addr, err)
	}
	defer quiet.Close(resp.Body)
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("the running engram at %s answered %s: %w", cfg.HTTP.Addr, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := json.Marshal(body["error"])
		return nil, fmt.Errorf("the running engram at %s answered %s: %s", cfg.HTTP.Addr, resp.Status, b)
	}
	return body, nil
}

func forgetLocal(ctx context.Context, cfg config.Config, scope memory.Scope, reason string, stderr io.Writer) (any, error) {
	if cfg.NATS.URL == "" {
		if _, err := os.Stat(cfg.JetStreamDir()); err != nil {
			return nil, fmt.Errorf("no JetStream store at %s (is ENGRAM_DATA_DIR right?): %w", cfg.JetStreamDir(), err)
		}
	}
	cfg.HTTP.Addr, cfg.NATS.Listen = "", ""
	cfg.Log.Level = "warn"
	log, err := app.NewLogger(cfg.Log, stderr)
	if err != nil {
		return nil, err
	}
	a := app.NewOperator(cfg, app.RoleRetriever, log)
	if err := a.Open(ctx); err != nil {
		return nil, err
	}
	rep, ferr := a.Forget(ctx, scope, reason)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return rep, errors.Join(ferr, a.Close(cctx))
}
