package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/engramhq/engram/internal/chars"
	"github.com/engramhq/engram/internal/memory"
	"github.com/engramhq/engram/internal/quiet"
)

// memories lists a user's memories through a running engram: what is
// current, what was current at a time (--as-of, by when each version was
// said), or one memory's history with when each change was said and when
// engram learned it (--history ID).
func memories(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("engram memories", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr("ENGRAM_HTTP_ADDR", "127.0.0.1:7420"), "engram HTTP address (env ENGRAM_HTTP_ADDR)")
	ns := fs.String("namespace", "default", "namespace")
	user := fs.String("user", "", "user (required)")
	status := fs.String("status", "", "active (default), pending, superseded, rejected, archived or all")
	asOf := fs.String("as-of", "", "RFC 3339 time: what was current then, by when each version was said")
	history := fs.String("history", "", "a memory id: its history")
	token := fs.String("token", os.Getenv("ENGRAM_TOKEN"), "bearer token (env ENGRAM_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *user == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: engram memories -user USER [-namespace NS] [-status S] [-as-of TIME] [-history ID]")
		return 2
	}
	q := url.Values{"namespace": {*ns}, "user": {*user}}
	path := "/v1/memories"
	switch {
	case *history != "":
		path += "/" + url.PathEscape(*history)
	default:
		if *status != "" {
			q.Set("status", *status)
		}
		if *asOf != "" {
			q.Set("as_of", *asOf)
		}
	}
	var body struct {
		Memories []memory.Memory
		Memory   *memory.Memory
		History  []memory.Change
		Error    *struct{ Code, Message string }
	}
	if code := getJSON(*addr+path+"?"+q.Encode(), *token, &body, stderr); code != 0 {
		return code
	}
	if body.Error != nil {
		fmt.Fprintf(stderr, "engram memories: %s: %s\n", body.Error.Code, body.Error.Message)
		return 1
	}
	const when = "2006-01-02 15:04"
	if body.Memory != nil {
		m := body.Memory
		fmt.Fprintf(stdout, "%s  %s  %s/%s  %s\n  said %s, learned %s\n", m.ID, m.Status, m.Subject, m.Predicate,
			chars.ClipHead(chars.OneLine(m.Content), 100), m.SaidAt.Format(when), m.LearnedAt.Format(when))
		for _, c := range body.History {
			// The note says why (superseded by m_…, a reason); else the
			// content the change left.
			text := c.New
			if c.Note != "" {
				text = c.Note
			}
			fmt.Fprintf(stdout, "  %-10s said %s  learned %s  %s\n", c.Change, c.SaidAt.Format(when), c.Time.Format(when), chars.ClipHead(chars.OneLine(text), 80))
		}
		return 0
	}
	for _, m := range body.Memories {
		fmt.Fprintf(stdout, "%-24s %-10s said %s  learned %s  %s/%s  %s\n", m.ID, m.Status, m.SaidAt.Format(when),
			m.LearnedAt.Format(when), m.Subject, m.Predicate, chars.ClipHead(chars.OneLine(m.Content), 80))
	}
	return 0
}

// getJSON GETs http://addr+path with the token and decodes the JSON body
// into v, error bodies included; it reports a transport failure on stderr
// and returns 1, else 0.
func getJSON(target, token string, v any, stderr io.Writer) int {
	req, err := http.NewRequest(http.MethodGet, "http://"+target, nil)
	if err != nil {
		fmt.Fprintf(stderr, "engram: %v\n", err)
		return 2
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "engram: %v (is engram serve running?)\n", err)
		return 1
	}
	defer quiet.Close(resp.Body)
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		fmt.Fprintf(stderr, "engram: bad response (HTTP %d): %v\n", resp.StatusCode, err)
		return 1
	}
	return 0
}
