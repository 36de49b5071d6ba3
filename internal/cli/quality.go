package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/engramhq/engram/internal/config"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// contextFigures are what the running engram's context blocks held since
// it started (GET /v1/stats): they are counted where the blocks are
// served, not in the read model.
type contextFigures struct {
	Served           uint64  `json:"context_served"`
	RetrievalHitRate float64 `json:"retrieval_hit_rate"`
	MemoryTokenShare float64 `json:"memory_token_share"`
}

// runningContextFigures asks the engram serving cfg's HTTP address for a
// namespace's context figures, with a token of cfg that covers it (or
// ENGRAM_TOKEN); ok is false when none answered.
func runningContextFigures(ctx context.Context, cfg config.Config, namespace, token string) (f contextFigures, ok bool) {
	if cfg.HTTP.Addr == "" {
		return f, false
	}
	if token == "" {
		token = tokenFor(cfg.HTTP.Tokens, namespace)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"http://"+cfg.HTTP.Addr+"/v1/stats?"+url.Values{"namespace": {namespace}}.Encode(), nil)
	if err != nil {
		return f, false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return f, false
	}
	defer quiet.Close(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return f, false
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || json.Unmarshal(b, &f) != nil {
		return f, false
	}
	return f, true
}

// printQuality prints seed 004 §9's figures.
func printQuality(w io.Writer, q memory.Stats, c contextFigures, running bool, addr string) {
	fmt.Fprintln(w, "quality (seed 004 §9):")
	fmt.Fprintf(w, "  confirmation rate   %s  (%d confirmed of %d decided)\n",
		pct(q.ConfirmationRate), q.Confirmed, q.Confirmed+q.Ignored)
	if q.Confirmed == 0 && q.WrongWrites > 0 {
		fmt.Fprintf(w, "  wrong-write rate        -   (%d rejected, none confirmed: rejected / confirmed has no value)\n", q.WrongWrites)
	} else {
		fmt.Fprintf(w, "  wrong-write rate    %s  (%d rejected per %d confirmed)\n", pct(q.WrongWriteRate), q.WrongWrites, q.Confirmed)
	}
	fmt.Fprintf(w, "  superseded soon     %d of %d written, within %g days (updates and corrections; not counted as wrong)\n",
		q.SupersededSoon, q.Written, q.WindowDays)
	if !running {
		fmt.Fprintf(w, "  retrieval hit rate and memory-token share: no running engram answered at %q\n", addr)
		return
	}
	fmt.Fprintf(w, "  retrieval hit rate  %s  (of %d context blocks the running engram served since it started)\n",
		pct(c.RetrievalHitRate), c.Served)
	fmt.Fprintf(w, "  memory-token share  %s  (of the tokens of those blocks)\n", pct(c.MemoryTokenShare))
}

// tokenFor picks a configured token that covers namespace: its own, else
// an all-namespace one; "" when there are none (no authentication).
func tokenFor(tokens map[string]string, namespace string) string {
	keys := make([]string, 0, len(tokens))
	for k := range tokens {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	all := ""
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

func pct(f float64) string { return fmt.Sprintf("%5.1f%%", 100*f) }
