package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"

	"github.com/engramhq/engram/internal/app"
	"github.com/engramhq/engram/internal/config"
)

// stats prints a namespace's counts and memory-quality figures, read from
// a running engram's GET /v1/stats. The address and a token come from the
// same config as engram serve's (flags, ENGRAM_* variables, the config
// file), so no extra flag is needed where serve needed none.
func stats(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f app.Flags
	f.Register(fs)
	ns := fs.String("namespace", "default", "namespace")
	window := fs.Float64("window-days", 7, "a memory ignored or superseded within this many days of being written is a wrong write")
	token := fs.String("token", os.Getenv("ENGRAM_TOKEN"), "bearer token (env ENGRAM_TOKEN; default: a token of the config that covers the namespace)")
	asJSON := fs.Bool("json", false, "print the JSON answer as it is")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: engram stats [-namespace NS] [-window-days N] [-json]")
		return 2
	}
	cfg, err := f.Load(fs, config.Default())
	if err != nil {
		fmt.Fprintf(stderr, "engram stats: %v\n", err)
		return 2
	}
	if cfg.HTTP.Addr == "" {
		fmt.Fprintln(stderr, "engram stats: engram serves no HTTP API here (http.addr is empty); set -http-addr")
		return 2
	}
	if *token == "" {
		*token = tokenFor(cfg.HTTP.Tokens, *ns)
	}
	q := url.Values{"namespace": {*ns}, "window_days": {strconv.FormatFloat(*window, 'f', -1, 64)}}
	req, _ := http.NewRequest(http.MethodGet, "http://"+cfg.HTTP.Addr+"/v1/stats?"+q.Encode(), nil)
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "engram stats: %v (is engram serve running at %s?)\n", err, cfg.HTTP.Addr)
		return 1
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Fprintf(stderr, "engram stats: %v\n", err)
		return 1
	}
	var body struct {
		Namespace              string
		Users, Turns, Episodes int
		Memories               map[string]int
		Confirmed, Ignored     int
		ConfirmationRate       float64 `json:"confirmation_rate"`
		WindowDays             float64 `json:"window_days"`
		Written                int
		WrongWrites            int     `json:"wrong_writes"`
		WrongWriteRate         float64 `json:"wrong_write_rate"`
		ContextServed          int     `json:"context_served"`
		RetrievalHitRate       float64 `json:"retrieval_hit_rate"`
		MemoryTokenShare       float64 `json:"memory_token_share"`
		Error                  *struct{ Code, Message string }
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		fmt.Fprintf(stderr, "engram stats: bad response (%d): %v\n", resp.StatusCode, err)
		return 1
	}
	if body.Error != nil {
		fmt.Fprintf(stderr, "engram stats: %s: %s\n", body.Error.Code, body.Error.Message)
		return 1
	}
	if *asJSON {
		fmt.Fprintf(stdout, "%s\n", raw)
		return 0
	}
	fmt.Fprintf(stdout, "namespace %s\n", body.Namespace)
	fmt.Fprintf(stdout, "  users     %d\n  turns     %d\n  episodes  %d\n  memories  %d\n",
		body.Users, body.Turns, body.Episodes, sum(body.Memories))
	statuses := make([]string, 0, len(body.Memories))
	for s := range body.Memories {
		statuses = append(statuses, s)
	}
	sort.Strings(statuses)
	for _, s := range statuses {
		fmt.Fprintf(stdout, "    %-11s %d\n", s, body.Memories[s])
	}
	fmt.Fprintln(stdout, "quality (seed 004 §9)")
	fmt.Fprintf(stdout, "  confirmation rate   %s  (%d confirmed of %d decided)\n",
		pct(body.ConfirmationRate), body.Confirmed, body.Confirmed+body.Ignored)
	fmt.Fprintf(stdout, "  wrong-write rate    %s  (%d of %d written were ignored or superseded within %g days)\n",
		pct(body.WrongWriteRate), body.WrongWrites, body.Written, body.WindowDays)
	fmt.Fprintf(stdout, "  retrieval hit rate  %s  (of %d context blocks served since engram started)\n",
		pct(body.RetrievalHitRate), body.ContextServed)
	fmt.Fprintf(stdout, "  memory-token share  %s  (of the tokens of those blocks)\n", pct(body.MemoryTokenShare))
	return 0
}

// tokenFor picks a configured token that covers namespace: its own, else
// an all-namespace one; "" when there are none (no authentication).
func tokenFor(tokens map[string]string, namespace string) string {
	all := ""
	keys := make([]string, 0, len(tokens))
	for k := range tokens {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, tok := range keys {
		switch tokens[tok] {
		case namespace:
			return tok
		case "*":
			if all == "" {
				all = tok
			}
		}
	}
	return all
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func pct(f float64) string { return fmt.Sprintf("%5.1f%%", 100*f) }
